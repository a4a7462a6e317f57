package interceptor

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// status answers the status query. Queries must not change state: it only
// reads.
func (g *guard) status() (protocol.Status, error) {
	p := &g.pause
	s := protocol.Status{State: protocol.StateRunning, Policy: g.cfg.OnHalt, Halts: g.halts, LastDecision: p.last, LastRejected: g.lastRejected,
		Names: protocol.AnswerNames{ResumeSignal: g.cfg.ResumeSignal, EscalateSignal: g.cfg.EscalateSignal, HaltSignal: g.cfg.HaltSignal,
			ResumeUpdate: g.cfg.ResumeUpdate, EscalateUpdate: g.cfg.EscalateUpdate}}
	for _, r := range g.refused {
		s.Refused = append(s.Refused, *r)
	}
	if !g.active {
		s.State = protocol.StateDisabled
		return s, nil
	}
	switch {
	case p.showsHalted():
		s.State, s.Halt, s.Handling = protocol.StateHalted, p.halt, p.deciding
	case p.phase == phaseEscalated:
		s.State, s.Halt = protocol.StateEscalated, p.halt
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
	var ev protocol.HaltEvent
	if err := g.decode(ctx, p, &ev); err != nil {
		return false
	}
	switch g.echo(ev) {
	case echoOwn:
		g.echoed(ev)
		return true
	case echoStale:
		g.echoed(ev)
		return true
	}
	return false
}
