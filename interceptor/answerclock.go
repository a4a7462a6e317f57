package interceptor

import (
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/workflow"
)

// One clock for answers. A signed answer is valid in a
// window of workflow time, and the workflow time that judges it is the
// time of the workflow task that delivers it: the time of that task's
// WorkflowTaskStarted event, which every replay reads again.
//
// An update is handled inside its task, at that time. A signal is not: the
// Go SDK runs signal handlers while it applies the events that came before
// the task's WorkflowTaskStarted, when workflow.Now still shows the time
// of the task before, the one that raised the halt for a workflow paused
// since. Judged there, an answer whose window opens when it is sent was
// refused "not valid yet", and so was any answer to a halt older than the
// window's start. So the guard checks at once what does not depend on the
// time (signedFor: the signature, the key, the action, the execution) and
// holds a signal that passes for its task, taking it (takeInput) at the
// task's time in the order the signals came. The interceptor delivers
// them when the task's code first runs: a coroutine of the guard's that
// waits for held answers, and every hook of the guard that decides
// something before it (a call's admission, a wait, the workflow's end, an
// update's handler); the Judge at each WorkflowTaskStarted it reads
// (Judge.Deliver), before the task's commands and its updates. Both see
// the same events before the same decisions.
//
// A held answer is the guard's whatever becomes of it: a refusal at its
// task (expired, for another halt, nothing in force) is recorded as any
// refused answer is, and the signal is neither passed on to the workflow
// nor outside input. It carries an operator's signature for this
// execution, so it was meant for the guard.

// heldAnswer is a signed answer received as a signal and not yet taken.
type heldAnswer struct {
	name string
	p    *commonpb.Payload
}

// holdsForTask reports whether the guard's signal name with plain payload
// p is to be taken at the time of the task that delivers it (operators'
// keys set): a signed answer whose signature, key, action and execution
// check out. Any other input is taken, or refused, at once.
func (c *core) holdsForTask(name string, p *commonpb.Payload) bool {
	if len(c.cfg.OperatorKeys) == 0 {
		return false
	}
	data, err := inputData(c.cfg.MaxPayloadBytes, p)
	if err != nil {
		return false
	}
	_, err = c.signedFor(name, data)
	return err == nil
}

// deliver takes the answers held for this task at its workflow time now,
// in the order they came. refused, if not nil, hears each one refused.
func (c *core) deliver(now time.Time, refused func(name string, p *commonpb.Payload, err error)) {
	held := c.held
	c.held = nil // takeNow holds nothing: no answer is added meanwhile
	for _, a := range held {
		if err := c.takeNow(a.name, a.p, now); err != nil && refused != nil {
			refused(a.name, a.p, err)
		}
	}
}

// deliver takes the answers held for this task at the workflow's time, as
// the first code of the guard's that runs in the task.
func (g *guard) deliver(ctx workflow.Context) {
	if len(g.held) == 0 {
		return
	}
	g.core.deliver(workflow.Now(ctx), func(name string, p *commonpb.Payload, err error) {
		g.reject(ctx, name, err, p)
	})
}

// awaitAnswers runs, for the whole run, the guard's coroutine that takes
// held answers when their task starts, wherever the workflow waits. Its
// context is disconnected: a cancelled workflow still hears answers (as
// the paused call does, which returns the cancellation only once the
// halt is decided), and a cancelled Await must not spin.
func (g *guard) awaitAnswers(ctx workflow.Context) {
	if len(g.cfg.OperatorKeys) == 0 {
		return
	}
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			if err := workflow.Await(ctx, func() bool { return len(g.held) > 0 }); err != nil {
				return
			}
			g.deliver(ctx)
		}
	})
}
