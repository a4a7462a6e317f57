// Package strictjson is the one strict decoder of the JSON people write for the
// guard (policy files, the "extend" of a resume or a signed answer), shared
// by packages interceptor and interceptor/protocol.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The guard's JSON forms written by people (policy files, the "extend" of a
// resume) are decoded by one strict decoder, driven by the Go types
// themselves: a field's JSON name is its json tag, or its Go name with a
// lower-case first letter; func fields have none. Unlike encoding/json it
// rejects unknown keys (matched exactly, not case-insensitively), reads
// every time.Duration as a Go duration string ("90s", "10m", "1h30m") and
// never as a number of nanoseconds, and names the JSON path of the first
// bad field. Decoding overlays: a key absent from the JSON, or null, keeps
// the destination's value; an object decoded into a map entry or a pointer
// merges into a copy of the existing value.

// FieldError is a decoding error at a JSON path ("nodes.Verify.maxRuntime").
type FieldError struct {
	Path string // "" for the whole document
	Msg  string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
)

// Decode decodes the JSON value data into dst (addressable) at path.
func Decode(path string, data []byte, dst reflect.Value) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return &FieldError{Path: path, Msg: "empty, want a JSON value"}
	}
	if string(data) == "null" {
		return nil
	}
	t := dst.Type()
	switch {
	case t == durationType:
		d, err := parseDuration(data)
		if err != nil {
			return &FieldError{Path: path, Msg: err.Error()}
		}
		dst.SetInt(int64(d))
		return nil
	case t.Kind() == reflect.Pointer:
		v := reflect.New(t.Elem())
		if !dst.IsNil() {
			v.Elem().Set(dst.Elem())
		}
		if err := Decode(path, data, v.Elem()); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	case reflect.PointerTo(t).Implements(unmarshalerType) && t.Kind() != reflect.Struct:
		// A type that decodes itself; structs are walked here even when they
		// have an UnmarshalJSON that calls back into Decode.
		if err := dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
			return &FieldError{Path: path, Msg: err.Error()}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, err := jsonObject(path, data)
		if err != nil {
			return err
		}
		fields := jsonFields(t)
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			i, ok := fields[key]
			if !ok {
				return &FieldError{Path: path, Msg: unknownField(key, fields)}
			}
			if err := Decode(joinPath(path, key), obj[key], dst.Field(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		obj, err := jsonObject(path, data)
		if err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(t, dst.Len()+len(obj))
		for k, v := range dst.Seq2() {
			m.SetMapIndex(k, v) // a copy: the caller's map is not modified
		}
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			if strings.TrimSpace(key) == "" {
				return &FieldError{Path: path, Msg: "empty key"}
			}
			v := reflect.New(t.Elem()).Elem()
			if old := m.MapIndex(reflect.ValueOf(key)); old.IsValid() {
				v.Set(old)
			}
			if err := Decode(joinPath(path, key), obj[key], v); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(key), v)
		}
		dst.Set(m)
		return nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			// Bytes (a public key) are a base64 string, as encoding/json has them.
			b := reflect.New(t)
			if err := json.Unmarshal(data, b.Interface()); err != nil {
				return &FieldError{Path: path, Msg: "want a base64 string, got " + truncateJSON(data)}
			}
			dst.Set(b.Elem())
			return nil
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(data, &arr); err != nil {
			return &FieldError{Path: path, Msg: "want a JSON array, got " + jsonKind(data)}
		}
		s := reflect.MakeSlice(t, len(arr), len(arr)) // a list replaces, never merges
		for i, item := range arr {
			if err := Decode(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	}
	if err := json.Unmarshal(data, dst.Addr().Interface()); err != nil {
		return &FieldError{Path: path, Msg: fmt.Sprintf("want %s, got %s", kindName(t.Kind()), truncateJSON(data))}
	}
	return nil
}

// parseDuration reads a JSON duration string. A bare number is refused:
// nanoseconds are never what a person writing "600" means.
func parseDuration(data []byte) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, fmt.Errorf("want a duration string such as \"90s\" or \"10m\", got %s", truncateJSON(data))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want Go syntax such as \"90s\", \"10m\" or \"1h30m\")", s)
	}
	return d, nil
}

// Encode is Decode's inverse: it returns a value for
// json.Marshal with the same field names, durations as strings, and zero
// fields and func fields left out.
func Encode(v reflect.Value) any {
	t := v.Type()
	switch {
	case t == durationType:
		return time.Duration(v.Int()).String()
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return Encode(v.Elem())
	case t.Implements(marshalerType) && t.Kind() != reflect.Struct:
		return v.Interface()
	}
	switch t.Kind() {
	case reflect.Struct:
		out := map[string]any{}
		for name, i := range jsonFields(t) {
			if f := v.Field(i); !f.IsZero() {
				out[name] = Encode(f)
			}
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		for k, e := range v.Seq2() {
			out[k.String()] = Encode(e)
		}
		return out
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return v.Interface() // base64, as Decode reads it
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = Encode(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

// jsonFields maps a struct's JSON names to field indexes.
func jsonFields(t reflect.Type) map[string]int {
	fields := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() == reflect.Func {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = LowerFirst(f.Name)
		}
		fields[name] = i
	}
	return fields
}

// LowerFirst is a Go field name as its JSON name when it has no tag.
func LowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func jsonObject(path string, data []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, &FieldError{Path: path, Msg: "want a JSON object, got " + jsonKind(data)}
	}
	return obj, nil
}

// unknownField describes an unknown key, suggesting the closest known one.
func unknownField(key string, fields map[string]int) string {
	best, bestDist := "", len(key)/2+2
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if d := editDistance(strings.ToLower(key), strings.ToLower(name)); d < bestDist {
			best, bestDist = name, d
		}
	}
	msg := fmt.Sprintf("unknown field %q", key)
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// SyntaxProblem describes invalid JSON with its line and column.
func SyntaxProblem(data []byte) error {
	// A RawMessage checks the syntax and converts nothing: a number out of
	// float64's range (1e999) is left for the field's own decoding, which
	// names its path.
	var v json.RawMessage
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	offset := min(max(se.Offset-1, 0), int64(len(data))) // Offset is just past the bad byte
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, se)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return k.String()
}

func jsonKind(data []byte) string {
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number (" + truncateJSON(data) + ")"
}

func truncateJSON(data []byte) string {
	return Truncate(string(data), 40)
}

// Truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
