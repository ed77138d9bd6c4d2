package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
)

// hostFixedKeys are the keys a model may never pass, at any depth: where a
// memory lives and how far a read sees belong to the host.
var hostFixedKeys = [...]string{"namespace", "reach"}

// decodeArguments parses a tool call's raw arguments into a JSON tree (numbers
// kept as json.Number). Absent or null arguments read as an empty object.
func decodeArguments(tool string, raw json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, invalid(tool, "arguments must be a json object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(tool, "arguments must be a json object")
	}
	return obj, nil
}

// scanHostFixed looks for a host-fixed key anywhere in the argument tree,
// breadth first and in byte order of keys at each level, so the shallowest
// offender is the one named. Keys under arrays are named with "[]", as the
// reader names a turn's fields (`conversation.turns[].reach`).
func scanHostFixed(tool string, root map[string]any) error {
	queue := []scanNode{{"", root}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		keys := sortedKeys(n.obj)
		for _, k := range keys {
			if slices.Contains(hostFixedKeys[:], k) {
				return invalid(tool, "`"+n.path+k+"` is fixed by the host and cannot be passed to a memory tool")
			}
		}
		for _, k := range keys {
			queue = appendObjects(queue, n.path+k, n.obj[k])
		}
	}
	return nil
}

// scanNode is one object of the argument tree and the path naming its keys.
type scanNode struct {
	path string
	obj  map[string]any
}

// appendObjects queues the objects reachable from v without passing through
// another object: v itself, or the objects inside (nested) arrays.
func appendObjects(queue []scanNode, path string, v any) []scanNode {
	switch x := v.(type) {
	case map[string]any:
		return append(queue, scanNode{path + ".", x})
	case []any:
		for _, e := range x {
			queue = appendObjects(queue, path+"[]", e)
		}
	}
	return queue
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// invalid is an InvalidRequest prefixed with the tool's name.
func invalid(tool, message string) error {
	return &contract.Error{Kind: contract.KindInvalidRequest, Message: tool + ": " + message}
}

// args is one JSON object of a tool's arguments, read strictly: every accessor
// refuses a value of the wrong type with the field's full path.
type args struct {
	tool string
	// path prefixes every field name in errors: "" at the top, "filter.", ...
	path string
	obj  map[string]any
}

// parseArgs reads the top-level arguments, accepting only allowed keys.
func parseArgs(tool string, obj map[string]any, allowed []string) (args, error) {
	a := args{tool: tool, obj: obj}
	return a, a.checkKeys(allowed)
}

// checkKeys refuses a host-fixed key first, then any key not allowed.
func (a args) checkKeys(allowed []string) error {
	keys := sortedKeys(a.obj)
	for _, k := range keys {
		if slices.Contains(hostFixedKeys[:], k) {
			return a.fieldError(k, "is fixed by the host and cannot be passed to a memory tool")
		}
	}
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return a.fieldError(k, "is not an argument of this tool")
		}
	}
	return nil
}

// fieldError is `{tool}: `{path}{key}` {problem}`.
func (a args) fieldError(key, problem string) error {
	return invalid(a.tool, "`"+a.path+key+"` "+problem)
}

// get returns the value at key; an explicit null is absent.
func (a args) get(key string) (any, bool) {
	v, ok := a.obj[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func (a args) has(key string) bool {
	_, ok := a.get(key)
	return ok
}

// object is the nested object at key, accepting only allowed keys; ok is false
// when it is absent. path names its fields in errors.
func (a args) object(key, path string, allowed []string) (args, bool, error) {
	v, ok := a.get(key)
	if !ok {
		return args{}, false, nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return args{}, false, a.fieldError(key, "must be an object")
	}
	nested := args{tool: a.tool, path: path, obj: obj}
	return nested, true, nested.checkKeys(allowed)
}

// element reads one element of the array at key as an object.
func (a args) element(key string, v any, path string, allowed []string) (args, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return args{}, a.fieldError(key, "must hold only objects")
	}
	e := args{tool: a.tool, path: path, obj: obj}
	return e, e.checkKeys(allowed)
}

// str is an optional string.
func (a args) str(key string) (*string, error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return nil, a.fieldError(key, "must be a string")
	}
	return &s, nil
}

// requiredStr is a present, non-blank string.
func (a args) requiredStr(key string) (string, error) {
	s, err := a.str(key)
	if err != nil {
		return "", err
	}
	if s == nil || strings.TrimSpace(*s) == "" {
		return "", a.fieldError(key, "is required and must not be blank")
	}
	return *s, nil
}

// count is an integer in 1..max, def when absent. A number written with a
// fraction or an exponent is refused even when integral, as the reference does.
func (a args) count(key string, def, max int) (int, error) {
	v, ok := a.get(key)
	if !ok {
		return def, nil
	}
	bad := a.fieldError(key, "must be an integer from 1 to "+strconv.Itoa(max))
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, bad
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil || u < 1 || u > uint64(max) {
		return 0, bad
	}
	return int(u), nil
}

// unit is a number in 0..1, def when absent.
func (a args) unit(key string, def float32) (float32, error) {
	v, ok := a.get(key)
	if !ok {
		return def, nil
	}
	bad := a.fieldError(key, "must be a number from 0 to 1")
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, bad
	}
	f, err := n.Float64()
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, bad
	}
	return float32(f), nil
}

// strs is an optional array of strings; nil when absent.
func (a args) strs(key string) ([]string, error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, a.fieldError(key, "must be an array of strings")
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			return nil, a.fieldError(key, "must be an array of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// array is an optional array; nil when absent.
func (a args) array(key string) ([]any, error) {
	v, ok := a.get(key)
	if !ok {
		return nil, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, a.fieldError(key, "must be an array")
	}
	return arr, nil
}

// oneOf is an optional string that must be one of choices; ok is false when absent.
func (a args) oneOf(key string, choices []string) (string, bool, error) {
	s, err := a.str(key)
	if err != nil || s == nil {
		return "", false, err
	}
	if !slices.Contains(choices, *s) {
		return "", false, a.fieldError(key, "must be one of "+strings.Join(choices, ", "))
	}
	return *s, true, nil
}

// timestamp is an optional RFC 3339 instant.
func (a args) timestamp(key string) (*time.Time, error) {
	s, err := a.str(key)
	if err != nil || s == nil {
		return nil, err
	}
	t, perr := contract.ParseTime(*s)
	if perr != nil {
		return nil, a.fieldError(key, "must be an rfc 3339 timestamp")
	}
	return &t, nil
}

// modelFilter reads the model-facing filter at key: the twelve fields of
// filterFields, never a reach (the caller confines it to the scope).
func (a args) modelFilter(key string) (contract.MetaFilter, error) {
	var f contract.MetaFilter
	fa, ok, err := a.object(key, key+".", filterFields[:])
	if err != nil || !ok {
		return f, err
	}
	kinds, err := fa.strs("kinds")
	if err != nil {
		return f, err
	}
	for _, k := range kinds {
		kind, ok := contract.ParseItemKind(k)
		if !ok {
			return f, fa.fieldError("kinds", "`"+k+"` is not an item kind")
		}
		f.Kinds = append(f.Kinds, kind)
	}
	sources, err := fa.strs("sources")
	if err != nil {
		return f, err
	}
	for _, s := range sources {
		src, ok := contract.ParseSourceKind(s)
		if !ok {
			return f, fa.fieldError("sources", "`"+s+"` is not a source kind")
		}
		f.Sources = append(f.Sources, src)
	}
	if f.TagsAny, err = fa.strs("tags_any"); err != nil {
		return f, err
	}
	if len(f.TagsAny) == 0 {
		f.TagsAny = nil
	}
	for _, field := range []struct {
		key string
		dst **string
	}{
		{"workspace", &f.Workspace}, {"folder", &f.Folder}, {"file_path", &f.FilePath}, {"repo", &f.Repo},
		{"url", &f.URL}, {"thread_id", &f.ThreadID}, {"agent_id", &f.AgentID},
	} {
		if *field.dst, err = fa.str(field.key); err != nil {
			return f, err
		}
	}
	if f.ObservedAfter, err = fa.timestamp("observed_after"); err != nil {
		return f, err
	}
	if f.ObservedBefore, err = fa.timestamp("observed_before"); err != nil {
		return f, err
	}
	return f, nil
}

// itemIDs reads the required id list at key: 1..200 non-blank strings,
// duplicates dropped, first order kept.
func (a args) itemIDs(key string) ([]string, error) {
	raw, err := a.strs(key)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 || len(raw) > contract.MaxGetIDs {
		return nil, a.fieldError(key, "must list from 1 to "+strconv.Itoa(contract.MaxGetIDs)+" ids")
	}
	ids := make([]string, 0, len(raw))
	for _, id := range raw {
		if strings.TrimSpace(id) == "" {
			return nil, invalid(a.tool, "`"+key+"` must not hold a blank id")
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// timeHint reads `refers_to`: {from: YYYY-MM-DD, to?} in the scope's zone;
// nil when the model passed none. `to` defaults to `from`.
func (a args) timeHint(key, zone string) (*contract.TimeHint, error) {
	ra, ok, err := a.object(key, key+".", []string{"from", "to"})
	if err != nil || !ok {
		return nil, err
	}
	day := func(field string) (string, bool, error) {
		s, err := ra.str(field)
		if err != nil || s == nil {
			return "", false, err
		}
		d := strings.TrimSpace(*s)
		if _, perr := time.Parse("2006-01-02", d); perr != nil {
			return "", false, ra.fieldError(field, "must be a date as YYYY-MM-DD")
		}
		return d, true, nil
	}
	from, ok, err := day("from")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ra.fieldError("from", "is required")
	}
	to, ok, err := day("to")
	if err != nil {
		return nil, err
	}
	if !ok {
		to = from
	}
	if to < from {
		return nil, ra.fieldError("to", "must not be before `from`")
	}
	h := &contract.TimeHint{From: from, To: to}
	if zone != "" {
		h.Zone = &zone
	}
	return h, nil
}
