package detect

import "time"

// reasonOf maps a detector to its halt reason.
func reasonOf(d Detector) Reason {
	if b := budgetOf(d); b != nil {
		return b.Reason
	}
	switch d {
	case DetectorOutputOscillation, DetectorTransitionOscillation:
		return ReasonOscillating
	case DetectorRepeatedError:
		return ReasonRepeatedError
	case DetectorUserStop:
		return ReasonUserStop
	default:
		return ReasonStalled
	}
}

// trip builds the Trip of detector d at node i: its cycle, if any, and the
// evidence of the node's histories and the latest transitions.
func (s *State) trip(d Detector, i int, now time.Time, msg string) *Trip {
	t := &Trip{
		Reason:   reasonOf(d),
		Detector: d,
		Message:  msg,
		At:       now,
	}
	if i >= 0 && i < len(s.nodes) {
		n := &s.nodes[i]
		t.Node = n.name
		if n.cyc >= 0 {
			c := &s.cycles[n.cyc]
			t.CycleID, t.Iteration, t.MaxIterations = c.id, c.iter, s.iterLimit(c)
		}
		t.Evidence = s.evidence(n)
		s.measure(t, i, 0, 0)
	} else {
		t.Evidence.Transitions = s.transitionStrings()
	}
	return t
}

// measure sets the loop's identity and measure on trip t of node i (see
// Trip.Loop): period p and window w when the detector knows them (the
// sequence rules), else the cycle's size and, for the detectors that read
// no sequence, Policy.Window rounds of it (the edge budget: its limit
// plus one).
func (s *State) measure(t *Trip, i, p, w int) {
	n := &s.nodes[i]
	t.Loop = n.name
	if n.cyc >= 0 {
		c := &s.cycles[n.cyc]
		t.Loop = s.nodes[c.anchor].name
		if p == 0 {
			p = len(c.members)
		}
	}
	if p == 0 {
		p = 1
	}
	if w == 0 {
		rounds := s.lim.window
		if t.Detector == DetectorEdgeWithoutProgress {
			rounds = max(rounds, s.edgeLimit(n)+1)
		}
		w = rounds * p
	}
	t.Period, t.Window = p, w
}

// evidence lists a node's history, oldest first: at most Window entries per
// list, each string at most 200 bytes.
func (s *State) evidence(n *node) Evidence {
	var ev Evidence
	for j := n.hist.n - 1; j >= 0; j-- {
		h := n.hist.at(j)
		switch {
		case h.failed():
			ev.ErrorSignatures = append(ev.ErrorSignatures, truncate(h.errSig, maxNameLen))
		case h.silent():
		default:
			ev.OutputHashes = append(ev.OutputHashes, hex16(h.out))
		}
		if h.hasProg() {
			v := h.progRaw
			if v == "" {
				v = hex16(h.prog)
			}
			ev.ProgressValues = append(ev.ProgressValues, truncate(v, maxNameLen))
		}
		if h.hasMetric() {
			ev.Metrics = append(ev.Metrics, h.metric)
		}
	}
	ev.Transitions = s.transitionStrings()
	return ev
}

// transitionStrings lists the transition window as "A->B", oldest first.
func (s *State) transitionStrings() []string {
	if s.trans.n == 0 {
		return nil
	}
	out := make([]string, 0, s.trans.n)
	for k := s.trans.n - 1; k >= 0; k-- {
		t := s.trans.at(k)
		out = append(out, truncate(s.nodes[t.from].name+"->"+s.nodes[t.to].name, maxNameLen))
	}
	return out
}

// sameTrip reports whether two trips are the same halt (one may be a copy
// of the other, say after a JSON round trip).
func sameTrip(a, b *Trip) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.Reason == b.Reason && a.Detector == b.Detector && a.Node == b.Node &&
		a.CycleID == b.CycleID && a.Message == b.Message && a.At.Equal(b.At)
}
