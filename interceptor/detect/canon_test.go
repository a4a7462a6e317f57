package detect

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCanonicalSame: with zero options, DetectionV2 reads two results as
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

// TestNearDup: the SimHash of long text that differs in a few words is
// near, of other text far; short text has none.
func TestNearDup(t *testing.T) {
	p := DefaultPolicy()
	p.Detection = DetectionV2
	para := func(words ...string) string {
		return `"The test suite still fails in test_login because the session cookie is not set after the redirect to the dashboard page. ` +
			`The middleware reads the cookie before the handler writes it, so the assertion on the user name fails ` + words[0] + `. ` +
			`I looked at the order of the handlers in the router and at the cookie options in the config module, ` +
			`and the SameSite attribute is ` + words[1] + ` for the staging profile. The fix is to move the session middleware ` +
			`after the auth handler and to set the attribute to lax, then run the suite ` + words[2] + ` to check the login and logout tests."`
	}
	base := para("again", "strict", "again")
	near := para("once more", "still strict", "one more time")
	other := `"I have updated the migration to add the missing column and the orders API now returns the discount field for every line item in the response. ` +
		`The serializer had no field for it, and the admin page listed the column without a label. Next I will add a test for the discount ` +
		`rounding rules, since the product owner asked for banker's rounding on every currency except the yen, and check the invoice PDF."`
	a, b, c := Extract(p, "n", []byte(base)), Extract(p, "n", []byte(near)), Extract(p, "n", []byte(other))
	assert.NotZero(t, a.Sim)
	assert.True(t, nearDup(a.Sim, b.Sim), "a few words changed: distance %d", bits.OnesCount64(a.Sim^b.Sim))
	assert.False(t, nearDup(a.Sim, c.Sim), "other text: distance %d", bits.OnesCount64(a.Sim^c.Sim))
	assert.Zero(t, Extract(p, "n", []byte(`"short text has no SimHash"`)).Sim)
}
