package testsuite_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
)

// The v9- fixtures record what guard version 9 changed: one loop, one
// ladder (a reset starts the loop over for every detector, progress
// anywhere in the loop resets its edges, the halt is published before the
// halt handler runs).

// signalIndexes lists the indexes of the signals named name in h.
func signalIndexes(h *historypb.History, name string) []int {
	var out []int
	for i, e := range h.GetEvents() {
		if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == name {
			out = append(out, i)
		}
	}
	return out
}

// TestV9StaleRoundResumed: after the human's resume, the loop that goes
// on unchanged makes a whole window of calls (four rounds of three)
// before the stale-round rule halts it again; both halts name the loop
// by its anchor, Plan.
func TestV9StaleRoundResumed(t *testing.T) {
	h := readFixture(t, "stale-round-resumed.json")
	halted := signalIndexes(h, protocol.DefaultHaltedSignal)
	require.Len(t, halted, 2)
	resumed := signalIndex(h, protocol.DefaultResumeSignal)
	require.Positive(t, resumed)
	assert.Len(t, scheduled(h, resumed, halted[1]), 12, "four rounds after the resume")
	for n := range 2 {
		ev := haltedEvent(t, h, n)
		assert.Equal(t, "transition_oscillation", string(ev.Detector))
		assert.Equal(t, "Plan", ev.Loop)
	}
}

// TestV9ConvergingField: the converging loop completes with no halt.
func TestV9ConvergingField(t *testing.T) {
	h := readFixture(t, "converging-field.json")
	assert.Empty(t, signalIndexes(h, protocol.DefaultHaltedSignal))
	var res fixtures.Result
	workflowResult(t, h, &res)
	assert.Equal(t, 14, res.Calls)
	assert.False(t, res.Escalated)
}

// TestV9SamplesReviewed: the halt is in the memo before the halt
// handler's Review activity is scheduled, and the handler's resume
// publishes running.
func TestSamplesReviewedPublishedFirst(t *testing.T) {
	v9 := readFixture(t, "samples-reviewed-published.json")
	assert.Equal(t, []string{"halted:stalled", "running:"}, memoWithout(memoStates(t, v9), "running:"))
	var seq []string
	for _, e := range v9.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Review" {
			seq = append(seq, "Review")
		}
		if p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()["loopguard"]; p != nil {
			seq = append(seq, "memo")
		}
	}
	at := slices.Index(seq, "Review")
	require.Positive(t, at, "%v", seq)
	assert.Contains(t, seq[:at], "memo", "published before the handler's call: %v", seq)
}

// memoWithout drops the leading entries equal to lead (the memo the
// warning rung writes before the halt).
func memoWithout(states []string, lead string) []string {
	for len(states) > 0 && states[0] == lead {
		states = states[1:]
	}
	return states
}
