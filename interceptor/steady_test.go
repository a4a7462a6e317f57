package interceptor_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Regression tests of issue 14 (production safety, second pass), guard
// version 5.

// passRate is a ResultHook that reads "passed/total" from the scripted
// agent's output and declares passed/total as a higher-is-better metric,
// the way a user computes a pass rate: 0/0 is NaN, 1/0 is +Inf.
func passRate(_ string, data []byte, obs *interceptor.Observation) {
	var r agentResult
	if json.Unmarshal(data, &r) != nil {
		return
	}
	p, t, ok := strings.Cut(r.Output, "/")
	if !ok {
		return
	}
	passed, _ := strconv.ParseFloat(p, 64)
	total, _ := strconv.ParseFloat(t, 64)
	obs.HasMetric, obs.Metric = true, passed/total
}

// TestNonFiniteHookMetricIsDropped: a converging loop whose first check
// collected no tests (0/0, NaN) and then one that divided by zero (+Inf)
// is not halted: the guard drops what is not a number. Before version 5
// the NaN became the best value, nothing improved on it, and the halt's
// evidence could not be encoded.
func TestNonFiniteHookMetricIsDropped(t *testing.T) {
	for _, first := range []string{"0/0", "1/0", "-1/0"} {
		t.Run(first, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{
				ResultHook: passRate,
				Nodes:      map[string]interceptor.NodeOptions{"Verify": {HigherIsBetter: true}},
			})
			var give []turn
			for i, rate := range []string{first, "3/10", "3/10", "4/10", "4/10", "5/10", "6/10", "7/10"} {
				give = append(give, turn{Node: "Code", Output: fmt.Sprint("patch ", i)}, turn{Node: "Verify", Output: rate})
			}
			env.ExecuteWorkflow(scriptLoop, give)
			res := result(t, env)
			assert.False(t, res.Escalated)
			assert.Equal(t, len(give), res.Calls)
			assert.Zero(t, status(t, env).Halts, "a converging loop is not halted")
		})
	}
}

// TestNonFiniteMetricsNeverReachTheEvidence: a loop that does stall while
// its hook says NaN every other time halts, and its halt is readable: the
// status query answers and the escalation reaches the workflow.
func TestNonFiniteMetricsNeverReachTheEvidence(t *testing.T) {
	env := newEnv(t, interceptor.Options{
		ResultHook: passRate,
		Nodes:      map[string]interceptor.NodeOptions{"Verify": {HigherIsBetter: true}},
	})
	var give []turn
	for i := range 12 {
		rate := "3/10"
		if i%2 == 1 {
			rate = "0/0"
		}
		give = append(give, turn{Node: "Code", Output: fmt.Sprint("patch ", i)}, turn{Node: "Verify", Output: rate})
	}
	halted := statusThen(t, env, decideAfter, func() { env.SignalWorkflow("escalate", nil) })
	env.ExecuteWorkflow(scriptLoop, give)
	res := result(t, env)
	assert.True(t, res.Escalated, "the escalation reached the workflow")
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonStalled, halted.Halt.HaltReason)
	for _, m := range halted.Halt.Evidence.Metrics {
		assert.False(t, math.IsNaN(m) || math.IsInf(m, 0), "evidence %v", halted.Halt.Evidence.Metrics)
	}
	_, err := json.Marshal(halted.Halt)
	assert.NoError(t, err)
}

// TestPanickingHookIsRecovered: a ResultHook that panics does not fail the
// workflow task: the guard reads the result without it.
func TestPanickingHookIsRecovered(t *testing.T) {
	env := newEnv(t, interceptor.Options{ResultHook: func(string, []byte, *interceptor.Observation) { panic("hook bug") }})
	env.ExecuteWorkflow(scriptLoop, codeVerify([]string{"p1", "p2", "p3", "p4"}, []int{4, 3, 2, 1}))
	res := result(t, env)
	assert.Equal(t, 8, res.Calls)
	assert.Zero(t, status(t, env).Halts)
}

// approvalLoop calls Code n times, waiting (workflow.Await, no timer)
// for a "next" signal before each call from the fourth on: an agent whose
// operator approves every step once it has started. (The first three
// calls have no signal between them: a signal is outside input, and from
// guard version 6 no repetition spans it.)
func approvalLoop(ctx workflow.Context, n int) (loopResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	approved := 0
	workflow.Go(ctx, func(ctx workflow.Context) {
		next := workflow.GetSignalChannel(ctx, "next")
		for {
			next.Receive(ctx, nil)
			approved++
		}
	})
	var res loopResult
	for i := range n {
		if err := workflow.Await(ctx, func() bool { return approved >= i-2 }); err != nil {
			return res, err
		}
		err := workflow.ExecuteActivity(ctx, "Code", turn{Output: "same"}, i).Get(ctx, nil)
		res.Calls++
		if e, ok := interceptor.EscalationFrom(err); ok {
			res.Escalated, res.Reason = true, e.Reason
			return res, nil
		}
	}
	return res, nil
}

// TestHumanStopBehindAnObservedTrip: under OnHalt observe, a human sends
// halt while a detector's trip is pending (read while the loop waits for
// its next approval). The trip is observed, and the human's stop then
// pauses the call; before version 5 the stop was refused as "a halt is
// already pending" and the agent ran on.
func TestHumanStopBehindAnObservedTrip(t *testing.T) {
	env := newEnv(t, interceptor.Options{OnHalt: protocol.OnHaltObserve})
	env.RegisterWorkflow(approvalLoop)
	for k := 1; k <= 5; k++ {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow("next", nil) }, time.Duration(k)*time.Minute)
	}
	// The third identical result trips while the loop waits for its first
	// approval (at 1 min).
	var asked, paused protocol.Status
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("halt", map[string]string{"by": "ana", "reason": "wrong repository"})
	}, 30*time.Second)
	env.RegisterDelayedCallback(func() { asked = status(t, env) }, 40*time.Second)
	env.RegisterDelayedCallback(func() {
		paused = status(t, env)
		env.SignalWorkflow("resume", map[string]string{"by": "ana"})
	}, time.Hour)
	env.ExecuteWorkflow(approvalLoop, 6)
	res := result(t, env)

	assert.Nil(t, asked.LastRejected, "the stop is taken")
	assert.True(t, asked.Stopping, "and waits for the next call")
	assert.Equal(t, protocol.StateHalted, paused.State, "the human's stop pauses even in observe mode")
	require.NotNil(t, paused.Halt)
	assert.Equal(t, protocol.ReasonUserStop, paused.Halt.HaltReason)
	assert.Equal(t, "ana asked to stop: wrong repository", paused.Halt.Message)
	assert.Equal(t, 2, paused.Halts, "the detector's trip was observed first")
	assert.False(t, res.Escalated)
	assert.Equal(t, 6, res.Calls)
	final := status(t, env)
	assert.False(t, final.Stopping)
	assert.Equal(t, protocol.StateRunning, final.State)
}

// TestPausedTimeIsNotChargedToCallsInFlight: a sub-agent's Research call
// is in flight when the coder's branch halts; it ends twenty minutes into
// an hour's pause, and nothing reads it until the coder calls again after
// the resume. With MaxNodeRuntime 30m the coder's own Research call must
// not halt: before version 5 the in-flight call was charged the hour.
func TestPausedTimeIsNotChargedToCallsInFlight(t *testing.T) {
	requireOneHaltAcrossPause(t, 30*time.Minute, []turn{{Node: "Research"}})
}

// TestPausedTimeIsNotChargedToCallsReadDuringIt (guard version 11,
// found by the schedule test's handler-time invariant): as above, but the
// sub-agent's branch waits after its Research call ends, twenty minutes
// into the pause, so the guard reads the result during the pause. The
// resume takes the pause off only the calls still in flight; from version
// 11 a call read while a halt is in force is charged up to the halt's
// start, so with MaxNodeRuntime 15m the coder's Research call does not
// halt on the twenty minutes the human took. (Version 10 charged them.)
func TestPausedTimeIsNotChargedToCallsReadDuringIt(t *testing.T) {
	// Notes is the researcher's own node: its result is read only when the
	// coder next calls, twenty minutes after it ended (results are read at
	// a call or an idle wait, not at Future.Get), which is not this test's.
	requireOneHaltAcrossPause(t, 15*time.Minute, []turn{{Node: "Research"}, {Node: "Notes", Output: "notes", Sleep: time.Minute}})
}

// requireOneHaltAcrossPause runs a coder that stalls and halts at once,
// resumed after an hour, beside the researcher's turns, whose Research
// call takes twenty minutes of that hour, under MaxNodeRuntime limit:
// the coder's own Research call after the resume must not halt.
func requireOneHaltAcrossPause(t *testing.T, limit time.Duration, researcher []turn) {
	t.Helper()
	env := newEnv(t, interceptor.Options{MaxNodeRuntime: limit})
	env.OnActivity("Research", mock.Anything, mock.Anything, mock.Anything).
		Return(agentResult{Output: "found"}, nil).After(20 * time.Minute)
	coder := append(repeat(4, "Code", "same"), turn{Node: "Research"}, turn{Node: "Plan", Output: "plan"})
	halted := statusThen(t, env, time.Hour, func() { env.SignalWorkflow("resume", nil) })
	var later protocol.Status
	env.RegisterDelayedCallback(func() {
		later = status(t, env)
		if later.State == protocol.StateHalted {
			env.SignalWorkflow("escalate", nil)
		}
	}, 3*time.Hour)
	env.ExecuteWorkflow(twoBranches, coder, researcher)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	res := twoBranchResults(t, env)
	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonStalled, halted.Halt.HaltReason, "the coder's stall halts")
	if later.Halt != nil {
		t.Logf("second halt: %s %s", later.Halt.Detector, later.Halt.Message)
	}
	assert.Equal(t, 1, status(t, env).Halts, "no node_runtime halt after the resume")
	assert.False(t, res[0].Escalated)
	assert.Equal(t, 6, res[0].Calls)
	assert.Equal(t, len(researcher), res[1].Calls)
}

// hedged is an agent that asks two backends the same question each round
// and takes the first answer, canceling the other: the losers end
// canceled, round after round, under their own node name.
func hedged(ctx workflow.Context, rounds int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	won := 0
	for i := range rounds {
		cctx, cancel := workflow.WithCancel(ctx)
		fast := workflow.ExecuteActivity(cctx, "Research", turn{Output: fmt.Sprint("answer ", i)}, i)
		slow := workflow.ExecuteActivity(cctx, "Plan", turn{Output: fmt.Sprint("late ", i)}, i)
		var err error
		workflow.NewSelector(ctx).
			AddFuture(fast, func(f workflow.Future) { err = f.Get(ctx, nil) }).
			AddFuture(slow, func(f workflow.Future) { err = f.Get(ctx, nil) }).
			Select(ctx)
		cancel()
		_ = slow.Get(ctx, nil) // the loser's cancellation
		_ = fast.Get(ctx, nil)
		if interceptor.IsEscalated(err) {
			return won, err
		}
		won++
	}
	return won, nil
}

// TestHedgedLosersAreNotRepeatedErrors: the canceled losers of hedged
// calls are not "the same error N times in a row".
func TestHedgedLosersAreNotRepeatedErrors(t *testing.T) {
	env := newEnv(t, interceptor.Options{})
	env.RegisterWorkflow(hedged)
	env.OnActivity("Plan", mock.Anything, mock.Anything, mock.Anything).
		Return(agentResult{Output: "late"}, nil).After(time.Hour)
	var seen protocol.Status
	env.RegisterDelayedCallback(func() {
		seen = status(t, env)
		if seen.State == protocol.StateHalted {
			env.SignalWorkflow("escalate", nil)
		}
	}, decideAfter)
	env.ExecuteWorkflow(hedged, 8)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "halted: %+v", seen.Halt)
	var won int
	require.NoError(t, env.GetWorkflowResult(&won))
	assert.Equal(t, 8, won)
	assert.Zero(t, status(t, env).Halts)
}
