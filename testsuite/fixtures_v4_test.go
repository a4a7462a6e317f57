package testsuite_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// The v4- fixtures record what guard version 4 changed (issue 7).

// TestV4ParallelEscalateBoth: the looping branch halts, the other branch's
// next call waits for the same decision, and the decision is escalate: it
// reaches both branches (version 3 let the waiting call go ahead).
func TestV4ParallelEscalateBoth(t *testing.T) {
	const file = "v4-parallel-escalate-both.json"
	h := readFixture(t, file)
	info := testsuite.Inspect(h)
	assert.Equal(t, 4, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals, "one halt for both branches")
	assert.Zero(t, info.WorkflowTaskFailures)
	ev := haltedEvent(t, h, 0)
	assert.Equal(t, interceptor.ReasonStalled, ev.HaltReason)
	assert.Equal(t, "Code", ev.Node)
	assert.Equal(t, []string{"halted:stalled", "escalated:stalled"}, memoStates(t, h), "one pause, one escalation")

	var res fixtures.ParallelResult
	workflowResult(t, h, &res)
	require.Len(t, res.Branches, 2)
	assert.True(t, res.Branches[0].Escalated, "the looping branch is escalated")
	assert.True(t, res.Branches[1].Escalated, "the waiting branch gets the same escalation")
}

// TestV4FixturesNeedVersion4 rewrites the v4 fixture's version marker to 3:
// a version-3 guard lets the waiting branch's call go ahead after the
// escalation, so the history no longer replays.
func TestV4FixturesNeedVersion4(t *testing.T) {
	const file = "v4-parallel-escalate-both.json"
	f := fixtureEntry(t, file)
	recorded, _ := fixtures.GuardOptions(f.Guard)
	h := readFixture(t, file)
	require.NoError(t, testsuite.ReplayHistory(withGuardVersion(t, h, 4), replayOpts(t, f, recorded)), "the rewrite itself is harmless")
	err := testsuite.ReplayHistory(withGuardVersion(t, h, 3), replayOpts(t, f, recorded))
	require.Error(t, err, "at guard version 3 the workflow makes other commands")
	var re *testsuite.ReplayError
	require.True(t, errors.As(err, &re), "%T", err)
	assert.True(t, re.Nondeterministic, "%v", err)
}
