package detect

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCanonicalSame: with zero options, Extract reads two results as
// the same when a person would, and as different when the difference is
// information.
func TestCanonicalSame(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"key order", `{"a":1,"b":{"c":"x","d":[1,2]}}`, `{"b":{"d":[1,2],"c":"x"},"a":1}`, true},
		{"whitespace in strings", `{"patch":"+ if user == nil {\n\treturn\n}"}`, `{"patch":"+ if user == nil { return }"}`, true},
		{"JSON inside a string field", `{"tool":"grep","arguments":"{\"path\": \"src\", \"q\": \"TODO\"}"}`, `{"tool":"grep","arguments":"{\"q\":\"TODO\",\"path\":\"src\"}"}`, true},
		{"UUID in a string", `"request 550e8400-e29b-41d4-a716-446655440000 failed"`, `"request 6fa459ea-ee8a-3ca4-894e-db77e160355e failed"`, true},
		{"hex id in a string", `"event evt_9f8e7d6c5b4a handled"`, `"event evt_0a1b2c3d4e5f handled"`, true},
		{"timestamp in a string", `"checked at 2026-11-23T12:48:26.123Z"`, `"checked at 2026-11-24T08:01:02Z"`, true},
		{"duration in a string", `"3 failed, 41 passed in 2.31s"`, `"3 failed, 41 passed in 1.98s"`, true},
		{"long digit run in a string", `"job 1700000123 pending"`, `"job 1700000456 pending"`, true},
		{"failing tests in another order", `{"failing":["test_a","test_b","test_c"]}`, `{"failing":["test_c","test_a","test_b"]}`, true},
		{"line numbers are information", `"SyntaxError at line 10"`, `"SyntaxError at line 20"`, false},
		{"failure counts are information", `"3 failed, 41 passed in 2.31s"`, `"2 failed, 42 passed in 2.31s"`, false},
		{"a line range is not a clock time", `"edit 287:295"`, `"edit 287:296"`, false},
		{"numbers in another order are a sequence", `[1,2,3]`, `[3,2,1]`, false},
		{"objects in another order are a sequence", `[{"a":1},{"a":2}]`, `[{"a":2},{"a":1}]`, false},
		{"number and string", `1`, `"1"`, false},
		{"boolean and string", `true`, `"true"`, false},
		{"embedded JSON is not the object", `{"args":{"q":"x"}}`, `{"args":"{\"q\":\"x\"}"}`, false},
		{"different words", `"open the file"`, `"close the file"`, false},
	}
	p := DefaultPolicy()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Extract(p, "n", []byte(tt.a)), Extract(p, "n", []byte(tt.b))
			assert.Equal(t, tt.want, a.Output == b.Output, "%s vs %s", tt.a, tt.b)
			assert.NotZero(t, a.Output)
		})
	}
}

// TestCanonicalAction: commentary fields and measurements leave the
// action, not the output; a counter in short text keeps the shape.
func TestCanonicalAction(t *testing.T) {
	p := DefaultPolicy()
	a := Extract(p, "n", []byte(`{"thought":"let me run it again","action":"pytest -x","took":0.31}`))
	b := Extract(p, "n", []byte(`{"thought":"running once more to confirm","action":"pytest -x","took":0.47}`))
	c := Extract(p, "n", []byte(`{"thought":"let me run it again","action":"pytest -k auth","took":0.31}`))
	assert.NotEqual(t, a.Output, b.Output)
	assert.NotZero(t, a.Action)
	assert.Equal(t, a.Action, b.Action, "commentary and measurements left out")
	assert.NotEqual(t, a.Action, c.Action, "the action itself counts")

	x := Extract(p, "n", []byte(`"fetch all three pages (try 1)"`))
	y := Extract(p, "n", []byte(`"fetch all three pages (try 2)"`))
	assert.NotEqual(t, x.Output, y.Output)
	assert.Equal(t, x.Shape, y.Shape)
	assert.Equal(t, int64(1), y.Count-x.Count)

	ids := Extract(p, "n", []byte(`{"id":41,"action":"run","args":{"command":"ls"}}`))
	assert.Len(t, ids.Fields, 1, "numeric leaves outside arrays are volatile candidates")
}

// TestCanonicalInvalid: invalid JSON is hashed as bytes, never a panic.
func TestCanonicalInvalid(t *testing.T) {
	p := DefaultPolicy()
	for _, s := range []string{`{"a":`, `[1,2`, `{"a" 1}`, `tru`, `"unterminated`, `{"a":"\u12"}`, `}{`} {
		o := Extract(p, "n", []byte(s))
		assert.NotZero(t, o.Output, s)
		assert.Equal(t, o.Output, Extract(p, "n", []byte(s)).Output, s)
	}
	assert.NotEqual(t, Extract(p, "n", []byte(`{"a":`)).Output, Extract(p, "n", []byte(`{"b":`)).Output)
}

// TestReadingIgnoresEncoding is a differential against the plainest
// reader there is, encoding/json: every output of the corpora, decoded
// and encoded again (keys sorted, whitespace between tokens dropped,
// strings escaped anew, numbers as written), and indented, reads as the
// original. It holds the reader to its first rule (JSON is read as the
// value it encodes, not as its bytes) on data it was not written for.
func TestReadingIgnoresEncoding(t *testing.T) {
	p := DefaultPolicy()
	n, skipped := 0, 0
	for _, tr := range loadCorpus(t) {
		for _, c := range tr.Calls {
			if len(c.Output) == 0 {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(c.Output))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) != nil {
				skipped++
				continue
			}
			compact, err := json.Marshal(v)
			require.NoError(t, err)
			indented, err := json.MarshalIndent(v, "", "\t")
			require.NoError(t, err)
			want := Extract(p, "n", c.Output)
			for _, b := range [][]byte{compact, indented} {
				got := Extract(p, "n", b)
				if got.Output != want.Output || got.Action != want.Action || got.Shape != want.Shape || got.Count != want.Count {
					t.Errorf("%s: %s reads otherwise re-encoded as %s", tr.Name, c.Output, b)
				}
			}
			n++
		}
	}
	t.Logf("%d outputs re-encoded, %d not JSON", n, skipped)
	require.Greater(t, n, 500)
}
