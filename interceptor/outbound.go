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
	if !o.g.active {
		return o.Next.ExecuteActivity(ctx, activityType, args...)
	}
	node := o.g.nodeName(KindActivity, activityType, args)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return failedFuture(ctx, err)
	}
	fut := o.Next.ExecuteActivity(ctx, activityType, args...)
	o.g.track(ref, node, fut)
	return fut
}

func (o *outbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if !o.g.active || o.g.raising {
		return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	}
	node := o.g.nodeName(KindLocalActivity, activityType, args)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return failedFuture(ctx, err)
	}
	fut := o.Next.ExecuteLocalActivity(ctx, activityType, args...)
	o.g.track(ref, node, fut)
	return fut
}

func (o *outbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	if !o.g.active {
		return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
	}
	node := o.g.nodeName(KindChildWorkflow, childWorkflowType, args)
	ref, err := o.g.admit(ctx, node)
	if err != nil {
		return failedChildFuture(ctx, err)
	}
	fut := o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
	o.g.track(ref, node, fut)
	return fut
}

// The workflow is about to wait: results that are in are read now, so that
// a node's runtime ends when its result arrived, not when the workflow next
// calls out after a sleep.

func (o *outbound) Sleep(ctx workflow.Context, d time.Duration) error {
	o.g.observeIdle(ctx)
	if o.g.active {
		o.g.state.Timer(workflow.Now(ctx)) // waiting vs looping: a durable timer between polls
	}
	return o.Next.Sleep(ctx, d)
}

func (o *outbound) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	o.g.observeIdle(ctx)
	if o.g.active {
		o.g.state.Timer(workflow.Now(ctx)) // waiting vs looping: a durable timer between polls
	}
	return o.Next.NewTimer(ctx, d)
}

func (o *outbound) Await(ctx workflow.Context, condition func() bool) error {
	o.g.observeIdle(ctx)
	return o.Next.Await(ctx, condition)
}

func (o *outbound) AwaitWithTimeout(ctx workflow.Context, timeout time.Duration, condition func() bool) (bool, error) {
	o.g.observeIdle(ctx)
	if o.g.active {
		o.g.state.Timer(workflow.Now(ctx)) // waiting vs looping: a durable timer between polls
	}
	return o.Next.AwaitWithTimeout(ctx, timeout, condition)
}

func (o *outbound) NewContinueAsNewError(ctx workflow.Context, wfn any, args ...any) error {
	if o.g.active {
		if err := o.g.writeCarry(ctx); err != nil {
			return err
		}
	}
	return o.Next.NewContinueAsNewError(ctx, wfn, args...)
}

// failedFuture is a ready future holding err.
func failedFuture(ctx workflow.Context, err error) workflow.Future {
	f, s := workflow.NewFuture(ctx)
	s.SetError(err)
	return f
}

// escalatedChild stands in for a child workflow that was never started
// because its loop was escalated. The SDK offers no way to build a
// ChildWorkflowFuture, so Get, IsReady and the execution future work, but
// a workflow.Selector cannot take it: handle the error from Get.
type escalatedChild struct {
	workflow.Future
}

func failedChildFuture(ctx workflow.Context, err error) workflow.ChildWorkflowFuture {
	return escalatedChild{Future: failedFuture(ctx, err)}
}

func (c escalatedChild) GetChildWorkflowExecution() workflow.Future { return c.Future }

func (c escalatedChild) SignalChildWorkflow(ctx workflow.Context, signalName string, data any) workflow.Future {
	return c.Future
}
