package workflows

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// callLog comes before the guard in the worker's interceptors
// (guardedEnv): it sees the
// calls the guard lets through, in the order workflow code makes them,
// with the notice the guard wrote in each one's header. It numbers them
// as the guard does, so that a test can say at which call a warning
// showed and at which a halt paused the workflow.
type callLog struct {
	sdkinterceptor.WorkerInterceptorBase
	calls int
	// warned are the calls at which each warning first showed in a
	// notice.
	warned []int
	seen   map[string]bool
}

func (l *callLog) InterceptWorkflow(_ workflow.Context, next sdkinterceptor.WorkflowInboundInterceptor) sdkinterceptor.WorkflowInboundInterceptor {
	return &callLogInbound{WorkflowInboundInterceptorBase: sdkinterceptor.WorkflowInboundInterceptorBase{Next: next}, log: l}
}

type callLogInbound struct {
	sdkinterceptor.WorkflowInboundInterceptorBase
	log *callLog
}

func (i *callLogInbound) Init(outbound sdkinterceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&callLogOutbound{WorkflowOutboundInterceptorBase: sdkinterceptor.WorkflowOutboundInterceptorBase{Next: outbound}, log: i.log})
}

type callLogOutbound struct {
	sdkinterceptor.WorkflowOutboundInterceptorBase
	log *callLog
}

func (o *callLogOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	l := o.log
	l.calls++
	if p := sdkinterceptor.WorkflowHeader(ctx)[protocol.NoticeHeader]; p != nil {
		var n protocol.Notice
		if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err == nil && n.Warning != nil {
			w := n.Warning
			if k := fmt.Sprintf("%d/%d %s/%s@%s", w.N, w.Of, w.Reason, w.Detector, w.Node); !l.seen[k] {
				l.seen[k] = true
				l.warned = append(l.warned, l.calls)
			}
		}
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// parallelRun is what became of a guarded ParallelToolAgent run.
type parallelRun struct {
	res  ParallelResult
	log  *callLog
	halt *protocol.HaltEvent
	// haltCall is the call the halt paused: the one after the last the
	// guard let through.
	haltCall int
	final    *protocol.Status
}

// runParallel runs ParallelToolAgent in the test environment with the
// guard under opts; a human escalates the halt in force, if any, at
// decideAfter.
func runParallel(t *testing.T, opts interceptor.Options, in ParallelInput) parallelRun {
	t.Helper()
	r := parallelRun{log: &callLog{seen: map[string]bool{}}}
	env, status := guardedEnv(t, opts, r.log)
	env.RegisterDelayedCallback(func() {
		if st := status(); st.State == protocol.StateHalted {
			r.halt, r.haltCall = st.Halt, r.log.calls+1
			env.SignalWorkflow(protocol.DefaultEscalateSignal, protocol.EscalateRequest{Reason: "stuck", By: "test"})
		}
	}, decideAfter)
	executeWorkflow(t, env, WorkflowParallelTool, in, &r.res)
	r.final = status()
	return r
}

// TestParallelToolAgent: under the README's options (GrainToolCall,
// Warnings 1), an agent whose every turn is one model call and a round of
// parallel tool calls is judged per round, whatever its width. Stuck, it
// is warned once, then halted within interceptor.HaltBound calls of the
// first warning; heeding the warning, it completes unhalted; progressing,
// it is never warned.
func TestParallelToolAgent(t *testing.T) {
	opts := ParallelGuardOptions()
	const maxTurns = 50 // beyond any HaltBound below, in rounds: the bound, not MaxTurns, ends a stuck run
	for _, width := range []int{1, 2, 8, 16} {
		for _, mixed := range []bool{false, true} {
			if mixed && width == 1 {
				continue // one call a turn cannot hold two tools
			}
			perRound := width + 1 // the model's call and its tool calls
			bound, err := interceptor.HaltBound(opts, perRound)
			require.NoError(t, err)
			name := fmt.Sprintf("width%d", width)
			if mixed {
				name += "-mixed"
			}
			in := func(scenario string) ParallelInput {
				return ParallelInput{Scenario: scenario, Width: width, Mixed: mixed, MaxTurns: maxTurns}
			}
			t.Run(name+"/stuck", func(t *testing.T) {
				r := runParallel(t, opts, in(activities.ParallelStuck))
				require.NotEmpty(t, r.log.warned, "never warned (%d calls)", r.log.calls)
				require.NotNil(t, r.halt, "warned at calls %v, never halted (%d calls, %d turns)", r.log.warned, r.log.calls, r.res.Iterations)
				t.Logf("warned at call %d, halted at call %d (%s/%s@%s), bound %d", r.log.warned[0], r.haltCall, r.halt.HaltReason, r.halt.Detector, r.halt.Node, bound)
				assert.Len(t, r.log.warned, opts.Warnings, "one warning, then the halt")
				assert.Len(t, r.halt.Warnings, opts.Warnings, "the halt lists the warning it ignored")
				assert.LessOrEqual(t, r.haltCall, r.log.warned[0]+bound, "halted later than HaltBound after the onset")
				assert.Equal(t, OutcomeEscalated, r.res.Outcome)
				if width == 8 {
					// The calls docs/ladder.md quotes: the third turn's
					// first search, and the sixth turn's model call.
					assert.Equal(t, []int{20, 46}, []int{r.log.warned[0], r.haltCall})
				}
			})
			t.Run(name+"/heeds", func(t *testing.T) {
				r := runParallel(t, opts, in(activities.ParallelHeeds))
				assert.Nil(t, r.halt)
				assert.Zero(t, r.final.Halts, "never halted")
				assert.Len(t, r.log.warned, 1, "warned once")
				assert.Equal(t, 1, r.final.Warnings)
				assert.Equal(t, OutcomeCompleted, r.res.Outcome, "%+v", r.res)
				assert.Contains(t, r.res.Heeded, "warning 1/1")
			})
			t.Run(name+"/progressing", func(t *testing.T) {
				r := runParallel(t, opts, in(activities.ParallelProgressing))
				assert.Nil(t, r.halt)
				assert.Zero(t, r.final.Halts, "never halted")
				assert.Empty(t, r.log.warned, "never warned")
				assert.Equal(t, OutcomeCompleted, r.res.Outcome, "%+v", r.res)
				assert.Equal(t, activities.ParallelProgressTurns*width, r.res.ToolCalls)
				assert.Equal(t, activities.ParallelProgressTurns*perRound+1, r.log.calls, "every turn's calls, and the answer's")
			})
		}
	}
}
