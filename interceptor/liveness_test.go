package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The liveness side of the guard's promises (issue 30): a loop that keeps
// repeating itself IS halted, within interceptor.HaltBound calls of its
// onset, whatever its shape. Each test here failed on guard version 11.

// parallelRounds is an agent whose every round is one model call and
// width parallel searches, all awaited before the next model call. With
// stuck, every round is the same (the same searches, the same results);
// otherwise each round's results are new. It returns the calls it made;
// an escalation ends it.
func parallelRounds(ctx workflow.Context, rounds, width int, stuck bool) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	calls := 0
	for r := range rounds {
		arg := 0
		if !stuck {
			arg = r
		}
		calls++
		if err := workflow.ExecuteActivity(ctx, "Model", arg).Get(ctx, nil); err != nil {
			return calls, ignoreEscalation(err)
		}
		futs := make([]workflow.Future, width)
		for i := range futs {
			calls++
			futs[i] = workflow.ExecuteActivity(ctx, "Search", arg*100+i)
		}
		for _, f := range futs {
			if err := f.Get(ctx, nil); err != nil {
				return calls, ignoreEscalation(err)
			}
		}
	}
	return calls, nil
}

func ignoreEscalation(err error) error {
	if interceptor.IsEscalated(err) {
		return nil
	}
	return err
}

// echoModel and echoSearch answer with what they were asked: a stuck
// agent's rounds are the same, a progressing one's are new.
func echoModel(_ context.Context, arg int) (string, error) { return fmt.Sprintf("plan %d", arg), nil }
func echoSearch(_ context.Context, arg int) (string, error) {
	return fmt.Sprintf("results for query %d", arg), nil
}

// runParallel runs parallelRounds under opts, escalating a halt an hour
// in, and returns the guard's status at the halt (Halt nil: none) and the
// calls the workflow made.
func runParallel(t *testing.T, opts interceptor.Options, rounds, width int, stuck bool) (*protocol.Status, int) {
	t.Helper()
	env := newEnv(t, opts)
	env.RegisterWorkflow(parallelRounds)
	env.RegisterActivityWithOptions(echoModel, activity.RegisterOptions{Name: "Model"})
	env.RegisterActivityWithOptions(echoSearch, activity.RegisterOptions{Name: "Search"})
	halted := statusThen(t, env, time.Hour, func() {
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
	})
	env.ExecuteWorkflow(parallelRounds, rounds, width, stuck)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var calls int
	require.NoError(t, env.GetWorkflowResult(&calls))
	return halted, calls
}

// TestParallelStuckLoopHalts: under the README's own setup (GrainToolCall,
// Warnings 1), an agent stuck in rounds of one model call and width
// parallel searches is warned, then halted within HaltBound calls of the
// onset, the call at which the guard without warnings halts it; the same
// agent making progress is never halted. On guard version 11 the
// warning's window counted calls while the detectors count a fan-out as
// one step: at width 8 the loop was warned over and over, never halted.
func TestParallelStuckLoopHalts(t *testing.T) {
	readme := interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: 1}
	noWarnings := readme
	noWarnings.Warnings = 0
	for _, width := range []int{1, 2, 8, 16} {
		t.Run(fmt.Sprintf("width %d", width), func(t *testing.T) {
			const rounds = 50 // 850 calls at width 16: under GrainToolCall's MaxTotalCalls
			onset, _ := runParallel(t, noWarnings, rounds, width, true)
			require.NotNil(t, onset.Halt, "without warnings the stuck loop halts at its onset")

			st, _ := runParallel(t, readme, rounds, width, true)
			require.NotNil(t, st.Halt, "the warned loop went on unchanged: it must halt")
			bound, err := interceptor.HaltBound(readme, 1+width)
			require.NoError(t, err)
			assert.LessOrEqual(t, st.TotalCalls, onset.TotalCalls+bound,
				"halted %d calls after the onset (call %d), bound %d", st.TotalCalls-onset.TotalCalls, onset.TotalCalls, bound)
			require.Len(t, st.Halt.Warnings, 1, "the halt lists the warning it did not heed")

			progressing, calls := runParallel(t, readme, rounds, width, false)
			assert.Nil(t, progressing.Halt, "a progressing agent is not halted")
			assert.Equal(t, rounds*(1+width), calls)
		})
	}
}

// TestManyWarningsHalt: any number of warnings is spent, then the loop
// halts within HaltBound. On guard version 11 a loop's warnings were
// counted from the list kept for evidence, which holds 8: Warnings 9 or
// more never halted.
func TestManyWarningsHalt(t *testing.T) {
	base := interceptor.Options{Grain: interceptor.GrainToolCall}
	onset, _ := runParallel(t, base, 200, 1, true)
	require.NotNil(t, onset.Halt)
	for _, k := range []int{8, 9, 12} {
		t.Run(fmt.Sprintf("Warnings %d", k), func(t *testing.T) {
			opts := base
			opts.Warnings = k
			bound, err := interceptor.HaltBound(opts, 2)
			require.NoError(t, err)
			rounds := (onset.TotalCalls+bound)/2 + 2
			st, _ := runParallel(t, opts, rounds, 1, true)
			require.NotNil(t, st.Halt, "%d warnings spent, the loop must halt", k)
			assert.Equal(t, k, st.Warnings, "every warning issued before the halt")
			assert.LessOrEqual(t, st.TotalCalls, onset.TotalCalls+bound)
			require.NotEmpty(t, st.Halt.Warnings)
			assert.Equal(t, k, st.Halt.Warnings[len(st.Halt.Warnings)-1].N, "the last unheeded warning is the %dth", k)
		})
	}
}

// codeVerifyRounds is a coder↔verifier loop stuck until its halt ends,
// however it ends; then it changes approach and makes progress for
// rounds more. A LoopEscalated error, or the cancellation of a paused
// call, is handled and the loop goes on, and a resume's guidance heeded (on a disconnected context after
// a cancellation), as the docs allow.
func codeVerifyRounds(ctx workflow.Context, rounds int, handler string) (int, error) {
	if handler != "" {
		if err := interceptor.SetHaltHandler(ctx, func(ctx workflow.Context, _ protocol.HaltEvent) (interceptor.HandlerDecision, error) {
			// The handler takes two hours to decide: a reviewer's time,
			// not the loop's.
			if err := workflow.Sleep(ctx, 2*time.Hour); err != nil {
				return interceptor.HandlerDecision{}, err
			}
			return interceptor.HandlerDecision{Action: protocol.Action(handler), Reason: "reviewed", Guidance: "try another patch"}, nil
		}); err != nil {
			return 0, err
		}
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	fresh, done := 0, 0
	for calls := 0; done < rounds; {
		for _, node := range []string{"Code", "Verify"} {
			calls++
			err := workflow.ExecuteActivity(ctx, node, fresh).Get(ctx, nil)
			var canceled bool
			if errors.Is(err, workflow.ErrCanceled) || ctx.Err() != nil {
				canceled = true
				ctx, _ = workflow.NewDisconnectedContext(ctx)
			}
			n, _ := interceptor.NoticeFor(ctx, node)
			switch {
			case interceptor.IsEscalated(err) || canceled || n.Guidance != "" && fresh == 0:
				fresh = 1
			case err != nil:
				return calls, err
			}
		}
		if fresh > 0 {
			fresh++
			done++
		}
	}
	return done, nil
}

func echoCode(_ context.Context, fresh int) (string, error) {
	return fmt.Sprintf("patch %d", fresh), nil
}

func echoVerify(_ context.Context, fresh int) (string, error) {
	return fmt.Sprintf("1 test failing (attempt %d)", fresh), nil
}

// answerer is what a human does to a test environment's workflow.
type answerer interface {
	SignalWorkflow(name string, arg any)
	CancelWorkflow()
}

// TestEscalatedPauseIsNotRuntime: a halt that ends, after two hours, in
// any way the workflow survives (an escalation by a human, by the pause
// timeout or by the halt handler; a cancellation the workflow handles) is
// not charged to the loop: with MaxCycleRuntime 30m the loop that goes on
// with new results after it is not halted for its runtime. On guard
// version 11 only a resume took the pause off; every other end charged
// the loop two hours, and its next call halted.
func TestEscalatedPauseIsNotRuntime(t *testing.T) {
	tests := []struct {
		name    string
		opts    interceptor.Options
		handler string
		// halts is 1 but after a cancellation, which decides nothing: the
		// trip stays and the workflow's next call halts again, for the
		// loop, not for its runtime.
		halts  int
		answer func(env answerer)
	}{
		{name: "escalated by a human", answer: func(env answerer) {
			env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
		}},
		{name: "escalated by the pause timeout", opts: interceptor.Options{PauseTimeout: 2 * time.Hour}},
		{name: "escalated by the handler", handler: string(protocol.ActionEscalate)},
		{name: "resumed by the handler", handler: string(protocol.ActionResume)},
		{name: "canceled while paused", halts: 2, answer: func(env answerer) {
			env.CancelWorkflow()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.MaxCycleRuntime = 30 * time.Minute
			env := newEnv(t, opts)
			env.RegisterWorkflow(codeVerifyRounds)
			env.RegisterActivityWithOptions(echoCode, activity.RegisterOptions{Name: "Code"})
			env.RegisterActivityWithOptions(echoVerify, activity.RegisterOptions{Name: "Verify"})
			if tt.answer != nil {
				env.RegisterDelayedCallback(func() { tt.answer(env) }, 2*time.Hour)
			}
			// A second halt would pause the workflow for good: escalate it
			// so the test ends and says so.
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "test", Reason: "second halt"})
			}, 10*time.Hour)
			env.ExecuteWorkflow(codeVerifyRounds, 6, tt.handler)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			st := status(t, env)
			assert.Equal(t, max(tt.halts, 1), st.Halts, "halts: the last %+v", st.Halt)
			if st.Halt != nil { // resumed: no halt shows
				assert.NotEqual(t, protocol.ReasonBudgetExceeded, st.Halt.HaltReason, st.Halt.Message)
			}
		})
	}
}

// noticeRounds is parallelRounds that asks NoticeFor before every call
// whether a warning is in force for it, and passes each call its number:
// the activities report what their headers carried under that number.
func noticeRounds(ctx workflow.Context, rounds, width int) (map[int]bool, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	told := map[int]bool{}
	call := 0
	start := func(node string) workflow.Future {
		call++
		n, _ := interceptor.NoticeFor(ctx, node)
		told[call] = n.Warning != nil
		return workflow.ExecuteActivity(ctx, node, call)
	}
	for range rounds {
		if err := start("Model").Get(ctx, nil); err != nil {
			return told, err
		}
		futs := make([]workflow.Future, width)
		for i := range futs {
			futs[i] = start("Search")
		}
		for _, f := range futs {
			if err := f.Get(ctx, nil); err != nil {
				return told, err
			}
		}
	}
	return told, nil
}

// headerLog records, by call number, whether a call's header carried a
// warning; the agent repeats itself until a call is warned, then makes
// progress.
type headerLog struct {
	mu      sync.Mutex
	carried map[int]bool
	changed bool
}

func (h *headerLog) activity(ctx context.Context, call int) (string, error) {
	n, _ := interceptor.NoticeFrom(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.carried[call] = n.Warning != nil
	if n.Warning != nil {
		h.changed = true
	}
	if h.changed {
		return fmt.Sprintf("new result %d", call), nil
	}
	return "the same result", nil
}

// TestNoticeForMatchesTheHeader: what NoticeFor tells workflow code
// before a call is what that call's header carries, call for call,
// including the call that ends the warning's window (the loop heeded it:
// the guard takes the warning off before that call). Before, NoticeFor
// still showed the warning at that call. The one exception is documented:
// a warning issued at a call is in force from that call on.
func TestNoticeForMatchesTheHeader(t *testing.T) {
	for _, width := range []int{1, 3} {
		t.Run(fmt.Sprintf("width %d", width), func(t *testing.T) {
			h := &headerLog{carried: map[int]bool{}}
			env := newEnv(t, interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: 1})
			env.RegisterWorkflow(noticeRounds)
			env.RegisterActivityWithOptions(h.activity, activity.RegisterOptions{Name: "Model"})
			env.RegisterActivityWithOptions(h.activity, activity.RegisterOptions{Name: "Search"})
			env.ExecuteWorkflow(noticeRounds, 30, width)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var told map[int]bool
			require.NoError(t, env.GetWorkflowResult(&told))
			require.True(t, h.changed, "the loop was warned")
			for call := 1; call <= len(h.carried); call++ {
				if h.carried[call] && !h.carried[call-1] && !told[call] {
					// The documented exception: a warning issued at a call
					// is in force from that call on; NoticeFor, asked
					// before it, cannot know.
					continue
				}
				assert.Equal(t, h.carried[call], told[call], "call %d: the header carried a warning: %v", call, h.carried[call])
			}
		})
	}
}

// TestDocsStateTheLivenessBound: the figures protocol.md gives for the
// bound are HaltBound's.
func TestDocsStateTheLivenessBound(t *testing.T) {
	raw, err := os.ReadFile("../docs/protocol.md")
	require.NoError(t, err)
	doc := strings.Join(strings.Fields(string(raw)), " ") // as wrapped
	readme, err := interceptor.HaltBound(interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: 1}, 9)
	require.NoError(t, err)
	assert.Contains(t, doc, fmt.Sprintf("round of one model call and 8 parallel searches (C = 9) is halted within %d calls of its onset", readme))
	assert.Contains(t, doc, fmt.Sprintf("`Warnings: 1`: R = %d)", detect.RetripRounds(detect.ToolCallPolicy())))
	assert.Contains(t, doc, fmt.Sprintf("With zero Options and `Warnings: 1`, R = %d.", detect.RetripRounds(detect.DefaultPolicy())))
	assert.Contains(t, doc, "B = (Warnings × (R + 1) + 1) × C")
}
