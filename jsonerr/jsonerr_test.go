package jsonerr

import (
	"encoding/json"
	"testing"
)

func TestText(t *testing.T) {
	var obj struct {
		N int      `json:"n"`
		S []string `json:"s"`
	}
	var n int
	tests := []struct {
		name string
		data string
		into any
		want string
	}{
		{"cut short names the byte", `{"n":`, &obj, "unexpected end of JSON input (at byte 5)"},
		{"bad syntax names the byte", `{"n" 1}`, &obj, "invalid character '1' after object key (at byte 6)"},
		{"field of the wrong type", `{"n":"x"}`, &obj, `field "n" must be a number, not string`},
		{"array field", `{"s":{}}`, &obj, `field "s" must be an array, not object`},
		{"whole value of the wrong type", `"x"`, &n, "expected a number, not string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.data), tt.into)
			if err == nil {
				t.Fatal("decoding did not fail")
			}
			if got := Text(err); got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTypeName(t *testing.T) {
	for kind, want := range map[string]string{
		"string": "a string", "slice": "an array", "array": "an array", "struct": "an object", "map": "an object",
		"ptr": "an object", "bool": "a boolean", "int64": "a number", "uint8": "a number", "float32": "a number",
		"chan": "chan",
	} {
		if got := TypeName(kind); got != want {
			t.Errorf("TypeName(%q) = %q, want %q", kind, got, want)
		}
	}
}
