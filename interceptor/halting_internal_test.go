package interceptor

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// echoAgent returns its input: the same input, the same output.
func echoAgent(_ context.Context, out string) (string, error) { return out, nil }

// branches runs two branches of five calls each, each returning the same
// output every time: the Code/Verify loop they form repeats.
func branches(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 24 * time.Hour})
	wg := workflow.NewWaitGroup(ctx)
	errs := make([]error, 2)
	for b, node := range []string{"Code", "Verify"} {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			for range 5 {
				out := "same " + node
				if err := workflow.ExecuteActivity(ctx, node, out).Get(ctx, nil); err != nil {
					errs[b] = err
					return
				}
			}
		})
	}
	wg.Wait(ctx)
	return errors.Join(errs...)
}

// raisingEnv is a guarded test environment whose loop.halted local
// activity takes ten minutes of workflow time, with echoAgent registered
// as each of nodes.
func raisingEnv(t *testing.T, nodes ...string) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	env := s.NewTestWorkflowEnvironment()
	g, err := New(Options{HaltSignalTimeout: time.Hour})
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	for _, n := range nodes {
		env.RegisterActivityWithOptions(echoAgent, activity.RegisterOptions{Name: n})
	}
	env.OnActivity(raiseHaltedSignal, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
		func(context.Context, haltedSignal) error { return nil })
	return env
}

// TestStatusShowsTheHaltWhileRaising holds the loop.halted local activity
// for ten minutes of workflow time: all along, the status query shows the
// halt, and the other branch's calls wait instead of raising a second one.
func TestStatusShowsTheHaltWhileRaising(t *testing.T) {
	env := raisingEnv(t, "Code", "Verify")
	env.RegisterWorkflow(branches)

	start := env.Now()
	var raisedAfter time.Duration
	env.SetOnLocalActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) {
		raisedAfter = env.Now().Sub(start)
	})
	query := func() protocol.Status {
		v, err := env.QueryWorkflow(protocol.DefaultStatusQuery)
		require.NoError(t, err)
		var st protocol.Status
		require.NoError(t, v.Get(&st))
		return st
	}
	var raising, paused protocol.Status
	env.RegisterDelayedCallback(func() { raising = query() }, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		paused = query()
		env.SignalWorkflow(protocol.DefaultResumeSignal, nil)
	}, time.Hour)
	// Some orders of the two branches' calls lead the detectors to a later
	// trip of their own: resume it too, so the test ends.
	for k := 2; k <= 6; k++ {
		env.RegisterDelayedCallback(func() {
			if query().State == protocol.StateHalted {
				env.SignalWorkflow(protocol.DefaultResumeSignal, nil)
			}
		}, time.Duration(k)*time.Hour)
	}
	env.ExecuteWorkflow(branches)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.GreaterOrEqual(t, raisedAfter, 10*time.Minute, "the query at 5 minutes came while loop.halted was being raised")
	assert.Equal(t, protocol.StateHalted, raising.State, "halted while loop.halted is being raised")
	assert.Equal(t, 1, raising.Halts)
	assert.Equal(t, protocol.StateHalted, paused.State)
	assert.Equal(t, 1, paused.Halts, "the other branch did not raise a halt of its own")
	assert.Equal(t, protocol.StateRunning, query().State)
}

// TestNoHandlerForAnAnsweredHalt (guard version 9, issue 22 item 7): a
// human's resume that arrives while loop.halted is being raised answers
// the halt; the halt handler is not started for it.
func TestNoHandlerForAnAnsweredHalt(t *testing.T) {
	env := raisingEnv(t, "Code")
	handled := 0
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		if err := SetHaltHandler(ctx, func(workflow.Context, protocol.HaltEvent) (HandlerDecision, error) {
			handled++
			return HandlerDecision{Action: protocol.ActionEscalate, Reason: "the handler's own answer"}, nil
		}); err != nil {
			return err
		}
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Hour})
		for range 4 {
			if err := workflow.ExecuteActivity(ctx, "Code", "same").Get(ctx, nil); err != nil {
				return err
			}
		}
		return nil
	}, workflow.RegisterOptions{Name: "handled"})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana"}) }, 5*time.Minute)
	env.ExecuteWorkflow("handled")
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "resumed by ana, not escalated by the handler")
	assert.Zero(t, handled, "no handler for a halt already answered")
}
