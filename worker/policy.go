package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/workflows"
)

// policyFile is the JSON form of the guard's options read by --policy. Every
// field is optional: a field present in the file replaces the samples'
// value (workflows.GuardOptions), an absent one keeps it. A node present in
// "nodes" is merged field by field into the samples' options for that
// node. Durations are Go duration strings ("90s", "10m", "1h30m"). A
// threshold of 0 means the guard's default. Unknown fields are rejected.
type policyFile struct {
	MaxCallsPerNode        *int                   `json:"maxCallsPerNode"`
	MaxNodeRuntime         *duration              `json:"maxNodeRuntime"`
	MaxTotalCalls          *int                   `json:"maxTotalCalls"`
	MaxCost                *float64               `json:"maxCost"`
	MaxCycleIterations     *int                   `json:"maxCycleIterations"`
	MaxCycleRuntime        *duration              `json:"maxCycleRuntime"`
	MaxCycleCost           *float64               `json:"maxCycleCost"`
	MaxEdgeWithoutProgress *int                   `json:"maxEdgeWithoutProgress"`
	RepeatThreshold        *int                   `json:"repeatThreshold"`
	ErrorRepeatThreshold   *int                   `json:"errorRepeatThreshold"`
	StallIterations        *int                   `json:"stallIterations"`
	NoImproveIterations    *int                   `json:"noImproveIterations"`
	OscillationPeriods     *int                   `json:"oscillationPeriods"`
	MaxOscillationPeriod   *int                   `json:"maxOscillationPeriod"`
	Window                 *int                   `json:"window"`
	IgnoreFields           *[]string              `json:"ignoreFields"`
	Nodes                  map[string]*nodePolicy `json:"nodes"`
	Graph                  *[]policyEdge          `json:"graph"`

	OnHalt            *string   `json:"onHalt"`
	PauseTimeout      *duration `json:"pauseTimeout"`
	OnPauseTimeout    *string   `json:"onPauseTimeout"`
	MaxPayloadBytes   *int      `json:"maxPayloadBytes"`
	HaltSignalTimeout *duration `json:"haltSignalTimeout"`
}

// nodePolicy is the JSON form of interceptor.NodeOptions.
type nodePolicy struct {
	MaxCalls       *int      `json:"maxCalls"`
	MaxRuntime     *duration `json:"maxRuntime"`
	Exempt         *bool     `json:"exempt"`
	IgnoreFields   *[]string `json:"ignoreFields"`
	ProgressFields *[]string `json:"progressFields"`
	MetricField    *string   `json:"metricField"`
	HigherIsBetter *bool     `json:"higherIsBetter"`
	CostField      *string   `json:"costField"`
}

// policyEdge is the JSON form of interceptor.Edge.
type policyEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"90s\" or \"10m\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (want Go syntax such as \"90s\", \"10m\" or \"1h30m\")", s)
	}
	*d = duration(v)
	return nil
}

// policyError is an invalid policy file.
type policyError struct {
	path  string // the file
	field string // JSON path of the field, e.g. "nodes.Verify.maxCalls"; "" for the whole file
	msg   string
}

func (e *policyError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("policy file %s: %s", e.path, e.msg)
	}
	return fmt.Sprintf("policy file %s: %s: %s", e.path, e.field, e.msg)
}

// loadPolicy reads and strictly decodes a policy file.
func loadPolicy(path string) (*policyFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &policyError{path: path, msg: errors.Unwrap(err).Error()}
	}
	data = bytes.TrimSpace(data)
	var syntax any
	if err := json.Unmarshal(data, &syntax); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset-1) // Offset is just past the bad byte
			return nil, &policyError{path: path, msg: fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)}
		}
		if len(data) > 0 {
			return nil, &policyError{path: path, msg: "invalid JSON: " + err.Error()}
		}
	}
	var p policyFile
	if err := decodeStrict("", data, reflect.ValueOf(&p).Elem()); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return nil, &policyError{path: path, field: fe.path, msg: fe.msg}
		}
		return nil, &policyError{path: path, msg: err.Error()}
	}
	return &p, nil
}

// apply overlays the file onto o.
func (p *policyFile) apply(o *interceptor.Options) {
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setDur := func(dst *time.Duration, v *duration) {
		if v != nil {
			*dst = time.Duration(*v)
		}
	}
	setFloat := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&o.MaxCallsPerNode, p.MaxCallsPerNode)
	setDur(&o.MaxNodeRuntime, p.MaxNodeRuntime)
	setInt(&o.MaxTotalCalls, p.MaxTotalCalls)
	setFloat(&o.MaxCost, p.MaxCost)
	setInt(&o.MaxCycleIterations, p.MaxCycleIterations)
	setDur(&o.MaxCycleRuntime, p.MaxCycleRuntime)
	setFloat(&o.MaxCycleCost, p.MaxCycleCost)
	setInt(&o.MaxEdgeWithoutProgress, p.MaxEdgeWithoutProgress)
	setInt(&o.RepeatThreshold, p.RepeatThreshold)
	setInt(&o.ErrorRepeatThreshold, p.ErrorRepeatThreshold)
	setInt(&o.StallIterations, p.StallIterations)
	setInt(&o.NoImproveIterations, p.NoImproveIterations)
	setInt(&o.OscillationPeriods, p.OscillationPeriods)
	setInt(&o.MaxOscillationPeriod, p.MaxOscillationPeriod)
	setInt(&o.Window, p.Window)
	if p.IgnoreFields != nil {
		o.IgnoreFields = append([]string(nil), *p.IgnoreFields...)
	}
	if len(p.Nodes) > 0 {
		nodes := make(map[string]interceptor.NodeOptions, len(o.Nodes)+len(p.Nodes))
		for name, n := range o.Nodes {
			nodes[name] = n
		}
		for name, np := range p.Nodes {
			if np == nil {
				continue
			}
			n := nodes[name]
			setInt(&n.MaxCalls, np.MaxCalls)
			setDur(&n.MaxRuntime, np.MaxRuntime)
			if np.Exempt != nil {
				n.Exempt = *np.Exempt
			}
			if np.IgnoreFields != nil {
				n.IgnoreFields = append([]string(nil), *np.IgnoreFields...)
			}
			if np.ProgressFields != nil {
				n.ProgressFields = append([]string(nil), *np.ProgressFields...)
			}
			if np.MetricField != nil {
				n.MetricField = *np.MetricField
			}
			if np.HigherIsBetter != nil {
				n.HigherIsBetter = *np.HigherIsBetter
			}
			if np.CostField != nil {
				n.CostField = *np.CostField
			}
			nodes[name] = n
		}
		o.Nodes = nodes
	}
	if p.Graph != nil {
		o.Graph = nil
		for _, e := range *p.Graph {
			o.Graph = append(o.Graph, interceptor.Edge{From: e.From, To: e.To})
		}
	}
	if p.OnHalt != nil {
		o.OnHalt = interceptor.OnHalt(*p.OnHalt)
	}
	setDur(&o.PauseTimeout, p.PauseTimeout)
	if p.OnPauseTimeout != nil {
		o.OnPauseTimeout = interceptor.PauseTimeoutAction(*p.OnPauseTimeout)
	}
	setInt(&o.MaxPayloadBytes, p.MaxPayloadBytes)
	setDur(&o.HaltSignalTimeout, p.HaltSignalTimeout)
}

// guardOptions builds the guard's options from the samples' options, the
// policy file and the flags, in that order of precedence (flags win), and
// validates them. SupervisorWorkflowID and SearchAttribute are set later,
// once the server is known. Errors are *usageError.
func guardOptions(cfg config) (interceptor.Options, error) {
	o := workflows.GuardOptions()
	if cfg.policyPath != "" {
		p, err := loadPolicy(cfg.policyPath)
		if err != nil {
			return o, &usageError{err: err}
		}
		p.apply(&o)
	}
	if cfg.onHalt != "" {
		o.OnHalt = interceptor.OnHalt(cfg.onHalt)
	}
	if cfg.pauseTimeout > 0 {
		o.PauseTimeout = cfg.pauseTimeout
	}
	if _, err := interceptor.New(o); err != nil {
		var oe *interceptor.OptionError
		if errors.As(err, &oe) {
			if cfg.policyPath != "" {
				return o, &usageError{err: &policyError{path: cfg.policyPath, field: jsonFieldPath(oe.Field), msg: oe.Reason}}
			}
			return o, usagef("invalid guard option %s: %s", jsonFieldPath(oe.Field), oe.Reason)
		}
		return o, &usageError{err: err}
	}
	return o, nil
}

// jsonFieldPath turns an interceptor.OptionError field ("MaxCycleIterations",
// "Nodes[Verify].MaxCalls", "IgnoreFields[0]") into the policy file's JSON
// path ("maxCycleIterations", "nodes.Verify.maxCalls", "ignoreFields[0]").
func jsonFieldPath(field string) string {
	if rest, ok := strings.CutPrefix(field, "Nodes["); ok {
		if i := strings.Index(rest, "]"); i >= 0 {
			node, tail := rest[:i], strings.TrimPrefix(rest[i+1:], ".")
			if tail == "" {
				return "nodes." + node
			}
			return "nodes." + node + "." + jsonFieldPath(tail)
		}
	}
	if field == "" {
		return field
	}
	return strings.ToLower(field[:1]) + field[1:]
}

// fieldError is a decoding error at a JSON path.
type fieldError struct {
	path string
	msg  string
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeStrict decodes data into dst like encoding/json, but rejects
// unknown object keys (matched exactly, not case-insensitively) and
// reports the JSON path of the first bad field.
func decodeStrict(path string, data []byte, dst reflect.Value) error {
	if len(data) == 0 {
		return &fieldError{path: path, msg: "empty file, want a JSON object"}
	}
	if string(data) == "null" {
		return nil // leaves pointers and maps nil: not set
	}
	if dst.Kind() == reflect.Pointer {
		v := reflect.New(dst.Type().Elem())
		if err := decodeStrict(path, data, v.Elem()); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	}
	if dst.Addr().Type().Implements(unmarshalerType) {
		if err := dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
			return &fieldError{path: path, msg: err.Error()}
		}
		return nil
	}
	switch dst.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return &fieldError{path: path, msg: "want a JSON object, got " + jsonKind(data)}
		}
		fields := jsonFields(dst.Type())
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			i, ok := fields[key]
			if !ok {
				return &fieldError{path: path, msg: unknownField(key, fields)}
			}
			if err := decodeStrict(joinPath(path, key), obj[key], dst.Field(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return &fieldError{path: path, msg: "want a JSON object, got " + jsonKind(data)}
		}
		m := reflect.MakeMapWithSize(dst.Type(), len(obj))
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			if strings.TrimSpace(key) == "" {
				return &fieldError{path: path, msg: "empty key"}
			}
			v := reflect.New(dst.Type().Elem()).Elem()
			if err := decodeStrict(joinPath(path, key), obj[key], v); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(key), v)
		}
		dst.Set(m)
		return nil
	case reflect.Slice:
		var arr []json.RawMessage
		if err := json.Unmarshal(data, &arr); err != nil {
			return &fieldError{path: path, msg: "want a JSON array, got " + jsonKind(data)}
		}
		s := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, item := range arr {
			if err := decodeStrict(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	}
	if err := json.Unmarshal(data, dst.Addr().Interface()); err != nil {
		want := dst.Kind().String()
		switch dst.Kind() {
		case reflect.Int, reflect.Int64:
			want = "an integer"
		case reflect.Float64:
			want = "a number"
		case reflect.Bool:
			want = "true or false"
		case reflect.String:
			want = "a string"
		}
		return &fieldError{path: path, msg: fmt.Sprintf("want %s, got %s", want, truncateJSON(data))}
	}
	return nil
}

// jsonFields maps a struct's JSON names to field indexes.
func jsonFields(t reflect.Type) map[string]int {
	fields := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = i
		}
	}
	return fields
}

// unknownField describes an unknown key, suggesting the closest known one.
func unknownField(key string, fields map[string]int) string {
	best, bestDist := "", len(key)/2+2
	for name := range fields {
		d := editDistance(strings.ToLower(key), strings.ToLower(name))
		if d < bestDist || d == bestDist && name < best {
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

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
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
	s := string(data)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
