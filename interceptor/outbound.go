package interceptor

import (
	"time"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// outbound guards the workflow's activity, local activity and child
// workflow calls, and carries the guard's state across continue-as-new.
type outbound struct {
	sdkinterceptor.WorkflowOutboundInterceptorBase
	g *guard
}

func (o *outbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if !o.g.active || handlerCall(ctx) {
		return o.Next.ExecuteActivity(ctx, activityType, args...)
	}
	node := o.g.nodeName(driver{ctx: ctx}, KindActivity, activityType, args)
	o.g.countCall(ctx, KindActivity)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return failedFuture(ctx, err)
	}
	o.g.setNotice(ctx, node, ref.Seq, args)
	fut := o.Next.ExecuteActivity(ctx, activityType, args...)
	o.g.track(ref, node, fut)
	return fut
}

func (o *outbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if !o.g.active || o.g.raising || handlerCall(ctx) {
		return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	}
	node := o.g.nodeName(driver{ctx: ctx}, KindLocalActivity, activityType, args)
	o.g.countCall(ctx, KindLocalActivity)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return failedFuture(ctx, err)
	}
	o.g.setNotice(ctx, node, ref.Seq, args)
	fut := o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	o.g.track(ref, node, fut)
	return fut
}

func (o *outbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	if !o.g.active || handlerCall(ctx) {
		return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
	}
	node := o.g.nodeName(driver{ctx: ctx}, KindChildWorkflow, childWorkflowType, args)
	o.g.countCall(ctx, KindChildWorkflow)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return o.failedChildFuture(ctx, childWorkflowType, err, args...)
	}
	o.g.setNotice(ctx, node, ref.Seq, args)
	fut := o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
	o.g.track(ref, node, fut)
	return fut
}

// Timers: the workflow is about to wait on one. Results that are in are
// read (waits), and the detectors hear that the workflow waits.
//
// This happens exactly when the SDK
// writes a StartTimer command, at the point of the history's TimerStarted
// event, which is where the analysis (and the watcher) read results and
// hear a timer. In SDK 1.50 the root interceptor writes one only for a
// positive duration (a zero or negative one gives a ready future and no
// command), and reaches it by two roads: NewTimer calls the command code
// directly, while Sleep, AwaitWithTimeout and AwaitWithOptions call
// workflow.NewTimerWithOptions, which enters the interceptor chain again
// from its head. So NewTimer and NewTimerWithOptions act, and Sleep and the
// Awaits leave it to the NewTimerWithOptions they lead to: a Sleep or
// Await that writes no timer does not wait, and the history shows nothing
// there. Whether an Await whose condition already holds writes its timer
// is the SDK's choice (its flag SDKFlagCancelAwaitTimerOnCondition, off by
// default in 1.50, skips it): the guard follows. A timer canceled in the
// task that started it is still written (the SDK sends StartTimer, then
// CancelTimer), and counts. TestOutboundMethodsDecided lists every
// outbound method with its decision.

func (o *outbound) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	o.timer(ctx, d)
	return o.Next.NewTimer(ctx, d)
}

func (o *outbound) NewTimerWithOptions(ctx workflow.Context, d time.Duration, opts workflow.TimerOptions) workflow.Future {
	o.timer(ctx, d)
	return o.Next.NewTimerWithOptions(ctx, d, opts)
}

// Await writes no timer: the workflow waits, and the guard reads the
// results that are in (the analysis reads them when a workflow task ends
// idle, Judge.Idle).
func (o *outbound) Await(ctx workflow.Context, condition func() bool) error {
	o.g.liveWaits(ctx, false)
	return o.Next.Await(ctx, condition)
}

// timer is a timer of duration d: one the SDK writes (d > 0) is waited on.
func (o *outbound) timer(ctx workflow.Context, d time.Duration) {
	if d > 0 {
		o.g.liveWaits(ctx, true)
	}
}

// failedFuture is a ready future holding err.
func failedFuture(ctx workflow.Context, err error) workflow.Future {
	f, s := workflow.NewFuture(ctx)
	s.SetError(err)
	return f
}

// failedChildFuture returns a child workflow future that failed with err
// without starting the child. The SDK offers no way to build a
// ChildWorkflowFuture, and a wrapper would panic in workflow.Selector
// ("cannot chain Future that wasn't created with workflow.NewFuture"). But
// the SDK returns a failed future of its own, issuing no command, when the
// context of the call already has an error: a context whose Err is err
// gives the workflow a real child future holding err.
func (o *outbound) failedChildFuture(ctx workflow.Context, childWorkflowType string, err error, args ...any) workflow.ChildWorkflowFuture {
	return o.Next.ExecuteChildWorkflow(failedContext{Context: ctx, err: err}, childWorkflowType, args...)
}

// failedContext is a workflow context whose Err is err.
type failedContext struct {
	workflow.Context
	err error
}

func (c failedContext) Err() error { return c.err }

// SetUpdateHandler lets the workflow's own update handlers win over the
// guard's of the same name: the SDK keeps the last handler registered for a
// name, and the workflow registers after the guard. The guard's resume and
// escalate signals still work; Options.ResumeUpdate and EscalateUpdate
// rename the guard's updates to keep both.
func (o *outbound) SetUpdateHandler(ctx workflow.Context, updateName string, handler any, opts workflow.UpdateHandlerOptions) error {
	if g := o.g; g.active && (updateName == g.cfg.ResumeUpdate || updateName == g.cfg.EscalateUpdate) {
		o.Next.GetLogger(ctx).Warn("loopguard: the workflow's own update handler replaces the guard's; "+
			"use the guard's signal or rename its update (Options.ResumeUpdate, Options.EscalateUpdate)", "update", updateName)
	}
	return o.Next.SetUpdateHandler(ctx, updateName, handler, opts)
}
