package differential_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// The live guard's own account of its warnings and halts. A warning
// leaves a line in the guard's log and nothing else that is sure to show
// in a history (its memo lists the warnings in force, and a warning
// issued again while an equal one is in force changes nothing there), so
// the test reads what the guard logged: an interceptor inside the guard
// (its next) counts the calls the guard lets through and wraps the
// logger the guard logs with. Replays log again, and are left out: every
// execution of a run (a replay after the worker's cache let it go, or a
// reset run's replay of the events it copied) logs the same lines for
// the calls they share, so a run's account is its longest.

// recorded is one line the guard logged: call is the number of the call
// it was logged at, in its run (the calls let through before it, plus
// one).
type recorded struct {
	call    int
	halt    bool
	warning protocol.Warning
}

// accounts holds, by run id, the accounts of the run's executions.
var accounts = struct {
	sync.Mutex
	byRun map[string][]*[]recorded
}{byRun: map[string][]*[]recorded{}}

// account is the longest account of run id, and whether the run has
// one (it ran under the recorder).
func account(id string) ([]recorded, bool) {
	accounts.Lock()
	defer accounts.Unlock()
	var out []recorded
	for _, a := range accounts.byRun[id] {
		if len(*a) > len(out) {
			out = *a
		}
	}
	_, ok := accounts.byRun[id]
	return slices.Clone(out), ok
}

// merge puts a run's halt lines (read from its history, in order) and its
// warnings (from its account) in the order the guard logged them; calls
// are numbered from offset+1.
func merge(lines []recorded, offset int, halts []string) []string {
	var out []string
	for _, r := range lines {
		switch {
		case !r.halt:
			w := r.warning
			out = append(out, verdictLine(offset+r.call, &w, nil, nil))
		case len(halts) > 0:
			out = append(out, halts[0])
			halts = halts[1:]
		}
	}
	return append(out, halts...)
}

// recorder is the interceptor inside the guard. A call the guard refuses
// (escalated) comes with a context already done, and the SDK writes no
// command for it: it is no call here, as it is none in the history.
type recorder struct {
	sdkinterceptor.WorkerInterceptorBase
}

func (recorder) InterceptWorkflow(ctx workflow.Context, next sdkinterceptor.WorkflowInboundInterceptor) sdkinterceptor.WorkflowInboundInterceptor {
	i := &recordIn{}
	i.Next = next
	return i
}

type recordIn struct {
	sdkinterceptor.WorkflowInboundInterceptorBase
}

func (i *recordIn) Init(outbound sdkinterceptor.WorkflowOutboundInterceptor) error {
	o := &recordOut{lines: new([]recorded)}
	o.Next = outbound
	return i.Next.Init(o)
}

type recordOut struct {
	sdkinterceptor.WorkflowOutboundInterceptorBase
	calls int
	lines *[]recorded
	run   string
}

func (o *recordOut) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	o.register(ctx)
	if slices.Contains(differential.ActivityNodes, typ) && ctx.Err() == nil {
		o.calls++
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

func (o *recordOut) ExecuteLocalActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	o.register(ctx)
	if slices.Contains(differential.LocalNodes, typ) && ctx.Err() == nil {
		o.calls++
	}
	return o.Next.ExecuteLocalActivity(ctx, typ, args...)
}

func (o *recordOut) ExecuteChildWorkflow(ctx workflow.Context, typ string, args ...any) workflow.ChildWorkflowFuture {
	o.register(ctx)
	if ctx.Err() == nil {
		o.calls++
	}
	return o.Next.ExecuteChildWorkflow(ctx, typ, args...)
}

func (o *recordOut) GetLogger(ctx workflow.Context) log.Logger {
	o.register(ctx)
	return &recordLog{Logger: o.Next.GetLogger(ctx), o: o}
}

// register makes the execution's account one of its run's.
func (o *recordOut) register(ctx workflow.Context) {
	if o.run != "" {
		return
	}
	o.run = workflow.GetInfo(ctx).WorkflowExecution.RunID
	accounts.Lock()
	accounts.byRun[o.run] = append(accounts.byRun[o.run], o.lines)
	accounts.Unlock()
}

type recordLog struct {
	log.Logger
	o *recordOut
}

func (l *recordLog) Warn(msg string, keyvals ...any) {
	switch msg {
	case "loopguard: loop warned":
		w := protocol.Warning{}
		for i := 0; i+1 < len(keyvals); i += 2 {
			v := fmt.Sprint(keyvals[i+1])
			switch keyvals[i] {
			case "reason":
				w.Reason = protocol.HaltReason(v)
			case "detector":
				w.Detector = detect.Detector(v)
			case "node":
				w.Node = v
			case "warning":
				n, of, _ := strings.Cut(v, "/")
				w.N, _ = strconv.Atoi(n)
				w.Of, _ = strconv.Atoi(of)
			}
		}
		l.add(recorded{call: l.o.calls + 1, warning: w})
	case "loopguard: loop halted":
		l.add(recorded{call: l.o.calls + 1, halt: true})
	}
	l.Logger.Warn(msg, keyvals...)
}

func (l *recordLog) add(r recorded) {
	accounts.Lock()
	*l.o.lines = append(*l.o.lines, r)
	accounts.Unlock()
}

// runIDs are the run ids of a chain's histories: a reset run's is its
// reset's NewRunId, a run continued as new the one its predecessor names,
// the first run's the first run id.
func runIDs(chain []*historypb.History) []string {
	out := make([]string, len(chain))
	for i, h := range chain {
		evs := h.GetEvents()
		for _, e := range evs {
			if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil && a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
				out[i] = a.GetNewRunId()
			}
		}
		switch {
		case out[i] != "":
		case i > 0:
			prev := chain[i-1].GetEvents()
			out[i] = prev[len(prev)-1].GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
		case len(evs) > 0:
			out[i] = evs[0].GetWorkflowExecutionStartedEventAttributes().GetFirstExecutionRunId()
		}
	}
	return out
}
