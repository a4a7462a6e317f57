package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// The v4- fixtures record what guard version 4 changed (issue 7).

// TestV4ParallelEscalateBoth: the looping branch halts, the other branch's
// next call waits for the same decision, and the decision is escalate: it
// reaches both branches (version 3 let the waiting call go ahead).
func TestV4ParallelEscalateBoth(t *testing.T) {
	const file = "parallel-escalate-both.json"
	h := readFixture(t, file)
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals, "one halt for both branches")
	assert.Zero(t, info.WorkflowTaskFailures)
	ev := haltedEvent(t, h, 0)
	assert.Equal(t, protocol.ReasonStalled, ev.HaltReason)
	assert.Equal(t, "Code", ev.Node)
	assert.Equal(t, []string{"halted:stalled", "escalated:stalled"}, memoStates(t, h), "one pause, one escalation")

	var res fixtures.ParallelResult
	workflowResult(t, h, &res)
	require.Len(t, res.Branches, 2)
	assert.True(t, res.Branches[0].Escalated, "the looping branch is escalated")
	assert.True(t, res.Branches[1].Escalated, "the waiting branch gets the same escalation")
}
