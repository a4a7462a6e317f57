package interceptor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// ladderLog is what a test of the ladder saw, in order: "c" for a guarded
// call, "W" for a call that carried a new warning (and was made), "H" for
// a halt answered (by a human or the halt handler).
type ladderLog struct {
	mu     sync.Mutex
	events []string
	warned int
}

func (l *ladderLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// call records one guarded call, and a new warning it carries.
func (l *ladderLog) call(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil && n.Warning.N > l.warned {
		l.warned = n.Warning.N
		l.events = append(l.events, "W")
	}
	l.events = append(l.events, "c")
}

// gaps returns, after each reset (W or H), how many calls came before the
// next halt (H); the last reset's gap is left out when no halt followed.
func (l *ladderLog) gaps() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	n, open := 0, false
	for _, e := range l.events {
		switch e {
		case "c":
			n++
		case "H":
			if open {
				out = append(out, n)
			}
			n, open = 0, true
		case "W":
			if open {
				// A warning after a halt is a reset of its own.
				out = append(out, -1)
			}
			n, open = 0, true
		}
	}
	return out
}

// planSwitcher is a plan→build→test agent that switches between two plans
// it has tried (A, B, B, A, again and again): generation 3's stale-round
// rule halts it (transition_oscillation) after four rounds.
func planSwitcher(log *ladderLog) map[string]func(context.Context, int) (string, error) {
	plan := func(i int) string { return []string{"A", "B", "B", "A"}[i%4] }
	return map[string]func(context.Context, int) (string, error){
		"Plan":  func(ctx context.Context, i int) (string, error) { log.call(ctx); return "plan " + plan(i), nil },
		"Build": func(ctx context.Context, i int) (string, error) { log.call(ctx); return "built " + plan(i), nil },
		"Test": func(ctx context.Context, i int) (string, error) {
			log.call(ctx)
			return "3 tests fail with " + plan(i), nil
		},
	}
}

// roundsLoop runs rounds of Plan, Build and Test; with handler set, a halt
// handler resumes each halt (logging it in log).
func roundsLoop(log *ladderLog) func(ctx workflow.Context, rounds int, handler bool) (int, error) {
	return func(ctx workflow.Context, rounds int, handler bool) (int, error) {
		if handler {
			err := interceptor.SetHaltHandler(ctx, func(ctx workflow.Context, halt protocol.HaltEvent) (interceptor.HandlerDecision, error) {
				log.add("H")
				return interceptor.HandlerDecision{Action: protocol.ActionResume, Reason: "try again"}, nil
			})
			if err != nil {
				return 0, err
			}
		}
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		calls := 0
		for i := range rounds {
			for _, node := range []string{"Plan", "Build", "Test"} {
				if err := workflow.ExecuteActivity(ctx, node, i).Get(ctx, nil); err != nil {
					return calls, err
				}
				calls++
			}
		}
		return calls, nil
	}
}

// resumeEveryHour answers every halt it finds, once an hour of workflow
// time, with a human's resume.
func resumeEveryHour(t *testing.T, env *testsuite.TestWorkflowEnvironment, log *ladderLog, hours int) {
	for h := 1; h <= hours; h++ {
		env.RegisterDelayedCallback(func() {
			if status(t, env).State == protocol.StateHalted {
				log.add("H")
				env.SignalWorkflow(protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "ana"})
			}
		}, time.Duration(h)*time.Hour)
	}
}

// TestEveryResetStartsTheLoopOver (guard version 9, issue 22 item 1): a
// human's resume, a warning and a halt handler's decision each start the
// loop over: a loop that goes on unchanged is halted again only after a
// whole window of its calls (four rounds of three, as for its first
// halt), not at its next call.
func TestEveryResetStartsTheLoopOver(t *testing.T) {
	const window = 12 // the first halt's calls: the stale-round rule needs four rounds here
	tests := []struct {
		name    string
		opts    interceptor.Options
		handler bool
	}{
		{"a human's resume", interceptor.Options{Grain: interceptor.GrainToolCall}, false},
		{"a warning", interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: 1}, false},
		{"the halt handler's decision", interceptor.Options{Grain: interceptor.GrainToolCall}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &ladderLog{}
			wf := roundsLoop(log)
			env := newEnv(t, tt.opts)
			env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "Rounds"})
			for name, fn := range planSwitcher(log) {
				env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
			}
			resumeEveryHour(t, env, log, 40)
			env.ExecuteWorkflow("Rounds", 16, tt.handler)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			gaps := log.gaps()
			t.Logf("events %s, calls before each next halt: %v", strings.Join(log.events, ""), gaps)
			require.NotEmpty(t, gaps, "the loop went on unchanged: it halts again")
			for k, g := range gaps {
				assert.GreaterOrEqual(t, g, window, "reset %d: the next halt needs a whole window (%s)", k+1, fmt.Sprint(gaps))
			}
		})
	}
}

// toolModel is a model that picks, turn after turn, the commands of cmds
// in order, all run by one tool ("bash"). With detour set it answers each
// new warning with one call of a tool it never used before, then goes back
// to the same commands.
type toolModel struct {
	mu      sync.Mutex
	cmds    []string
	detour  bool
	last    string
	detours int
}

func (m *toolModel) Model(ctx context.Context, turn int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil && m.detour {
		if k := fmt.Sprint(n.Warning.N, n.Warning.CycleID); k != m.last {
			m.last = k
			m.detours++
			return fmt.Sprintf("probe-%d:look around", m.detours), nil
		}
	}
	return "bash:" + m.cmds[turn%len(m.cmds)], nil
}

// toolLoop calls the model, then the tool it picked, turns times; a
// LoopEscalated error ends it without an error.
func toolLoop(ctx workflow.Context, turns int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	for i := range turns {
		var pick string
		err := workflow.ExecuteActivity(ctx, "Model", i).Get(ctx, &pick)
		if err == nil {
			tool, cmd, _ := strings.Cut(pick, ":")
			err = workflow.ExecuteActivity(ctx, "Tool", tool, cmd).Get(ctx, nil)
		}
		if _, ok := interceptor.EscalationFrom(err); ok {
			return i, nil
		}
		if err != nil {
			return i, err
		}
	}
	return turns, nil
}

// runToolLoop runs toolLoop with Warnings 1 and the tool-call grain, each
// tool its own node; a human escalates the first halt.
func runToolLoop(t *testing.T, m *toolModel, turns int) protocol.Status {
	t.Helper()
	env := newEnv(t, interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall, NodeName: func(c interceptor.Call) string {
		if c.Type == "Tool" {
			return c.Args[0].(string)
		}
		return ""
	}})
	env.RegisterWorkflow(toolLoop)
	env.RegisterActivityWithOptions(m.Model, activity.RegisterOptions{Name: "Model"})
	env.RegisterActivityWithOptions(func(_ context.Context, tool, cmd string) (string, error) {
		return "output of " + cmd, nil
	}, activity.RegisterOptions{Name: "Tool"})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{By: "ana"})
	}, time.Hour)
	env.ExecuteWorkflow(toolLoop, turns)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	return status(t, env)
}

// TestADetourIsTheSameLoop (guard version 9, issue 22 item 2): a
// Model↔bash loop that answers its warning with one call of a tool it
// never used, then repeats itself again, is the same loop: its one
// warning is spent, and it halts. The loop's identity is its anchor
// (Model), which the detour keeps, not its cycle id, which the detour
// changes.
func TestADetourIsTheSameLoop(t *testing.T) {
	m := &toolModel{cmds: []string{"ls"}, detour: true}
	st := runToolLoop(t, m, 40)
	assert.Equal(t, 1, st.Warnings, "one warning for the loop, detour or not")
	assert.Equal(t, 1, st.Halts, "then the halt")
	require.NotNil(t, st.LastDecision)
	assert.Equal(t, protocol.ActionEscalate, st.LastDecision.Action)
	assert.Equal(t, 1, m.detours)
}

// TestALongLoopIsHeededOnlyIfItChanged (guard version 9, issue 22 item
// 3): a warned loop whose period is 12 calls (six commands, each with
// its output) comes back unchanged 24 calls after its warning; it is not
// counted as heeded before (heeded is measured in the loop's periods), so
// it halts once its one warning is spent.
func TestALongLoopIsHeededOnlyIfItChanged(t *testing.T) {
	m := &toolModel{cmds: []string{"ls", "cat a", "cat b", "make", "make test", "git diff"}}
	st := runToolLoop(t, m, 60)
	assert.Equal(t, 1, st.Warnings, "one warning")
	assert.Equal(t, 1, st.Halts, "then the halt")
}
