package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// driftScript stalls once under the default thresholds (three identical
// Code/Verify iterations: identical_output halts the next call), then makes
// progress to the end. Under fixtures.DriftedOptions (RepeatThreshold 2,
// MaxCycleIterations 2, MaxTotalCalls 3, OnHalt fail) it would have been
// escalated long before its end.
func driftScript() []fixtures.Turn {
	return []fixtures.Turn{
		{Node: "Code", Output: "patch a"}, {Node: "Verify", Output: "4 failing"},
		{Node: "Code", Output: "patch b"}, {Node: "Verify", Output: "3 failing"},
		{Node: "Code", Output: "patch b"}, {Node: "Verify", Output: "3 failing"},
		{Node: "Code", Output: "patch b"}, // third identical iteration: the next call halts
		{Node: "Verify", Output: "3 failing"},
		{Node: "Code", Output: "patch c"}, {Node: "Verify", Output: "0 failing"},
	}
}

// TestConfigDrift halts a workflow under one policy, replaces its worker by
// one with other thresholds, another OnHalt and renamed signals, and shows
// that the workflow replays on the new worker and finishes under the policy
// pinned when it started: still paused on the same halt, resumed by the
// original "resume" signal, no further halt, no escalation.
func TestConfigDrift(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	queue := queueFor(t)

	stopOld := fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))
	id := queue + "-wf"
	run := start(t, ctx, c, queue, id, fixtures.WorkflowScripted, driftScript())
	before := waitStatus(t, ctx, c, id, testsuite.Halted(1))
	require.Equal(t, protocol.ReasonStalled, before.Halt.HaltReason)
	require.Equal(t, "Code", before.Halt.Node)
	require.Equal(t, protocol.OnHaltPause, before.Policy)

	stopOld()
	drifted := fixtures.DriftedOptions()
	fixtureWorker(t, c, queue, &drifted)

	// The new worker replays the paused history (queries are answered by a
	// replay from scratch on a worker that has not cached it).
	after := waitStatus(t, ctx, c, id, testsuite.Halted(1))
	assert.Equal(t, before.Halt, after.Halt, "the same halt, evidence and all")
	assert.Equal(t, protocol.OnHaltPause, after.Policy, "the pinned policy, not the new worker's fail")
	assert.Equal(t, before.TotalCalls, after.TotalCalls)

	require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultResumeSignal, map[string]string{"by": "test", "reason": "after the redeploy"}))
	res := result(t, ctx, run)
	assert.Equal(t, len(driftScript()), res.Calls, "the loop ran to its end under the pinned thresholds")
	assert.False(t, res.Escalated)

	final, err := testsuite.QueryStatus(ctx, c, id, "")
	require.NoError(t, err)
	assert.Equal(t, protocol.StateRunning, final.State)
	assert.Equal(t, 1, final.Halts)
	require.NotNil(t, final.LastDecision)
	assert.Equal(t, protocol.ActionResume, final.LastDecision.Action)
	assert.Equal(t, 1, countEvents(t, ctx, c, id, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)-1, "loop.halted once, plus the resume")

	requireHealthyHistory(t, ctx, c, id, "")
}
