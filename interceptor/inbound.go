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
	// early holds the signals that arrive before the guard is set up: the
	// SDK delivers the signals of the first workflow task (SignalWithStart
	// among them) before the workflow function runs.
	early []earlySignal
	ready bool
}

// earlySignal is a signal delivered before setup.
type earlySignal struct {
	ctx workflow.Context
	in  *sdkinterceptor.HandleSignalInput
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
	i.deliverEarly()
	if i.g.active {
		i.g.deliver(ctx)
		i.g.awaitAnswers(ctx)
	}
	if n, ok := readNotice(sdkinterceptor.WorkflowHeader(ctx)); ok {
		// The notice this (child) workflow was started with, kept before
		// the guard's own calls rewrite the outgoing header.
		ctx = workflow.WithValue(ctx, noticeKey{}, n)
		i.g.noticed = true // not passed on to this workflow's own calls
	}
	ctx = workflow.WithValue(ctx, guardKey{}, i.g) // for SetHaltHandler
	res, err := i.Next.ExecuteWorkflow(ctx, in)
	if i.g.active {
		i.g.deliver(ctx) // answers that came with the task the run ends in
	}
	i.g.awaitEchoes(ctx)
	if err == nil && i.g.active {
		i.g.endHeeded(ctx)
	}
	var can *workflow.ContinueAsNewError
	if i.g.active && errors.As(err, &can) {
		if cerr := i.g.carryOnReturn(ctx, can); cerr != nil {
			// Failing the workflow would lose it; the next run starts
			// with a fresh guard instead, loudly.
			i.g.next.GetLogger(ctx).Error("loopguard: state not carried to the next run", "error", cerr)
		}
	}
	return res, err
}

// deliverEarly hands the signals held back before setup to the guard, in
// the order they came, before the workflow function runs.
func (i *inbound) deliverEarly() {
	early := i.early
	i.early, i.ready = nil, true
	for _, s := range early {
		var err error
		if i.g.active {
			err = i.HandleSignal(s.ctx, s.in)
		} else {
			err = i.Next.HandleSignal(s.ctx, s.in)
		}
		if err != nil {
			i.g.next.GetLogger(s.ctx).Warn("loopguard: early signal not delivered", "signal", s.in.SignalName, "error", err)
		}
	}
}

// HandleSignal takes resume, escalate and halt when the guard has something
// to do with them, and the guard's own loop.halted echo; every other signal
// goes on to the workflow. A resume, escalate or halt the guard does not
// take goes on too: it may be the workflow's own. Such a signal is not
// outside input to the detectors: it was
// sent to the guard (a workflow whose own input should break repetition
// uses a signal name of its own).
func (i *inbound) HandleSignal(ctx workflow.Context, in *sdkinterceptor.HandleSignalInput) error {
	if !i.ready {
		i.early = append(i.early, earlySignal{ctx: ctx, in: in})
		return nil
	}
	g := i.g
	if !g.active {
		return i.Next.HandleSignal(ctx, in)
	}
	take := func() bool {
		if g.onSignal(ctx, in.SignalName, in.Arg) {
			return true
		}
		if r := g.lastRejected; r != nil {
			r.PassedOn = true
		}
		return false
	}
	if g.signal(in.SignalName, take, func() bool { return g.ownEcho(ctx, in) }) {
		return nil
	}
	return i.Next.HandleSignal(ctx, in)
}

// ExecuteUpdate notes the workflow's own updates as outside input; the
// guard's resume and escalate updates are answers, which the detector
// hears through Resume.
func (i *inbound) ExecuteUpdate(ctx workflow.Context, in *sdkinterceptor.UpdateInput) (any, error) {
	if g := i.g; g.active {
		g.update(in.Name)
	}
	return i.Next.ExecuteUpdate(ctx, in)
}
