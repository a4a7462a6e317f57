package interceptor

import (
	"errors"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// inbound sets the guard up when the workflow starts and takes the guard's
// signals before the workflow sees them.
type inbound struct {
	sdkinterceptor.WorkflowInboundInterceptorBase
	g *guard
}

func (i *inbound) Init(next sdkinterceptor.WorkflowOutboundInterceptor) error {
	o := &outbound{g: i.g}
	o.Next = next
	i.g.next = next
	return i.Next.Init(o)
}

func (i *inbound) ExecuteWorkflow(ctx workflow.Context, in *sdkinterceptor.ExecuteWorkflowInput) (any, error) {
	if err := i.g.setup(ctx); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, i.g.cfg.StatusQuery, i.g.status); err != nil {
		return nil, err
	}
	res, err := i.Next.ExecuteWorkflow(ctx, in)
	var can *workflow.ContinueAsNewError
	if i.g.active && i.g.version >= versionSafety && errors.As(err, &can) {
		if cerr := i.g.carryOnReturn(ctx, can); cerr != nil {
			// Failing the workflow would lose it; the next run starts
			// with a fresh guard instead, loudly.
			i.g.next.GetLogger(ctx).Error("loopguard: state not carried to the next run", "error", cerr)
		}
	}
	return res, err
}

// HandleSignal consumes resume, escalate and halt, and the guard's own
// loop.halted echo; every other signal goes on to the workflow.
func (i *inbound) HandleSignal(ctx workflow.Context, in *sdkinterceptor.HandleSignalInput) error {
	g := i.g
	if !g.active {
		return i.Next.HandleSignal(ctx, in)
	}
	switch in.SignalName {
	case g.cfg.ResumeSignal, g.cfg.EscalateSignal, g.cfg.HaltSignal:
		g.onSignal(ctx, in.SignalName, in.Arg)
		return nil
	case g.cfg.HaltedSignal:
		if seq := g.ownHaltSeq(ctx, in); seq > 0 {
			g.echoed = max(g.echoed, seq)
			return nil
		}
	}
	return i.Next.HandleSignal(ctx, in)
}
