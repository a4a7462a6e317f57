package detect

import "time"

// Ahead reports the detector that the next Begin of node name will trip
// whatever that call's input, where the state alone already decides it: a
// trip pending from a result read at End (identical output, repeated
// error, the stall and oscillation rules) or from a human's stop, and the
// budgets counted before the call (MaxTotalCalls, MaxCost, the node's step
// and runtime budgets). A watcher that knows the trip in advance can hold
// the call before it is dispatched, as the guard holds it.
//
// It is conservative: ok false means no trip is decided in advance, not
// that none comes. The rules that depend on the call itself are left out:
// the cycle and edge budgets (the edge from the previous node, and a new
// edge's cycles, are learnt at Begin) and the cycle runtime (the call's
// time). A call that joins its node's open step (fan-out) trips only the
// execution's budgets, as Begin does. Ahead only reads.
func (s *State) Ahead(name string) (d Detector, ok bool) {
	i := s.find(name)
	exempt, joins := false, false
	switch {
	case i >= 0:
		exempt, joins = s.nodes[i].exempt, s.nodes[i].inflight > 0
	case s.named() >= s.lim.maxNodes && !s.policyNames(name):
		// Begin folds the name into the overflow node.
		if i = s.overflow; i >= 0 {
			joins = s.nodes[i].inflight > 0
		}
	default:
		exempt = s.pol.Nodes[truncate(name, maxNameLen)].Exempt
	}
	if exempt {
		if s.pending != nil && s.pending.Reason == ReasonUserStop {
			return s.pending.Detector, true
		}
		return s.totalAhead()
	}
	if s.pending != nil {
		return s.pending.Detector, true
	}
	if d, ok := s.totalAhead(); ok {
		return d, true
	}
	if lim := s.costLimit(); lim > 0 && s.totalCost > lim {
		return DetectorTotalCost, true
	}
	if joins || i < 0 {
		// A new node has no steps and no runtime yet.
		return "", false
	}
	n := &s.nodes[i]
	if lim := s.callLimit(n); lim > 0 && n.steps+1 > lim {
		return DetectorNodeCalls, true
	}
	if lim := s.runLimit(n); lim > 0 && n.run >= lim {
		return DetectorNodeRuntime, true
	}
	return "", false
}

// totalAhead is checkTotal's rule, read only.
func (s *State) totalAhead() (Detector, bool) {
	if lim := s.totalLimit(); lim > 0 && s.totalCalls+1 > lim {
		return DetectorTotalCalls, true
	}
	return "", false
}

// Foreseen is the trip that the next Begin of any node that is not
// exempt meets, whatever the node, where the state already decides it:
// a trip pending from a result read or a human's stop (a copy), or the
// execution's call or cost budget spent. A watcher that does not know
// which node the workflow calls next can hold that call all the same.
// A budget's trip names no node: the call that meets it does. An exempt
// node's call meets only a human's stop and the call budget (Ahead).
// Foreseen only reads.
func (s *State) Foreseen(now time.Time) (*Trip, bool) {
	if s.pending != nil {
		return s.pending.clone(), true
	}
	if t := s.checkTotal(-1, now); t != nil {
		return t, true
	}
	if t := s.checkCost(-1, now); t != nil {
		return t, true
	}
	return nil, false
}
