package interceptor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// messagedLoop calls Code with the same output `before` times, waits for
// a user message (its own "message" signal, or its own "message" update),
// then calls Code with the same output `after` times: an agent that got
// the same answer, was told something, and tried again.
func messagedLoop(ctx workflow.Context, before, after int) (loopResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	told := false
	if err := workflow.SetUpdateHandler(ctx, "message", func(ctx workflow.Context, text string) (string, error) {
		told = true
		return "noted", nil
	}); err != nil {
		return loopResult{}, err
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		workflow.GetSignalChannel(ctx, "message").Receive(ctx, nil)
		told = true
	})
	var res loopResult
	call := func() bool {
		err := workflow.ExecuteActivity(ctx, "Code", turn{Output: "same"}, res.Calls).Get(ctx, nil)
		res.Calls++
		if e, ok := interceptor.EscalationFrom(err); ok {
			res.Escalated, res.Reason = true, e.Reason
			return false
		}
		return true
	}
	for range before {
		if !call() {
			return res, nil
		}
	}
	if err := workflow.Await(ctx, func() bool { return told }); err != nil {
		return res, err
	}
	for range after {
		if !call() {
			return res, nil
		}
	}
	return res, nil
}

// TestOutsideInputBreaksRepetition: a user message (a signal or an update
// the workflow handles) between identical calls is new information: no
// repetition spans it. A loop that goes on unchanged after it is still a
// loop, and halts once it has repeated enough after it.
func TestOutsideInputBreaksRepetition(t *testing.T) {
	tests := []struct {
		name          string
		before, after int
		byUpdate      bool
		wantHalt      bool
		wantCalls     int
	}{
		{name: "two, a signal, two", before: 2, after: 2, wantCalls: 4},
		{name: "two, an update, two", before: 2, after: 2, byUpdate: true, wantCalls: 4},
		{name: "two, a signal, three more", before: 2, after: 4, wantHalt: true, wantCalls: 5},
		{name: "two, an update, three more", before: 2, after: 4, byUpdate: true, wantHalt: true, wantCalls: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{})
			env.RegisterWorkflow(messagedLoop)
			env.RegisterDelayedCallback(func() {
				if tt.byUpdate {
					env.UpdateWorkflow("message", "m1", &testUpdate{}, "try the other config file")
					return
				}
				env.SignalWorkflow("message", "try the other config file")
			}, time.Minute)
			var halted protocol.Status
			env.RegisterDelayedCallback(func() {
				halted = status(t, env)
				env.SignalWorkflow(protocol.DefaultEscalateSignal, map[string]string{"by": "test"})
			}, time.Hour)
			env.ExecuteWorkflow(messagedLoop, tt.before, tt.after)
			res := result(t, env)
			if !tt.wantHalt {
				assert.False(t, res.Escalated)
				assert.Equal(t, tt.before+tt.after, res.Calls)
				assert.Zero(t, status(t, env).Halts, "no repetition spans the user's message")
				return
			}
			require.True(t, res.Escalated, "three identical calls after the message")
			assert.Equal(t, tt.wantCalls+1, res.Calls, "the call after the third repeat past the message is paused")
			require.NotNil(t, halted.Halt)
			assert.Equal(t, detect.DetectorIdenticalOutput, halted.Halt.Detector)
		})
	}
}

// TestRefusedControlSignalIsNoNews (guard version 9, issue 22 item 7): an
// operator's escalate sent before anything halted is refused and passed
// on to the workflow, but it is not outside input: the loop halts at the
// same call as without it, not later.
func TestRefusedControlSignalIsNoNews(t *testing.T) {
	give := repeat(8, "Code", "the same patch")
	give[1].Sleep = time.Minute // a moment for the operator's early escalate
	haltedAt := func(early bool) int {
		env := newEnv(t, interceptor.Options{})
		if early {
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ops"})
			}, 30*time.Second)
		}
		halted := statusThen(t, env, decideAfter, func() {
			env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
		})
		env.ExecuteWorkflow(scriptLoop, give)
		assert.True(t, result(t, env).Escalated)
		require.NotNil(t, halted.Halt)
		if early {
			require.NotNil(t, halted.LastRejected, "the early escalate was refused")
			assert.True(t, halted.LastRejected.PassedOn)
		}
		return halted.TotalCalls
	}
	assert.Equal(t, haltedAt(false), haltedAt(true))
}
