package interceptor

import (
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"
)

// driver is who runs the guard's shared paths (nodeName, enter,
// observeReady, waits, closeRun): the interceptor, live, with the
// workflow context of the call at hand; or a Judge, which has no workflow
// (its results were read when they were recorded, readFuture) and keeps
// its own log.
type driver struct {
	ctx workflow.Context // live
	log *judgeLog        // a Judge's
}

// logger is where the shared paths log: the SDK's replay-safe logger,
// live, or the Judge's lines.
func (g *guard) logger(d driver) log.Logger {
	if d.log != nil {
		return d.log
	}
	return g.next.GetLogger(d.ctx)
}

// liveWaits is waits as the interceptor runs it, at workflow.Now, after
// taking the input that came in (the Judge takes it at each task's start).
func (g *guard) liveWaits(ctx workflow.Context, timer bool) {
	if !g.active {
		return
	}
	g.deliver(ctx)
	g.waits(driver{ctx: ctx}, workflow.Now(ctx), timer)
}
