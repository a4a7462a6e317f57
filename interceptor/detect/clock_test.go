package detect

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// rounds builds n rounds of an LLM↔tool loop: round i's model call
// returns llm(i), its tool call tool(i).
func rounds(n int, llm, tool func(i int) string) []corpusCall {
	var calls []corpusCall
	for i := range n {
		calls = append(calls,
			corpusCall{Node: "llm", Output: json.RawMessage(llm(i))},
			corpusCall{Node: "tool", Output: json.RawMessage(tool(i))})
	}
	return calls
}

// TestClockIsNotProgress: clocks are told from progress. give is a
// trace (budgets raised); want says whether it halts.
func TestClockIsNotProgress(t *testing.T) {
	same := func(s string) func(int) string { return func(int) string { return s } }
	tests := []struct {
		name string
		give []corpusCall
		want bool
	}{
		{
			name: "an agent runtime's event ids rise at every step",
			give: rounds(8,
				func(i int) string {
					return fmt.Sprintf(`{"id":%d,"action":"run","args":{"command":"pytest -x"}}`, 40+2*i)
				},
				func(i int) string { return fmt.Sprintf(`{"id":%d,"observation":"run","content":"1 failed"}`, 41+2*i) }),
			want: true,
		},
		{
			name: "token usage grows with the context",
			give: rounds(8,
				func(i int) string {
					return fmt.Sprintf(`{"content":[{"type":"tool_use","name":"bash","input":{"command":"ls"}}],"usage":{"input_tokens":%d,"output_tokens":%d}}`, 2000+700*i, 40+i%3)
				},
				same(`"a.py b.py"`)),
			want: true,
		},
		{
			name: "a curl meter in the tool's output",
			give: rounds(8, same(`"curl -s http://svc/health"`),
				func(i int) string {
					return fmt.Sprintf(`"100  1256  100  1256    0     0   %d      0 --:--:-- --:--:-- --:--:--  %d\n503 Service Unavailable"`, 5000+97*i, 5100+89*i)
				}),
			want: true,
		},
		{
			name: "the agent rewrites its step counter",
			give: rounds(8, func(i int) string { return fmt.Sprintf(`"Step %d of 9: run the tests"`, 3+i) }, same(`"1 failed"`)),
			want: true,
		},
		{
			name: "a falling failure count is progress",
			give: rounds(8, same(`"pytest -x"`), func(i int) string { return fmt.Sprintf(`"%d failed"`, 9-i) }),
		},
		{
			name: "a rising score is progress",
			give: rounds(8, same(`"evaluate"`), func(i int) string { return fmt.Sprintf(`{"score":0.%d5}`, 1+i) }),
		},
		{
			name: "a rising passed count is progress",
			give: rounds(8, same(`"pytest"`), func(i int) string { return fmt.Sprintf(`{"passed":%d,"failed":%d}`, 3+i, 9-i) }),
		},
		{
			name: "ids of other entities, one a step apart, are information",
			give: rounds(8,
				func(i int) string { return fmt.Sprintf(`{"tool":"get_order","order_id":%d}`, 1001+i) },
				func(i int) string { return fmt.Sprintf(`{"order_id":%d,"status":"shipped"}`, 1001+i) }),
		},
		{
			name: "a file re-read in ranges is a loop, not a restart",
			give: viewLoop(3, 9),
			want: true,
		},
		{
			name: "a job that runs to its end and restarts is not a loop",
			give: rounds(15, same(`"check the job"`), func(i int) string { return fmt.Sprintf(`{"job":"build","progress":%d}`, 25*(i%5)) }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			raiseBudgets(&p)
			at, _ := replay(p, tt.give)
			assert.Equal(t, tt.want, at >= 0, "halted at call %d", at)
		})
	}
}

// viewLoop is an agent that reads a file in k ranges of 50 lines, with
// the file's text coming back each time, then starts again from the top,
// times over.
func viewLoop(times, k int) []corpusCall {
	names := []string{"User", "Order", "Invoice", "Payment", "Refund", "Coupon", "Address", "Session", "Token", "Audit"}
	fields := []string{"email", "total", "due", "amount", "reason", "code", "street", "expires", "scope", "actor"}
	var calls []corpusCall
	for range times {
		for r := range k {
			calls = append(calls,
				corpusCall{Node: "llm", Output: json.RawMessage(fmt.Sprintf(`{"command":"view","path":"/repo/src/models.py","view_range":[%d,%d]}`, 1+50*r, 50+50*r))},
				corpusCall{Node: "str_replace_editor", Output: json.RawMessage(fmt.Sprintf(`"%d\tclass %s(Base):\n%d\t    %s = Column(Integer)"`, 1+50*r, names[r%len(names)], 2+50*r, fields[r%len(fields)]))})
		}
	}
	return calls
}
