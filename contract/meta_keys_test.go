package contract

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestKnownMetaKeysAreTheOnesMetaReads(t *testing.T) {
	typ := reflect.TypeOf(rawMeta{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !knownMetaKey(name) {
			t.Errorf("meta reads %q but knownMetaKey does not know it", name)
		}
	}
	if knownMetaKey("bogus") {
		t.Error("knownMetaKey knows bogus")
	}
}

func TestUnknownMetaKeys(t *testing.T) {
	for _, c := range []struct {
		item string
		want []string
	}{
		{`{"type":"document","body":{"text":"x"},"meta":{"bogus":1,"tags":["a"],"colour":{"r":1}}}`, []string{"bogus", "colour"}},
		{`{"type":"document","body":{"text":"x"},"meta":{"tags":["a"]}}`, nil},
		{`{"type":"document","body":{"text":"meta"}}`, nil},
		{`{"type":"document","meta":[1]}`, nil},
	} {
		if _, got := ItemKeys([]byte(c.item)); !slices.Equal(got, c.want) {
			t.Errorf("ItemKeys(%s) unknown meta = %v, want %v", c.item, got, c.want)
		}
	}
}
