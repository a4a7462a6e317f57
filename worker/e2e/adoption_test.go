package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// TestAdoption starts workflows on a worker without the guard, stops it
// while they wait mid-way (on a timer, on a signal, and one about to
// continue as new), and lets a worker with the guard finish them: no
// non-determinism, and the guard stays out of the way of the executions it
// did not start (status "disabled", no halt although their outputs stall),
// while the run that continues as new on the guarded worker is a new
// execution and is guarded.
func TestAdoption(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	queue := queueFor(t)

	stopPlain := fixtureWorker(t, c, queue, nil)

	// Both stall (4 identical Code outputs from the third call): a guard
	// would halt them, had it started them.
	onTimer := fixtures.Stalling("Code", 8, 2)
	onTimer[3].Sleep = 3 * time.Second
	onSignal := fixtures.Stalling("Code", 8, 2)
	onSignal[3].WaitSignal = true
	continuing := fixtures.ContinueInput{Turns: fixtures.Distinct("Research", 6), PerRun: 3}
	continuing.Turns[2].WaitSignal = true

	runs := map[string]client.WorkflowRun{}
	runs[queue+"-timer"] = start(t, ctx, c, queue, queue+"-timer", fixtures.WorkflowScripted, onTimer)
	runs[queue+"-signal"] = start(t, ctx, c, queue, queue+"-signal", fixtures.WorkflowScripted, onSignal)
	runs[queue+"-continue"] = start(t, ctx, c, queue, queue+"-continue", fixtures.WorkflowContinue, continuing)
	firstRun := map[string]string{}
	for id, r := range runs {
		firstRun[id] = r.GetRunID()
	}

	// Mid-way: three calls done and a timer running, two calls done and
	// waiting for signals.
	waitEvents(t, ctx, c, queue+"-timer", enumspb.EVENT_TYPE_TIMER_STARTED, 1)
	waitEvents(t, ctx, c, queue+"-signal", enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 3)
	waitEvents(t, ctx, c, queue+"-continue", enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 2)
	assert.Zero(t, countEvents(t, ctx, c, queue+"-timer", enumspb.EVENT_TYPE_TIMER_FIRED), "stopped before the timer fired")
	stopPlain()

	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))
	for _, id := range []string{queue + "-signal", queue + "-continue"} {
		require.NoError(t, c.SignalWorkflow(ctx, id, "", fixtures.ProceedSignal, nil))
	}

	for _, id := range []string{queue + "-timer", queue + "-signal"} {
		var res fixtures.Result
		require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, &res), id)
		assert.Equal(t, 8, res.Calls, "%s: all calls made, no halt", id)
		assert.False(t, res.Escalated)
		s, err := testsuite.QueryStatus(ctx, c, id, "")
		require.NoError(t, err)
		assert.Equal(t, protocol.StateDisabled, s.State, "%s: the guard leaves an execution it did not start alone", id)
		assert.Zero(t, s.Halts)
		h := requireHealthyHistory(t, ctx, c, id, "")
		assert.False(t, testsuite.Inspect(h).Guarded, "no guard marker was added to the adopted history")
	}

	id := queue + "-continue"
	var res fixtures.Result
	require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, &res))
	assert.Equal(t, 6, res.Calls)
	assert.Equal(t, 2, res.Runs)
	h1 := requireHealthyHistory(t, ctx, c, id, firstRun[id])
	assert.False(t, testsuite.Inspect(h1).Guarded, "run 1 started unguarded")
	assert.True(t, testsuite.Inspect(h1).ContinuedAsNew)
	h2 := requireHealthyHistory(t, ctx, c, id, "")
	assert.True(t, testsuite.Inspect(h2).Guarded, "run 2 started on the guarded worker: a new execution, guarded")
	s, err := testsuite.QueryStatus(ctx, c, id, "")
	require.NoError(t, err)
	assert.Equal(t, protocol.StateRunning, s.State)
	assert.Equal(t, 3, s.TotalCalls, "run 2's guard starts afresh: nothing carried from an unguarded run")
}
