package interceptor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// reviewer is the activity a halt handler asks: it reads the halt and
// proposes what the agent should do instead.
func reviewer(ctx context.Context, halt protocol.HaltEvent) (string, error) {
	return "the loop at " + halt.Node + " repeats: read config/prod.yaml", nil
}

// handledLoop is guidedLoop with a halt handler that does what mode says.
func handledLoop(ctx workflow.Context, n int, mode string) ([]string, error) {
	err := interceptor.SetHaltHandler(ctx, func(ctx workflow.Context, halt protocol.HaltEvent) (interceptor.HandlerDecision, error) {
		switch mode {
		case "review":
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
			var advice string
			if err := workflow.ExecuteActivity(actx, "Reviewer", halt).Get(ctx, &advice); err != nil {
				return interceptor.HandlerDecision{}, err
			}
			return interceptor.HandlerDecision{Action: protocol.ActionResume, Reason: "reviewed", Guidance: advice}, nil
		case "escalate":
			return interceptor.HandlerDecision{Action: protocol.ActionEscalate, Reason: "no reviewer can help"}, nil
		case "fail":
			return interceptor.HandlerDecision{}, errors.New("reviewer unavailable")
		case "panic":
			panic("handler bug")
		case "hang":
			// A reviewer that never answers.
			_ = workflow.Await(ctx, func() bool { return false })
		case "slow review":
			// A review that takes half an hour of workflow time.
			_ = workflow.Sleep(ctx, 30*time.Minute)
			return interceptor.HandlerDecision{Action: protocol.ActionResume, Reason: "reviewed", Guidance: "slow advice"}, nil
		case "sleep":
			// A slow reviewer, whose resume comes after the human's.
			_ = workflow.Sleep(ctx, 3*time.Hour)
			return interceptor.HandlerDecision{Action: protocol.ActionResume, Guidance: "too late"}, nil
		}
		return interceptor.HandlerDecision{}, nil // a human decides
	})
	if err != nil {
		return nil, err
	}
	out, err := guidedLoop(ctx, n, false)
	if e, ok := interceptor.EscalationFrom(err); ok {
		return append(out, "escalated: "+e.Reason), nil
	}
	return out, err
}

// runHandled runs handledLoop for 6 turns and checks its last output.
func runHandled(t *testing.T, env *testsuite.TestWorkflowEnvironment, mode, wantLast string) {
	t.Helper()
	env.ExecuteWorkflow(handledLoop, 6, mode)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, wantLast, out[len(out)-1])
}

// TestHaltHandler: the workflow's halt handler runs before a human is
// asked. It may ask a reviewer activity (whose call is not guarded and
// does not wait on the halt) and resume with guidance the agent follows,
// escalate, or hand the halt to a human; an error or a panic hands it to
// a human too.
func TestHaltHandler(t *testing.T) {
	tests := []struct {
		mode      string
		wantHuman bool
		wantLast  string
	}{
		{mode: "review", wantLast: `turn 5, following "the loop at HeedfulAgent repeats: read config/prod.yaml" from halt handler`},
		{mode: "escalate", wantLast: "escalated: no reviewer can help"},
		{mode: "human", wantHuman: true, wantLast: `turn 5, following "carry on" from ana`},
		{mode: "fail", wantHuman: true, wantLast: `turn 5, following "carry on" from ana`},
		{mode: "panic", wantHuman: true, wantLast: `turn 5, following "carry on" from ana`},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			env := newAgentEnv(t, interceptor.Options{}, handledLoop, heedfulAgent)
			env.RegisterActivityWithOptions(reviewer, activity.RegisterOptions{Name: "Reviewer"})
			var at protocol.Status
			env.RegisterDelayedCallback(func() {
				at = status(t, env)
				env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "carry on"})
			}, time.Hour)
			runHandled(t, env, tt.mode, tt.wantLast)
			assert.Equal(t, tt.wantHuman, at.State == protocol.StateHalted, "a human was asked")
			assert.False(t, at.Handling, "the handler has decided or handed over")
			st := status(t, env)
			assert.Equal(t, 1, st.Halts)
			for _, n := range st.Nodes {
				assert.NotEqual(t, "Reviewer", n.Node, "the handler's calls are not guarded")
			}
			if !tt.wantHuman {
				require.NotNil(t, st.LastDecision)
				assert.Equal(t, interceptor.HandlerBy, st.LastDecision.By)
			}
			if tt.mode == "review" {
				assert.Contains(t, currentDetails(t, env), "resumed with guidance** (halt 1, by halt handler)", "the UI says what the agent is told")
			}
		})
	}
}

// TestSetHaltHandlerUnguarded: a workflow the guard does not guard gets
// ErrNotGuarded.
func TestSetHaltHandlerUnguarded(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{Workflows: []string{"SomethingElse"}}, handledLoop, heedfulAgent)
	env.ExecuteWorkflow(handledLoop, 2, "review")
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not guarded")
}

// TestHumanWinsWhileTheHandlerRuns: from guard version 8 the halt handler
// races the human. A decision sent while it runs (it hangs, or sleeps
// longer) ends the halt at once, by signal or by update; PauseTimeout
// counts the handler's time; the handler's late decision is dropped.
func TestHumanWinsWhileTheHandlerRuns(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		timeout  time.Duration
		escalate bool // the human escalates by update instead of resuming by signal
		silent   bool // no human
		wantLast string
		wantBy   string
	}{
		{name: "hung handler, resume signal", mode: "hang", wantLast: `turn 5, following "carry on" from ana`, wantBy: "ana"},
		{name: "hung handler, escalate update", mode: "hang", escalate: true, wantLast: "escalated: stuck reviewer", wantBy: "ana"},
		{name: "hung handler, pause timeout", mode: "hang", timeout: 2 * time.Hour, silent: true, wantLast: "escalated: no decision within the pause timeout of 2h0m0s", wantBy: "loopguard"},
		{name: "slow handler, resume signal", mode: "sleep", wantLast: `turn 5, following "carry on" from ana`, wantBy: "ana"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newAgentEnv(t, interceptor.Options{PauseTimeout: tt.timeout}, handledLoop, heedfulAgent)
			var decidedAt time.Time
			if !tt.silent {
				env.RegisterDelayedCallback(func() {
					st := status(t, env)
					assert.True(t, st.State == protocol.StateHalted && st.Handling, "halted, the handler deciding: %+v", st)
					decidedAt = env.Now()
					if tt.escalate {
						env.UpdateWorkflow(protocol.DefaultEscalateUpdate, "u1", &testUpdate{onReject: func(err error) { t.Errorf("refused: %v", err) }},
							protocol.EscalateRequest{By: "ana", Reason: "stuck reviewer"})
						return
					}
					env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "carry on"})
				}, time.Hour)
			}
			runHandled(t, env, tt.mode, tt.wantLast)
			st := status(t, env)
			require.NotNil(t, st.LastDecision)
			assert.Equal(t, tt.wantBy, st.LastDecision.By)
			if !decidedAt.IsZero() {
				assert.Less(t, env.Now().Sub(decidedAt), time.Hour, "the loop went on when the human decided, not when the handler would have")
			}
		})
	}
}

// TestHandlerTimeIsNotTheLoops (guard version 9, issue 22 item 5): with
// MaxCycleRuntime 10m, a halt handler whose review takes 30 minutes
// resumes the loop, and the loop goes on: the handler's time, like a
// human's, is not charged to any runtime budget.
func TestHandlerTimeIsNotTheLoops(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{MaxCycleRuntime: 10 * time.Minute, MaxNodeRuntime: 10 * time.Minute}, handledLoop, heedfulAgent)
	runHandled(t, env, "slow review", `turn 5, following "slow advice" from halt handler`)
	st := status(t, env)
	assert.Equal(t, 1, st.Halts, "one halt: the stall, not the handler's half hour")
}

// TestTheHaltIsPublishedBeforeTheHandler (guard version 9, issue 22 item
// 6): an hour into a hung halt handler, operators see the halt: the memo
// says halted (and so would the search attribute and PausedSince, written
// by the same publish), and the current details say the handler is
// deciding. The human's resume ends it, and the memo says running.
func TestTheHaltIsPublishedBeforeTheHandler(t *testing.T) {
	env := newAgentEnv(t, interceptor.Options{}, handledLoop, heedfulAgent)
	var memos []string
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		data, err := json.Marshal(args.Get(0).(map[string]any)["loopguard"])
		require.NoError(t, err)
		var m memoEntry
		require.NoError(t, json.Unmarshal(data, &m))
		memos = append(memos, m.String())
	}).Return(nil)
	var details string
	var seen []string
	env.RegisterDelayedCallback(func() {
		details, seen = currentDetails(t, env), append([]string(nil), memos...)
		env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana", Guidance: "carry on"})
	}, time.Hour)
	runHandled(t, env, "hang", `turn 5, following "carry on" from ana`)
	assert.Equal(t, []string{"halted"}, seen, "the memo showed the halt while the handler ran")
	assert.Contains(t, details, "the halt handler is deciding halt 1")
	assert.Contains(t, details, "Resume:", "with the commands a human answers with")
	assert.Equal(t, []string{"halted", "running"}, memos)
}
