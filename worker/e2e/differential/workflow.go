package differential

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// Names of the workflow and of its own signal and update.
const (
	WorkflowName  = "Differential"
	OwnSignalName = "own.signal"
	OwnUpdateName = "own.update"
)

// Call is what an activity, local activity or child is asked: its result,
// or its error when Fail. Tag names the call for the notices it sees.
type Call struct {
	Tag    string `json:"tag"`
	Result string `json:"result"`
	Fail   bool   `json:"fail,omitempty"`
}

// Register registers the workflows and the agent under every node name.
func Register(r worker.Registry) {
	r.RegisterWorkflowWithOptions(Interpret, workflow.RegisterOptions{Name: WorkflowName})
	for _, n := range ChildNodes {
		r.RegisterWorkflowWithOptions(ChildAgent, workflow.RegisterOptions{Name: n})
	}
	for _, n := range append(append([]string(nil), ActivityNodes...), LocalNodes...) {
		r.RegisterActivityWithOptions(Agent, activity.RegisterOptions{Name: n})
	}
}

// Notices holds the warning each local activity read from its notice, by
// run id and activity id (which its marker holds): a local activity's
// header is in no event, so its own reading is the only record of a
// warning it carried.
var Notices sync.Map // "runID/activityID" → protocol.Warning

// Agent answers as asked, and notes the warning its notice carries.
func Agent(ctx context.Context, c Call) (string, error) {
	info := activity.GetInfo(ctx)
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil && info.IsLocalActivity {
		Notices.Store(info.WorkflowExecution.RunID+"/"+info.ActivityID, *n.Warning)
	}
	if c.Fail {
		return "", temporal.NewNonRetryableApplicationError(c.Result, "Agent", nil)
	}
	return c.Result, nil
}

// ChildAgent is a child call: it returns its result at once.
func ChildAgent(ctx workflow.Context, c Call) (string, error) {
	if c.Fail {
		return "", temporal.NewNonRetryableApplicationError(c.Result, "Agent", nil)
	}
	return c.Result, nil
}

// Interpret runs run of p, then continues as new with the next one. The
// workflow's own signals and updates are outside input that the driver
// sends at any time: the workflow only counts them.
func Interpret(ctx workflow.Context, p Plan, run int) (int, error) {
	own := 0
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, OwnSignalName)
		for {
			ch.Receive(ctx, nil)
			own++
		}
	})
	if err := workflow.SetUpdateHandler(ctx, OwnUpdateName, func(ctx workflow.Context) (int, error) {
		own++
		return own, nil
	}); err != nil {
		return 0, err
	}
	w := &interp{}
	w.steps(ctx, p.Runs[run], run)
	if run+1 < len(p.Runs) {
		return own, workflow.NewContinueAsNewError(ctx, WorkflowName, p, run+1)
	}
	return own, nil
}

type interp struct{ calls int }

func (w *interp) steps(ctx workflow.Context, steps []Step, run int) {
	for _, s := range steps {
		w.step(ctx, s, run)
	}
}

func (w *interp) step(ctx workflow.Context, s Step, run int) {
	switch s.Kind {
	case KindActivity, KindLocal, KindChild:
		w.calls++
		c := Call{Tag: tag(run, w.calls), Result: s.Result, Fail: s.Fail}
		var out string
		_ = w.future(ctx, s, c).Get(ctx, &out) // a failed or refused call is part of the loop
	case KindParallel:
		done := 0
		for _, b := range s.Branches {
			workflow.Go(ctx, func(ctx workflow.Context) {
				w.steps(ctx, b, run)
				done++
			})
		}
		_ = workflow.Await(ctx, func() bool { return done == len(s.Branches) })
	case KindTimer:
		timer(ctx, s)
	}
}

func (w *interp) future(ctx workflow.Context, s Step, c Call) workflow.Future {
	noRetry := &temporal.RetryPolicy{MaximumAttempts: 1}
	switch s.Kind {
	case KindLocal:
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second, RetryPolicy: noRetry})
		return workflow.ExecuteLocalActivity(ctx, s.Node, c)
	case KindChild:
		// Named after the run's original id, which a reset keeps: the
		// reset run replays the same start commands.
		ctx = workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: workflow.GetInfo(ctx).OriginalRunID + "-" + c.Tag})
		return workflow.ExecuteChildWorkflow(ctx, s.Node, c)
	default:
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second, RetryPolicy: noRetry})
		return workflow.ExecuteActivity(ctx, s.Node, c)
	}
}

// timer waits as s says, through the API it names.
func timer(ctx workflow.Context, s Step) {
	ready := func() bool { return s.Ready }
	summary := workflow.TimerOptions{Summary: "differential " + s.API}
	switch s.API {
	case Sleep:
		_ = workflow.Sleep(ctx, s.Duration)
	case NewTimer:
		_ = workflow.NewTimer(ctx, s.Duration).Get(ctx, nil)
	case NewTimerWithOptions:
		_ = workflow.NewTimerWithOptions(ctx, s.Duration, summary).Get(ctx, nil)
	case AwaitWithTimeout:
		_, _ = workflow.AwaitWithTimeout(ctx, s.Duration, ready)
	case AwaitWithOptionsName:
		_, _ = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: s.Duration, TimerOptions: summary}, ready)
	default:
		panic(errors.New("differential: unknown timer API " + s.API))
	}
}

// tag names the call-th call of run.
func tag(run, call int) string { return fmt.Sprintf("r%dc%d", run, call) }
