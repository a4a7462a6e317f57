package detect

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Extract reads one call's result payload (JSON, as Temporal's default data
// converter writes it) into an Observation. It never fails:
//
//   - an empty payload or JSON null is silent: Output 0, no output signal;
//   - a JSON string is hashed after collapsing whitespace runs and trimming,
//     so a re-proposed patch that differs only in whitespace is identical;
//   - without rules for the node (Policy.Nodes[node].Rules) or global
//     Policy.IgnoreFields, the payload bytes are hashed (FNV-64a);
//   - with rules, the payload is parsed, the progress fields, the metric and
//     the cost are read, the ignored fields deleted, and the rest re-encoded
//     canonically (sorted keys) and hashed;
//   - invalid JSON is hashed as raw bytes.
//
// Paths are dot-separated object keys; numeric segments index arrays
// ("report.failing", "items.0.id"); in IgnoreFields, "*" matches every key or
// element ("items.*.ts"). ProgressFields form Progress (hash of their
// canonical JSON values, missing ones included) and ProgressRaw (the values
// joined, at most 64 bytes); HasProgress is set when at least one is
// present. MetricField must hold a number, a numeric string or an array
// (its length); CostField a number or a numeric string.
func Extract(p Policy, node string, data []byte) Observation {
	var obs Observation
	body := bytes.TrimSpace(data)
	if len(body) == 0 || string(body) == "null" {
		return obs
	}
	return extractBody(p, node, body)
}

// nonZero keeps 0 for "no output".
func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// decodeJSON parses exactly one JSON value, numbers kept as json.Number.
func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// valueAt follows a path into a decoded JSON value.
func valueAt(v any, path string) (any, bool) {
	for _, seg := range splitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			c, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = c
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, path != ""
}

// deletePath removes the value at segs from v and returns v.
func deletePath(v any, segs []string) any {
	if len(segs) == 0 {
		return v
	}
	seg, rest := segs[0], segs[1:]
	switch x := v.(type) {
	case map[string]any:
		if seg == "*" {
			if len(rest) == 0 {
				clear(x)
				return x
			}
			for k, c := range x {
				x[k] = deletePath(c, rest)
			}
			return x
		}
		c, ok := x[seg]
		if !ok {
			return x
		}
		if len(rest) == 0 {
			delete(x, seg)
		} else {
			x[seg] = deletePath(c, rest)
		}
		return x
	case []any:
		if seg == "*" {
			if len(rest) == 0 {
				return x[:0]
			}
			for k, c := range x {
				x[k] = deletePath(c, rest)
			}
			return x
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return x
		}
		if len(rest) == 0 {
			return append(x[:i:i], x[i+1:]...)
		}
		x[i] = deletePath(x[i], rest)
		return x
	}
	return v
}

// readProgress sets the progress signal from the progress fields.
func readProgress(obs *Observation, v any, paths []string) {
	if len(paths) == 0 {
		return
	}
	h := fnvOffset
	var raw strings.Builder
	for k, p := range paths {
		if k > 0 {
			h = fnvByte(h, 0x1e)
			raw.WriteString(", ")
		}
		c, ok := valueAt(v, p)
		if !ok {
			h = fnvString(h, "\x00missing")
			raw.WriteString("-")
			continue
		}
		obs.HasProgress = true
		b, err := json.Marshal(c)
		if err != nil {
			continue
		}
		h = fnvBytes(h, b)
		if s, isStr := c.(string); isStr {
			raw.WriteString(s)
		} else {
			raw.Write(b)
		}
	}
	if obs.HasProgress {
		obs.Progress = nonZero(h)
		obs.ProgressRaw = truncate(raw.String(), maxRawLen)
	}
}

// numberAt reads a number or a numeric string.
func numberAt(v any, path string) (float64, bool) {
	c, ok := valueAt(v, path)
	if !ok {
		return 0, false
	}
	var f float64
	var err error
	switch x := c.(type) {
	case json.Number:
		f, err = x.Float64()
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
	default:
		return 0, false
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// metricAt reads a number, a numeric string, or an array's length.
func metricAt(v any, path string) (float64, bool) {
	if c, ok := valueAt(v, path); ok {
		if a, isArr := c.([]any); isArr {
			return float64(len(a)), true
		}
	}
	return numberAt(v, path)
}

// extractBody is Extract of a non-empty body: the result is read canonically
// (see canonical) after the rules' ignored fields are removed.
func extractBody(p Policy, node string, body []byte) Observation {
	var obs Observation
	if body[0] == '"' {
		// A tool that returns its JSON as a string: read as that JSON,
		// so that the rules' fields reach inside it.
		if inner, ok := jsonInString(body); ok {
			body = inner
		}
	}
	r := p.Nodes[node].Rules
	ignore := len(p.IgnoreFields) > 0 || len(r.IgnoreFields) > 0
	if ignore || len(r.ProgressFields) > 0 || r.MetricField != "" || r.CostField != "" {
		if v, ok := decodeJSON(body); ok {
			v = applyRules(&obs, v, p.IgnoreFields, r)
			if ignore {
				if canon, err := json.Marshal(v); err == nil {
					body = canon
				}
			}
		}
	}
	var c canonical
	readCanonical(body, &c)
	obs.Output = nonZero(c.sum)
	obs.Count, obs.Action = c.nums, c.action
	if c.shape != 0 {
		obs.Shape = nonZero(c.shape)
	}
	if c.nf > 0 {
		obs.Fields = append([]Field(nil), c.fields[:c.nf]...)
	}
	return obs
}

// jsonInString returns the JSON a JSON string holds: an object or an
// array, trimmed, that parses as exactly one value.
func jsonInString(body []byte) ([]byte, bool) {
	if !mayStartJSON(body[1:]) {
		return nil, false
	}
	var s string
	if len(body) > maxEmbedLength || json.Unmarshal(body, &s) != nil {
		return nil, false
	}
	t := bytes.TrimSpace([]byte(s))
	if len(t) < 2 || t[0] != '{' && t[0] != '[' || !json.Valid(t) {
		return nil, false
	}
	return t, true
}

// mayStartJSON answers, without decoding, whether a JSON string's content
// as written (after its opening quote) can hold JSON once decoded and
// trimmed: most tool results are text, and decoding them to find out cost
// three allocations each. It is conservative: after the ASCII whitespace
// bytes.TrimSpace trims, only an ASCII byte other than '{', '[' and a
// backslash (which may start an escape) rules it out; a non-ASCII byte
// (which may be a space TrimSpace trims) leaves it to the decoder.
func mayStartJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			continue
		case '{', '[', '\\':
			return true
		}
		return c >= utf8.RuneSelf
	}
	return false
}

// applyRules reads the progress fields, the metric and the cost of v into
// obs, then removes the ignored fields (global ones, then the node's).
func applyRules(obs *Observation, v any, global []string, r Rules) any {
	readProgress(obs, v, r.ProgressFields)
	if r.MetricField != "" {
		if m, ok := metricAt(v, r.MetricField); ok {
			obs.HasMetric, obs.Metric = true, m
		}
	}
	if r.CostField != "" {
		if c, ok := numberAt(v, r.CostField); ok && c > 0 {
			obs.Cost = c
		}
	}
	for _, f := range global {
		v = deletePath(v, splitPath(f))
	}
	for _, f := range r.IgnoreFields {
		v = deletePath(v, splitPath(f))
	}
	return v
}
