package interceptor

import (
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// status answers the status query. Queries must not change state: it only
// reads.
func (g *guard) status() (Status, error) {
	p := &g.pause
	s := Status{State: StateRunning, Policy: g.cfg.OnHalt, Halts: g.halts, LastDecision: p.last, LastRejected: g.lastRejected}
	for _, r := range g.refused {
		s.Refused = append(s.Refused, *r)
	}
	if !g.active {
		s.State = StateDisabled
		return s, nil
	}
	switch {
	case p.showsHalted():
		s.State, s.Halt, s.Handling = StateHalted, p.halt, p.deciding
	case p.phase == phaseEscalated:
		s.State, s.Halt = StateEscalated, p.halt
	}
	s.Stopping = g.state.Stopping()
	s.Guidance = g.guidance
	s.Warning, s.Warnings = p.warning(), p.Warnings
	v := g.state.View()
	s.Cycles, s.Nodes, s.TotalCalls, s.Transitions = v.Cycles, v.Nodes, v.TotalCalls, v.Transitions
	return s, nil
}

// ownEcho tells the guard's echo of its own loop.halted signal from a
// loop.halted a supervisor workflow receives about others, and counts it.
// It reports whether the signal is the guard's own, which the workflow
// never sees.
func (g *guard) ownEcho(ctx workflow.Context, in *sdkinterceptor.HandleSignalInput) bool {
	p, err := firstPayload(in.Arg)
	if err != nil || p == nil {
		return false
	}
	var ev HaltEvent
	if err := g.decode(ctx, p, &ev); err != nil {
		return false
	}
	// The run id identifies the execution; the workflow id alone would not
	// do under the SDK's file replayer, which replays every history as
	// workflow "ReplayId".
	info := g.info.WorkflowExecution
	if ev.RunID == info.RunID {
		g.echoedSeq = max(g.echoedSeq, ev.Seq)
		g.echoed(ev)
		return true
	}
	// After a reset, the server re-applies the signals the old run received
	// after the reset point, loop.halted echoes among them: they are this
	// workflow's own, stale. (Version 4; older versions passed them on.)
	if g.version >= versionSafety && ev.Seq > 0 &&
		(ev.RunID == g.info.OriginalRunID || ev.WorkflowID == info.ID) {
		g.echoed(ev)
		return true
	}
	return false
}
