package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Names of the root workflow and of its progress query.
const (
	WorkflowName  = "Schedule"
	ProgressQuery = "schedule.progress"
)

// Register registers the interpreter workflows and the agent activity under
// every node name.
func Register(r worker.Registry) {
	RegisterWorkflows(r)
	for _, n := range append(append([]string{ReviewNode}, ActivityNodes...), LocalNodes...) {
		r.RegisterActivityWithOptions(Agent, activity.RegisterOptions{Name: n})
	}
}

// ReviewNode is the activity a halt handler of kind review asks. The
// handler's calls are not guarded: it is never a node.
const ReviewNode = "Review"

// RegisterWorkflows registers the workflows only, for a replayer.
func RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Interpret, workflow.RegisterOptions{Name: WorkflowName})
	for _, n := range ChildNodes {
		r.RegisterWorkflowWithOptions(Child, workflow.RegisterOptions{Name: n})
	}
}

// RunState is where a run starts in its plan.
type RunState struct {
	Run int `json:"run"`
	// Calls were issued by the earlier runs.
	Calls int `json:"calls"`
	// Missed are the earlier runs' waits that timed out.
	Missed []string `json:"missed,omitempty"`
}

// Outcome is what a run (or a child) returns.
type Outcome struct {
	Calls     int `json:"calls"`
	Escalated int `json:"escalated"`
	Errors    int `json:"errors"`
	// Missed are the tags of waits for the workflow's own signals that
	// timed out, over all runs.
	Missed []string `json:"missed,omitempty"`
}

// Progress is the answer of the progress query: what the driver needs to
// send input at the planned points and to find children to answer.
type Progress struct {
	Run   int `json:"run"`
	Calls int `json:"calls"`
	// Children are the ids of child workflows started and not yet read.
	Children []string `json:"children"`
	// Waiting are the tags of the waits for the workflow's own signals in
	// progress.
	Waiting []string `json:"waiting"`
	// Handled are the halt handler's answers in this run, as the workflow
	// saw them returned (a child's progress has these only).
	Handled []Handled `json:"handled,omitempty"`
	// Stuck is true while the run is in its stuck loop.
	Stuck bool `json:"stuck,omitempty"`
}

// Handled is one answer of the halt handler: the halt it handled and the
// action it returned ("" when it handed the halt to a human, failed or
// panicked).
type Handled struct {
	Seq    int             `json:"seq"`
	Action protocol.Action `json:"action,omitempty"`
	// Took is the workflow time from the halt to the handler's return: a
	// handler that took PauseTimeout or longer lost the race to it.
	Took time.Duration `json:"took,omitempty"`
}

// AgentInput is what a guarded call passes to Agent.
type AgentInput struct {
	Tag     string `json:"tag"`
	Output  string `json:"output,omitempty"`
	Err     string `json:"err,omitempty"`
	DelayMs int    `json:"delayMs,omitempty"`
}

// AgentResult is what Agent returns.
type AgentResult struct {
	Output string `json:"output"`
	// At differs call by call, for Verify only (a timestamp, say): the
	// tight profile ignores it, the default one sees no repeats there.
	At string `json:"at,omitempty"`
}

// Agent is the activity behind every activity and local activity node: it
// answers as the plan says.
func Agent(ctx context.Context, in AgentInput) (AgentResult, error) {
	recordNotice(ctx, in.Tag)
	if in.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(in.DelayMs) * time.Millisecond):
		case <-ctx.Done():
			return AgentResult{}, ctx.Err()
		}
	}
	if in.Err != "" {
		return AgentResult{}, temporal.NewNonRetryableApplicationError(in.Err, "AgentError", nil)
	}
	r := AgentResult{Output: in.Output}
	if activity.GetInfo(ctx).ActivityType.Name == "Verify" {
		r.At = in.Tag
	}
	return r, nil
}

// ChildInput is a child workflow's program.
type ChildInput struct {
	Steps            []Step        `json:"steps"`
	StopOnEscalation bool          `json:"stopOnEscalation,omitempty"`
	Handlers         []HandlerKind `json:"handlers,omitempty"`
}

// Interpret runs run st.Run of plan p, then continues as new with the next
// run, if any. All it does is read from p: the plan is its input.
func Interpret(ctx workflow.Context, p Plan, st RunState) (Outcome, error) {
	if st.Run < 0 || st.Run >= len(p.Runs) {
		return Outcome{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("run %d outside the plan's %d runs", st.Run, len(p.Runs)), "BadPlan", nil)
	}
	in := &interp{stop: p.StopOnEscalation, handlers: p.Handlers}
	in.out.Missed = append(in.out.Missed, st.Missed...)
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) {
		return Progress{
			Run: st.Run, Calls: st.Calls + in.out.Calls,
			Children: append([]string{}, in.children...), Waiting: append([]string{}, in.waiting...),
			Handled: append([]Handled(nil), in.handled...), Stuck: in.inStuck,
		}, nil
	}); err != nil {
		return Outcome{}, err
	}
	if err := in.setHandler(ctx); err != nil {
		return Outcome{}, err
	}
	err := in.steps(ctx, p.Runs[st.Run])
	if ctx.Err() != nil {
		if len(p.Cleanup) > 0 {
			// Workflow code may go on after a cancellation, as cleanup
			// does: its calls are guarded like any other.
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			_ = in.steps(dctx, p.Cleanup)
		}
		return in.out, ctx.Err()
	}
	if err != nil && !errors.Is(err, errStopped) {
		return in.out, err
	}
	if st.Run+1 < len(p.Runs) {
		return in.out, workflow.NewContinueAsNewError(ctx, WorkflowName, p, RunState{Run: st.Run + 1, Calls: st.Calls + in.out.Calls, Missed: in.out.Missed})
	}
	return in.out, nil
}

// Child runs a child workflow's program.
func Child(ctx workflow.Context, ci ChildInput) (Outcome, error) {
	in := &interp{stop: ci.StopOnEscalation, handlers: ci.Handlers}
	if len(ci.Handlers) > 0 {
		if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) {
			return Progress{Handled: append([]Handled(nil), in.handled...)}, nil
		}); err != nil {
			return Outcome{}, err
		}
	}
	if err := in.setHandler(ctx); err != nil {
		return Outcome{}, err
	}
	err := in.steps(ctx, ci.Steps)
	if ctx.Err() != nil {
		return in.out, ctx.Err()
	}
	if err != nil && !errors.Is(err, errStopped) {
		return in.out, err
	}
	return in.out, nil
}

// errStopped ends a branch whose call was escalated (StopOnEscalation).
var errStopped = errors.New("stopped on escalation")

// interp is one run's interpreter state, in workflow memory.
type interp struct {
	stop     bool
	handlers []HandlerKind
	out      Outcome
	children []string
	waiting  []string
	handled  []Handled
	inStuck  bool
}

func (in *interp) steps(ctx workflow.Context, steps []Step) error {
	for _, s := range steps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var err error
		switch {
		case s.Call != nil:
			err = in.read(ctx, *s.Call, in.start(ctx, *s.Call))
		case s.Parallel != nil:
			err = in.parallel(ctx, s.Parallel)
		case s.SleepMs > 0:
			err = workflow.Sleep(ctx, time.Duration(s.SleepMs)*time.Millisecond)
		case s.Select != nil:
			err = in.selectStep(ctx, *s.Select)
		case s.Wait != nil:
			err = in.wait(ctx, *s.Wait)
		case s.Stuck != nil:
			err = in.stuck(ctx, *s.Stuck)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// wait waits for one of the workflow's own signals, and notes a wait that
// timed out.
func (in *interp) wait(ctx workflow.Context, w Wait) error {
	ch := workflow.GetSignalChannel(ctx, w.Signal)
	in.waiting = append(in.waiting, w.Tag)
	got, err := workflow.AwaitWithTimeout(ctx, time.Duration(w.TimeoutMs)*time.Millisecond, func() bool { return ch.Len() > 0 })
	for i, t := range in.waiting {
		if t == w.Tag {
			in.waiting = append(in.waiting[:i], in.waiting[i+1:]...)
			break
		}
	}
	if err != nil {
		return err
	}
	if !got {
		in.out.Missed = append(in.out.Missed, w.Tag)
		return nil
	}
	var v any
	ch.ReceiveAsync(&v)
	return nil
}

// start issues a guarded call.
func (in *interp) start(ctx workflow.Context, c Call) workflow.Future {
	in.out.Calls++
	args := AgentInput{Tag: c.Tag, Output: c.Output, Err: c.Err, DelayMs: c.DelayMs}
	switch c.Kind {
	case KindLocal:
		return workflow.ExecuteLocalActivity(localContext(ctx), c.Node, args)
	case KindChild:
		id := workflow.GetInfo(ctx).WorkflowExecution.ID + "-" + c.Tag
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id})
		in.children = append(in.children, id)
		return workflow.ExecuteChildWorkflow(cctx, c.Node, ChildInput{Steps: c.Child, StopOnEscalation: in.stop, Handlers: in.handlers})
	}
	return workflow.ExecuteActivity(activityContext(ctx), c.Node, args)
}

// localContext sets the options of a local activity call: one attempt.
func localContext(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// activityContext sets the options of an activity call: one attempt.
func activityContext(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// read waits for a call's result and notes it.
func (in *interp) read(ctx workflow.Context, c Call, f workflow.Future) error {
	var res any
	if c.Kind == KindChild {
		res = new(Outcome)
	} else {
		res = new(AgentResult)
	}
	err := f.Get(ctx, res)
	if c.Kind == KindChild {
		id := workflow.GetInfo(ctx).WorkflowExecution.ID + "-" + c.Tag
		for i, ch := range in.children {
			if ch == id {
				in.children = append(in.children[:i], in.children[i+1:]...)
				break
			}
		}
	}
	switch {
	case err == nil:
		return nil
	case interceptor.IsEscalated(err):
		in.out.Escalated++
		if in.stop {
			return errStopped
		}
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		in.out.Errors++
	}
	return nil
}

// parallel runs branches in workflow coroutines and waits for all.
func (in *interp) parallel(ctx workflow.Context, branches [][]Step) error {
	wg := workflow.NewWaitGroup(ctx)
	errs := make([]error, len(branches))
	for i, b := range branches {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			errs[i] = in.steps(ctx, b)
		})
	}
	wg.Wait(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}

// selectStep starts the calls, then picks Picks of them (or the timer);
// the rest are left running.
func (in *interp) selectStep(ctx workflow.Context, s Select) error {
	sel := workflow.NewSelector(ctx)
	var stepErr error
	for _, c := range s.Calls {
		sel.AddFuture(in.start(ctx, c), func(f workflow.Future) {
			if err := in.read(ctx, c, f); err != nil && stepErr == nil {
				stepErr = err
			}
		})
	}
	if s.TimerMs > 0 {
		sel.AddFuture(workflow.NewTimer(ctx, time.Duration(s.TimerMs)*time.Millisecond), func(workflow.Future) {})
	}
	for i := 0; i < s.Picks; i++ {
		sel.Select(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return stepErr
}

// stuck runs a stuck loop: its round, again and again, until its rounds
// are done or one of its calls is escalated (the human stopped it).
func (in *interp) stuck(ctx workflow.Context, s Stuck) error {
	in.inStuck = true
	defer func() { in.inStuck = false }()
	escalated := in.out.Escalated
	for r := range s.Rounds {
		for _, g := range s.Round {
			if err := in.group(ctx, g.Calls(r), g.Branches); err != nil {
				return err
			}
			if in.out.Escalated > escalated {
				return nil
			}
		}
	}
	return nil
}

// group makes a group's concurrent calls and reads them all: futures
// started together, or each call in a branch of its own.
func (in *interp) group(ctx workflow.Context, calls []Call, branches bool) error {
	errs := make([]error, len(calls))
	if branches {
		wg := workflow.NewWaitGroup(ctx)
		for i, c := range calls {
			wg.Add(1)
			workflow.Go(ctx, func(ctx workflow.Context) {
				defer wg.Done()
				errs[i] = in.read(ctx, c, in.start(ctx, c))
			})
		}
		wg.Wait(ctx)
	} else {
		fs := make([]workflow.Future, len(calls))
		for i, c := range calls {
			fs[i] = in.start(ctx, c)
		}
		for i, c := range calls {
			errs[i] = in.read(ctx, c, fs[i])
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}
