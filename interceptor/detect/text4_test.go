package detect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReading: the fourth generation's one-pass reader reads
// a few of the earlier generations' cases (TestNoiseAndInformation runs
// all of its rows against it too) and its own: give holds two results;
// want says whether they read as the same.
func TestReading(t *testing.T) {
	tests := []struct {
		name string
		give [2]string
		want bool
	}{
		{"Anthropic request ids", [2]string{`"overloaded (request req_011CUxQ2bT7LmN4pK8rV1sW3)"`, `"overloaded (request req_011CUzH8Jd2LmQ9wE4rT6yU1)"`}, true},
		{"a duration in a word", [2]string{`"3 failed, 41 passed in 2.31s"`, `"3 failed, 41 passed in 1.98s"`}, true},
		{"UUID in a string", [2]string{`"request 550e8400-e29b-41d4-a716-446655440000 failed"`, `"request 6fa459ea-ee8a-3ca4-894e-db77e160355e failed"`}, true},
		{"hex id in a string", [2]string{`"event evt_9f8e7d6c5b4a handled"`, `"event evt_0a1b2c3d4e5f handled"`}, true},
		{"timestamp in a string", [2]string{`"checked at 2026-11-23T12:48:26.123Z"`, `"checked at 2026-11-24T08:01:02Z"`}, true},
		{"whitespace in strings", [2]string{`{"patch":"+ if user == nil {\n\treturn\n}"}`, `{"patch":"+ if user == nil { return }"}`}, true},
		{"escaped whitespace", [2]string{`"a\u0020b\tc"`, `"a b c"`}, true},
		{"JSON inside a string field", [2]string{`{"tool":"grep","arguments":"{\"path\": \"src\", \"q\": \"TODO\"}"}`, `{"tool":"grep","arguments":"{\"q\":\"TODO\",\"path\":\"src\"}"}`}, true},
		{"key order", [2]string{`{"a":1,"b":{"c":"x","d":[1,2]}}`, `{"b":{"d":[1,2],"c":"x"},"a":1}`}, true},
		{"line numbers are information", [2]string{`"SyntaxError at line 10"`, `"SyntaxError at line 20"`}, false},
		{"a line range is not a clock time", [2]string{`"edit 287:295"`, `"edit 287:296"`}, false},
		{"a line range as tool arguments", [2]string{`{"command": "view", "view_range": [1, 50]}`, `{"command": "view", "view_range": [51, 100]}`}, false},
		{"number and string", [2]string{`1`, `"1"`}, false},
		{"embedded JSON is not the object", [2]string{`{"args":{"q":"x"}}`, `{"args":"{\"q\":\"x\"}"}`}, false},
		{"escaped quote is content", [2]string{`"say \"hi\" now"`, `"say hi now"`}, false},
		// The fourth generation's rows: a clock is not progress.
		{"token usage of a provider's envelope", [2]string{
			`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[{"type":"tool_use","name":"bash","input":{"command":"pytest -x"}}],"usage":{"input_tokens":2095,"output_tokens":503}}`,
			`{"id":"msg_01Y7kQ2pWmZ8rT3xN6vB9cLd","type":"message","role":"assistant","content":[{"type":"tool_use","name":"bash","input":{"command":"pytest -x"}}],"usage":{"input_tokens":2871,"output_tokens":498}}`}, true},
		{"token counts by name", [2]string{`{"text":"ok","prompt_tokens":1200,"completion_tokens":80}`, `{"text":"ok","prompt_tokens":1350,"completion_tokens":95}`}, true},
		{"an event stream's cause and event id", [2]string{`{"observation":"run","content":"ok","cause":41,"event_id":42}`, `{"observation":"run","content":"ok","cause":57,"event_id":58}`}, true},
		{"Cline's task_progress", [2]string{`{"tool":"read_file","path":"a.py","task_progress":"- [x] read\n- [ ] fix"}`, `{"tool":"read_file","path":"a.py","task_progress":"- [x] read\n- [x] fix"}`}, true},
		{"step N of M", [2]string{`"Step 3 of 5: run the tests"`, `"Step 4 of 5: run the tests"`}, true},
		{"step N/M", [2]string{`"step 3/5 run the tests"`, `"step 4/5 run the tests"`}, true},
		{"a curl progress meter", [2]string{
			`"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n100  1256  100  1256    0     0   6543      0 --:--:-- --:--:-- --:--:--  6573\n{\"ok\":true}"`,
			`"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n100  1256  100  1256    0     0   9120      0 --:--:-- --:--:-- --:--:--  9187\n{\"ok\":true}"`}, true},
		{"a tqdm meter", [2]string{`"Downloading: 100%|##########| 5/5 [00:01<00:00,  3.21it/s]\nDone"`, `"Downloading: 100%|##########| 5/5 [00:02<00:00,  2.47it/s]\nDone"`}, true},
		{"a pip meter", [2]string{`"   1.2/1.2 MB 5.1 MB/s eta 0:00:00\nInstalled"`, `"   1.2/1.2 MB 3.9 MB/s eta 0:00:00\nInstalled"`}, true},
		{"what follows a meter is read", [2]string{`"100  1256 --:--:-- 6573\n3 failed"`, `"100  1256 --:--:-- 6573\n2 failed"`}, false},
		{"an id alone is information", [2]string{`{"id":41,"content":"ok"}`, `{"id":42,"content":"ok"}`}, false},
		{"a failure count by name", [2]string{`{"failed_tests":6}`, `{"failed_tests":5}`}, false},
		{"a JSON string holding JSON", [2]string{`"{\"matches\":[],\"took\":0.31}"`, `"{\"matches\":[],\"took\":0.52}"`}, true},
	}
	p := DefaultPolicy()
	key := func(s string) uint64 {
		o := Extract(p, "n", []byte(s))
		if o.Action != 0 {
			return o.Action
		}
		return o.Output
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, key(tt.give[0]) == key(tt.give[1]))
			assert.NotZero(t, key(tt.give[0]))
		})
	}
}

// TestErrorsMasked: errors are masked as results are (one masking):
// a provider's request id is noise in an error, every number is.
func TestErrorsMasked(t *testing.T) {
	tests := []struct {
		name string
		give [2]string
		want bool
	}{
		{"provider request ids", [2]string{`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CUxQ2bT7LmN4pK8rV1sW3"}`, `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CUzH8Jd2LmQ9wE4rT6yU1"}`}, true},
		{"numbers", [2]string{"timeout after 31s (attempt 2)", "timeout after 45s (attempt 3)"}, true},
		{"UUIDs", [2]string{"job 550e8400-e29b-41d4-a716-446655440000 failed", "job 6fa459ea-ee8a-3ca4-894e-db77e160355e failed"}, true},
		{"whitespace", [2]string{"no such\n  file", "no such file"}, true},
		{"another symbol", [2]string{"undefined name 'foo'", "undefined name 'bar'"}, false},
		{"a backslash is text", [2]string{`C:\new`, `C:\old`}, false},
	}
	p := DefaultPolicy()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := ExtractError(p, "ToolError", tt.give[0]), ExtractError(p, "ToolError", tt.give[1])
			assert.Equal(t, tt.want, a.ErrorHash == b.ErrorHash)
		})
	}
}

// TestIgnoreFieldsInString: a result that is a JSON string
// holding JSON is read as that JSON, so IgnoreFields reach inside it.
func TestIgnoreFieldsInString(t *testing.T) {
	p := DefaultPolicy()
	p.IgnoreFields = []string{"requestNo"}
	a := Extract(p, "n", []byte(`"{\"matches\":[],\"requestNo\":7}"`))
	b := Extract(p, "n", []byte(`"{\"matches\":[],\"requestNo\":8}"`))
	assert.Equal(t, a.Output, b.Output)
}

// TestPlainTokenAgreesWithMask: the fast path for tokens with nothing to
// mask gives what the word-by-word path gives, and takes no token that
// has something to mask.
func TestPlainTokenAgreesWithMask(t *testing.T) {
	toks := append([]string{
		"tests/test_mod_003.py::test_case_5", "tests/test_mod_096.py::test_case_1234", "15,", "(45)", "-3", "x1", "a_1_b_22",
		"0.35", "v1.2.3", "2.31s", "deadbee1", "ab-12-cd-34", "x_deadbeef", "12345", "123456", "1234567890", "call_Hk3jQ9x2mVzN8pL1aB4cD5eF",
		"MyHandlerClass2023Version", "MyHandlerClass2023", "2026-11-23", "12:48", "287:295", "3/5", "100%", "1e9", "#3:", "a" + strings.Repeat("1b", 20),
	}, tokenSamples...)
	var mb maskBufs
	for w, want := range map[string]bool{
		"tests/test_mod_096.py::test_case_1234": true, "15,": true, "(45)": true, "a" + strings.Repeat("1b", 20): false,
		"0.35": false, "2.31s": false, "deadbee1": false, "123456": false, "x_deadbeef": false, "ab-12-cd-34": false,
		"call_Hk3jQ9x2mVzN8pL1aB4cD5eF": false, "2026-11-23": false, "12:48": false,
	} {
		_, _, _, ok := plainToken4([]byte(w))
		assert.Equal(t, want, ok, "%q takes the fast path", w)
	}
	for _, w := range toks {
		if w == "" || len(w) > 64 {
			continue
		}
		h, shape, nums, ok := plainToken4([]byte(w))
		if !ok {
			continue
		}
		mh, ms, mn := maskToken4Slow([]byte(w), &mb)
		assert.Equal(t, [3]uint64{mh, ms, uint64(mn)}, [3]uint64{h, shape, uint64(nums)}, "%q", w)
	}
}

// TestCallKey: the keys whose values measure the call, in the cases a
// provider or a runtime writes them, and keys that name the world.
func TestCallKey(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{give: "usage", want: true},
		{give: "cause", want: true},
		{give: "seq", want: true},
		{give: "task_progress", want: true},
		{give: "token_count", want: true},
		{give: "tokenCount", want: true},
		{give: "prompt_tokens", want: true},
		{give: "outputTokens", want: true},
		{give: "OUTPUT_TOKENS", want: true},
		{give: "accumulated_token_usage", want: true},
		{give: "total_cost", want: true},
		{give: "accumulatedCost", want: true},
		{give: "event_id", want: true},
		{give: "EventId", want: true},
		{give: "command_id", want: true},
		{give: "commandID", want: true},
		{give: "sequence_number", want: true},
		{give: "", want: false},
		{give: "id", want: false},
		{give: "orderId", want: false},
		{give: "status", want: false},
		{give: "tokenizer", want: false},
		{give: "costly_step", want: false},
		{give: "Usage", want: false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, callKey([]byte(tt.give)), tt.give)
	}
}
