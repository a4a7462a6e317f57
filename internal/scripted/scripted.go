package scripted

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// Turn is one scripted agent call of ScriptLoop.
type Turn struct {
	Node   string `json:"node"`
	Output string `json:"output,omitempty"`
	Err    string `json:"err,omitempty"`
	// Failing is a metric some tests declare.
	Failing int `json:"failing,omitempty"`
	// Cost is what the call spent, for cost budgets.
	Cost float64 `json:"cost,omitempty"`
	// With starts this call together with the next one (fan-out).
	With bool `json:"with,omitempty"`
	// Stamp makes the result carry the call's index, like a timestamp.
	Stamp bool `json:"stamp,omitempty"`
	// Sleep is workflow time to wait before the call.
	Sleep time.Duration `json:"sleep,omitempty"`
}

// AgentResult is what the scripted agent returns.
type AgentResult struct {
	Output  string  `json:"output"`
	Failing int     `json:"failing"`
	Cost    float64 `json:"cost,omitempty"`
	At      int     `json:"at"` // a varying field, ignored by some tests
}

// LoopResult is what ScriptLoop returns.
type LoopResult struct {
	Calls     int    `json:"calls"`
	Escalated bool   `json:"escalated"`
	Reason    string `json:"reason,omitempty"`
}

// Nodes are the activity names the scripts use; each runs Agent.
var Nodes = []string{"Code", "Verify", "Plan", "Research", "Poll"}

// Register registers the scripted workflows and activities on r.
func Register(r worker.Registry) {
	RegisterWorkflows(r)
	for _, n := range Nodes {
		r.RegisterActivityWithOptions(Agent, activity.RegisterOptions{Name: n})
	}
	r.RegisterActivityWithOptions(Notify, activity.RegisterOptions{Name: "Notify"})
	r.RegisterActivityWithOptions(Agent, activity.RegisterOptions{Name: ReviewNode})
}

// RegisterWorkflows registers the scripted workflows on r, a worker or a
// replayer.
func RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflow(ScriptLoop)
	r.RegisterWorkflow(ContinuingLoop)
	r.RegisterWorkflow(TwoBranches)
	r.RegisterWorkflow(ChildLoop)
	r.RegisterWorkflow(OwnSignals)
	r.RegisterWorkflow(LateContinue)
	r.RegisterWorkflow(AbandonAndContinue)
	r.RegisterWorkflow(HandledLoop)
}

// ScriptLoop runs the turns in order, as an agent loop would: each result
// is read before the next call, and calls marked With start together.
func ScriptLoop(ctx workflow.Context, turns []Turn) (LoopResult, error) {
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var res LoopResult
	for i := 0; i < len(turns); {
		var futs []workflow.Future
		for {
			t := turns[i]
			if t.Sleep > 0 {
				if err := workflow.Sleep(ctx, t.Sleep); err != nil {
					return res, err
				}
			}
			futs = append(futs, workflow.ExecuteActivity(ctx, t.Node, t, i))
			i++
			if !t.With || i == len(turns) {
				break
			}
		}
		for _, f := range futs {
			var out AgentResult
			err := f.Get(ctx, &out)
			res.Calls++
			if ctx.Err() != nil {
				// The workflow was canceled: stop, as a real loop would.
				// (Not on any canceled error: the SDK's test environment
				// can time an activity out, with a canceled cause, when its
				// clock jumps ahead while the activity runs.)
				return res, ctx.Err()
			}
			if res.escalated(err) {
				return res, nil
			}
		}
	}
	return res, nil
}

// activityOptions are the scripted loops' activity options: one attempt,
// so that a scripted error is the call's result.
func activityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
}

// escalated records a LoopEscalated err in r and reports whether it was one.
func (r *LoopResult) escalated(err error) bool {
	e, ok := interceptor.EscalationFrom(err)
	if ok || interceptor.IsEscalated(err) {
		r.Escalated, r.Reason = true, e.Reason
		return true
	}
	return false
}

// ContinuingLoop runs the first split turns, then continues as new with the
// rest; split <= 0 runs them all in one run.
func ContinuingLoop(ctx workflow.Context, turns []Turn, split int) (LoopResult, error) {
	if split <= 0 || split >= len(turns) {
		return ScriptLoop(ctx, turns)
	}
	if _, err := ScriptLoop(ctx, turns[:split]); err != nil {
		return LoopResult{}, err
	}
	return LoopResult{}, workflow.NewContinueAsNewError(ctx, ContinuingLoop, turns[split:], 0)
}

// TwoBranches runs two scripts side by side in workflow coroutines, as an
// agent with parallel sub-agents would.
func TwoBranches(ctx workflow.Context, a, b []Turn) ([]LoopResult, error) {
	results := make([]LoopResult, 2)
	errs := make([]error, 2)
	wg := workflow.NewWaitGroup(ctx)
	for i, turns := range [][]Turn{a, b} {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			results[i], errs[i] = ScriptLoop(ctx, turns)
		})
	}
	wg.Wait(ctx)
	return results, errors.Join(errs...)
}

// ChildLoop runs the script n times, each time as a child ScriptLoop it
// waits for through a workflow.Selector, as a supervisor of sub-agents
// would; the guard watches the children as calls of node "ScriptLoop".
func ChildLoop(ctx workflow.Context, turns []Turn, n int) (LoopResult, error) {
	var res LoopResult
	for i := 0; i < n; i++ {
		fut := workflow.ExecuteChildWorkflow(ctx, ScriptLoop, turns)
		var err error
		workflow.NewSelector(ctx).AddFuture(fut, func(f workflow.Future) {
			err = f.Get(ctx, nil)
		}).Select(ctx)
		res.Calls++
		if res.escalated(err) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// OwnSignalsResult is what OwnSignals returns.
type OwnSignalsResult struct {
	Loop LoopResult `json:"loop"`
	// Resumed and Halted count the workflow's own resume and halt signals.
	Resumed int `json:"resumed"`
	Halted  int `json:"halted"`
	// Details are the workflow's current details at the end.
	Details string `json:"details"`
}

// OwnDetails are the current details OwnSignals sets for itself.
const OwnDetails = "pausable job: waiting for my own resume, then looping"

// OwnSignals is a pausable job with signals and an update of the guard's
// names: it waits for its own "resume" signal, runs the script, and then
// drains its own "resume" and "halt" signals. Its own "escalate" update
// answers "own escalate". It sets its own current details.
func OwnSignals(ctx workflow.Context, turns []Turn) (OwnSignalsResult, error) {
	var res OwnSignalsResult
	workflow.SetCurrentDetails(ctx, OwnDetails)
	if err := workflow.SetUpdateHandler(ctx, "escalate", func(ctx workflow.Context) (string, error) {
		return "own escalate", nil
	}); err != nil {
		return res, err
	}
	resume := workflow.GetSignalChannel(ctx, "resume")
	halt := workflow.GetSignalChannel(ctx, "halt")
	resume.Receive(ctx, nil)
	res.Resumed++
	var err error
	if res.Loop, err = ScriptLoop(ctx, turns); err != nil {
		return res, err
	}
	for resume.ReceiveAsync(nil) {
		res.Resumed++
	}
	for halt.ReceiveAsync(nil) {
		res.Halted++
	}
	res.Details = workflow.GetCurrentDetails(ctx)
	return res, nil
}

// Agent is the scripted activity behind every node name.
func Agent(_ context.Context, t Turn, i int) (AgentResult, error) {
	if t.Err != "" {
		return AgentResult{}, temporal.NewNonRetryableApplicationError(t.Err, "AgentError", nil)
	}
	r := AgentResult{Output: t.Output, Failing: t.Failing, Cost: t.Cost}
	if t.Stamp {
		r.At = i
	}
	return r, nil
}

// Notify is an activity with no result, like a notification or a write.
func Notify(_ context.Context, t Turn, i int) error {
	if t.Err != "" {
		return temporal.NewNonRetryableApplicationError(t.Err, "NotifyError", nil)
	}
	return nil
}
