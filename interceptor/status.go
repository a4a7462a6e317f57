package interceptor

import (
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// status answers the status query. Queries must not change state: it only
// reads.
func (g *guard) status() (Status, error) {
	s := Status{State: StateRunning, Policy: g.cfg.OnHalt, Halts: g.halts, LastDecision: g.lastDecision, LastRejected: g.lastRejected}
	if !g.active {
		s.State = StateDisabled
		return s, nil
	}
	switch {
	case g.paused != nil:
		s.State, s.Halt = StateHalted, g.paused
	case g.escalated:
		s.State, s.Halt = StateEscalated, g.lastHalt
	}
	v := g.state.View()
	s.Cycles, s.Nodes, s.TotalCalls, s.Transitions = v.Cycles, v.Nodes, v.TotalCalls, v.Transitions
	return s, nil
}

// ownHaltSeq tells the guard's echo of its own loop.halted signal from a
// loop.halted a supervisor workflow receives about others: it returns the
// echoed halt's Seq, or 0.
func (g *guard) ownHaltSeq(ctx workflow.Context, in *sdkinterceptor.HandleSignalInput) int {
	p, err := firstPayload(in.Arg)
	if err != nil || p == nil {
		return 0
	}
	var ev HaltEvent
	if err := g.decode(ctx, p, &ev); err != nil {
		return 0
	}
	// The run id alone identifies the execution; the workflow id would not
	// do under the SDK's file replayer, which replays every history as
	// workflow "ReplayId".
	if ev.RunID != g.info.WorkflowExecution.RunID {
		return 0
	}
	return ev.Seq
}
