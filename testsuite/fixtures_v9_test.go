package testsuite_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/internal/fixtures"
)

// The v9- fixtures record what guard version 9 changed: one loop, one
// ladder (a reset starts the loop over for every detector, progress
// anywhere in the loop resets its edges, the halt is published before the
// halt handler runs).

// TestV9FixturesNeedVersion9 rewrites the v9 fixtures' version marker to
// 8: a version-8 guard halts the stale-round loop again at the call after
// the resume, halts the converging loop with edge_without_progress, and
// publishes nothing before the halt handler, so the histories no longer
// replay.
func TestV9FixturesNeedVersion9(t *testing.T) {
	for _, file := range []string{"v9-stale-round-resumed.json", "v9-converging-field.json", "v9-samples-reviewed.json"} {
		t.Run(file, func(t *testing.T) { requireNeedsVersion(t, file, 9) })
	}
}

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
	h := readFixture(t, "v9-stale-round-resumed.json")
	halted := signalIndexes(h, interceptor.DefaultHaltedSignal)
	require.Len(t, halted, 2)
	resumed := signalIndex(h, interceptor.DefaultResumeSignal)
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
	h := readFixture(t, "v9-converging-field.json")
	assert.Empty(t, signalIndexes(h, interceptor.DefaultHaltedSignal))
	var res fixtures.Result
	workflowResult(t, h, &res)
	assert.Equal(t, 14, res.Calls)
	assert.False(t, res.Escalated)
}

// TestV9SamplesReviewed: the halt is in the memo before the halt
// handler's Review activity is scheduled, and the handler's resume
// publishes running; version 8 wrote no memo at all for a halt the
// handler resumed.
func TestV9SamplesReviewed(t *testing.T) {
	v9, v8 := readFixture(t, "v9-samples-reviewed.json"), readFixture(t, "v8-samples-reviewed.json")
	assert.Equal(t, []string{"halted:stalled", "running:"}, memoWithout(memoStates(t, v9), "running:"))
	assert.NotContains(t, memoStates(t, v8), "halted:stalled")
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
