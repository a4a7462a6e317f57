package interceptor

import (
	"slices"

	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Ahead reports the halt that the Judge's next guarded call will raise,
// whatever that call is (any node the options do not exempt), where what
// the history holds so far already decides it: the results read since
// the last call make a trip pending (identical output, repeated error,
// the stall and oscillation rules), a human asked to stop, or the
// execution's call or cost budget is spent (detect.State.Foreseen). It
// reads the results as the next call will, on a copy of the detector
// state, and puts the trip through the warning rung as the call will: a
// trip the rung warns is no halt. ev is the halt as the call will raise
// it (its Seq the next halt's), but for a budget's, which names no node
// until a call meets it; policy is what it does under the options.
//
// A watcher of running executions (package worker/watch) holds the call
// with it: it pauses the run while the workflow task that reads those
// results is in flight, so that the call that task schedules is not
// dispatched, as the guard holds the call that trips. Ahead changes
// nothing of the Judge: the same history is judged the same with or
// without it.
func (j *judge) Ahead() (ev protocol.HaltEvent, policy protocol.OnHalt, ok bool) {
	g := &j.g
	if !j.guarded || j.blocked != nil || !g.active || g.pause.inForce() {
		return protocol.HaltEvent{}, "", false
	}
	// The guard's own reading of the results in, and of the outside
	// input, as the next call's admission runs them (guard.enter,
	// core.begin), on a copy: the detector state cloned, the pending
	// calls copied, its log lines dropped (the call itself logs them).
	p := *g
	p.state = g.state.Clone()
	p.pending = slices.Clone(g.pending)
	p.observeReady(driver{log: &judgeLog{}}, j.now)
	p.flushInput(j.now)
	s := p.state
	t, ok := s.Foreseen(j.now)
	if !ok || g.warnable(t) {
		return protocol.HaltEvent{}, "", false
	}
	policy = g.haltPolicy(t)
	ev = g.haltEvent(t)
	ev.Seq = g.halts + 1
	ev.Observed = policy == protocol.OnHaltObserve
	return ev, policy, true
}
