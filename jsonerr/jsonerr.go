// Package jsonerr words a JSON decoding error for the person who wrote the
// JSON: the byte a syntax error is at, and "a string" or "an object" where
// encoding/json names Go types. The CLI's flags, stdin and import lines all
// report their JSON errors through it.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Text is a decoding error without Go type names where possible.
func Text(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", typ.Field, TypeName(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("expected %s, not %s", TypeName(typ.Type.Kind().String()), typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// TypeName is the JSON word for a Go kind (reflect.Kind's String): "a
// string", "an array", "an object", "a boolean", "a number".
func TypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "bool":
		return "a boolean"
	}
	if strings.HasPrefix(goKind, "int") || strings.HasPrefix(goKind, "uint") || strings.HasPrefix(goKind, "float") {
		return "a number"
	}
	return goKind
}
