package detect

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixAndCheck is a fix-and-check loop: a fix node that acknowledges with
// the same result every time, then a check node whose result is check(i)
// at iteration i.
func fixAndCheck(n int, ack string, check func(i int) string) []corpusCall {
	var calls []corpusCall
	for i := range n {
		calls = append(calls,
			corpusCall{Node: "fix", Output: json.RawMessage(ack)},
			corpusCall{Node: "check", Output: json.RawMessage(check(i))})
	}
	return calls
}

// TestConvergingLoopIsNeverHalted: with zero Options (DefaultPolicy,
// budgets on), a fix-and-check loop whose only progress signal is a count
// that falls (as a field or in text) or a score that rises is never
// halted, however long it converges within its budgets; the same loop
// whose check repeats is halted at its third iteration.
func TestConvergingLoopIsNeverHalted(t *testing.T) {
	ack := `{"applied": true}`
	tests := []struct {
		name     string
		give     []corpusCall
		wantHalt bool
	}{
		{"error count falls, as a field", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`{"errors": %d}`, 6-i) }), false},
		{"failing tests fall, in text", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`"%d tests failed"`, 6-i) }), false},
		{"failing count falls, in a log", fixAndCheck(7, ack, func(i int) string {
			return fmt.Sprintf(`{"log": "=== RUN TestAll\n--- FAIL: TestAll (0.%02ds)\nFAIL: %d of 9 checks failed"}`, 10+i*7%5, 6-i)
		}), false},
		{"score rises", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`{"score": %.2f}`, 0.35+0.1*float64(i)) }), false},
		{"score rises, in text", fixAndCheck(7, ack, func(i int) string { return fmt.Sprintf(`"eval score %.2f"`, 0.35+0.1*float64(i)) }), false},
		{"count falls, a duration beside it", fixAndCheck(7, ack, func(i int) string {
			return fmt.Sprintf(`{"failing": %d, "took_ms": %d}`, 6-i, []int{310, 290, 402, 288, 351, 296, 377}[i])
		}), false},
		{"check repeats", fixAndCheck(7, ack, func(int) string { return `{"errors": 4}` }), true},
		{"check repeats, only its duration moves", fixAndCheck(7, ack, func(i int) string {
			return fmt.Sprintf(`"FAIL: 4 of 9 checks failed (Time: %d.%03d s)"`, 1+i%2, 378-i*41)
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, trip := replay(DefaultPolicy(), tt.give)
			if !tt.wantHalt {
				assert.Nil(t, trip, "halted at call %d: %v", at, trip)
				return
			}
			require.NotNil(t, trip)
			assert.Equal(t, ReasonStalled, trip.Reason)
			assert.LessOrEqual(t, at, 6, "halted by the third iteration's check")
		})
	}
}

// TestHundredStepToolRun: a progressing LLM↔tool run of 100 steps (200
// calls: a model call, then one of four tools) is never halted with the
// tool-call grain's budgets; with the agent-turn budgets it is (the
// reason the grain exists).
func TestHundredStepToolRun(t *testing.T) {
	tools := []string{"bash", "edit", "open", "search"}
	var calls []corpusCall
	for i := range 100 {
		tool := tools[i*7%len(tools)]
		calls = append(calls,
			corpusCall{Node: "llm", Output: json.RawMessage(fmt.Sprintf(`{"tool": %q, "args": {"step": %d}}`, tool, i))},
			corpusCall{Node: tool, Output: json.RawMessage(fmt.Sprintf(`"output of step %d"`, i))})
	}
	at, trip := replay(ToolCallPolicy(), calls)
	assert.Nil(t, trip, "halted at call %d: %v", at, trip)
	_, trip = replay(DefaultPolicy(), calls)
	require.NotNil(t, trip)
	assert.Equal(t, ReasonBudgetExceeded, trip.Reason)
}
