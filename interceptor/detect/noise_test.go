package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoiseAndInformation: the third and fourth generations' reading masks noise
// (generated ids, durations, epochs, attempt counters, measurements named
// by their key) and keeps information (entity ids, counts, scores, what an
// action acts on). give holds two results; want says whether they read as
// the same.
func TestNoiseAndInformation(t *testing.T) {
	tests := []struct {
		name string
		give [2]string
		want bool
	}{
		{"OpenAI completion ids", [2]string{`{"id": "chatcmpl-9xQ2bT7LmN4pK8rV1sW3yZ", "text": "ok"}`, `{"id": "chatcmpl-3Hk8Jd2LmQ9wE4rT6yU1iO", "text": "ok"}`}, true},
		{"OpenAI tool call ids", [2]string{`"call_Hk3jQ9x2mVzN8pL1aB4cD5eF ran"`, `"call_Zq7wX1c9VbN3mL5kJ8hG2fD4 ran"`}, true},
		{"Anthropic message and tool ids", [2]string{`"msg_01XFDUDYJgAACzvnptvVoYEL toolu_01A09q90qw90lq917835lq9"`, `"msg_01Y7kQ2pWmZ8rT3xN6vB9cLd toolu_01B7xH2kL9mN4pQ6rS8tV1wY3"`}, true},
		{"a duration with a space", [2]string{`"Ran 12 tests. Time: 1.378 s"`, `"Ran 12 tests. Time: 2.051 s"`}, true},
		{"a duration before a bracket", [2]string{`"FAIL (Time: 1.378 s)"`, `"FAIL (Time: 0.914 s)"`}, true},
		{"epoch seconds in text", [2]string{`"cache built at 1732400000"`, `"cache built at 1732400123"`}, true},
		{"epoch milliseconds as a field", [2]string{`{"status": "pending", "at": 1732400000000}`, `{"status": "pending", "at": 1732400123456}`}, true},
		{"a measurement named by its key", [2]string{`{"content": "a.txt", "took": 0.31}`, `{"content": "a.txt", "took": 0.52}`}, true},
		{"an attempt counter named by its word", [2]string{`"retry 3: adjust sleep"`, `"retry 4: adjust sleep"`}, true},
		{"a 7-digit order id", [2]string{`"order #W1234567 is pending"`, `"order #W7654321 is pending"`}, false},
		{"a 7-digit record id", [2]string{`{"get_order": 1234567}`, `{"get_order": 7654321}`}, false},
		{"a falling count", [2]string{`"6 tests failed"`, `"5 tests failed"`}, false},
		{"a rising score", [2]string{`{"score": 0.35}`, `{"score": 0.45}`}, false},
		{"a rising score in text", [2]string{`"eval score 0.35"`, `"eval score 0.45"`}, false},
		{"another grep pattern", [2]string{`"grep -rn foo src/"`, `"grep -rn bar src/"`}, false},
		{"another file", [2]string{`"open src/a.py"`, `"open src/b.py"`}, false},
		{"a CamelCase name is no generated id", [2]string{`"MyHandlerClass2023Version"`, `"MyHandlerClass2024Version"`}, false},
		{"a step number", [2]string{`"step 3"`, `"step 4"`}, false},
	}
	{
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
			})
		}
	}
}
