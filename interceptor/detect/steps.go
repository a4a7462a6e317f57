package detect

import "time"

// End records the result of a call started by Begin, now being the workflow
// clock. A step is finalised when its last call in flight ends; a fan-out
// step's observation combines its calls: the sum of the output hashes
// (order-independent), failed only if every call failed (with the first
// error signature), costs and metrics added. Finalising a step adds its
// runtime and cost to the budgets, decides whether it made progress and runs
// the stall and oscillation detectors; the first that trips becomes the
// pending trip, returned by the next Begin of a non-exempt node.
//
// Ends for unknown, stale or duplicate refs are ignored.
func (s *State) End(ref StepRef, obs Observation, now time.Time) {
	n := s.openStep(ref)
	if n == nil {
		return
	}
	a := &n.agg
	a.ended++
	if obs.Failed {
		if a.errSig == "" {
			a.errSig = truncate(obs.ErrorSig, maxNameLen)
			a.errHash = obs.ErrorHash
		}
	} else {
		a.ok = true
		a.out += obs.Output
		if obs.HasProgress {
			if !a.hasProg {
				a.progRaw = truncate(obs.ProgressRaw, maxRawLen)
			}
			a.hasProg = true
			a.prog += obs.Progress
		}
		if obs.HasMetric {
			a.hasMetric = true
			a.metric += obs.Metric
		}
	}
	if obs.Cost > 0 { // also false for NaN
		a.cost += obs.Cost
	}
	n.endCall(&obs)
	n.inflight--
	if n.inflight == 0 {
		s.finalise(ref.Node, now.Round(0))
	}
}

// finalise closes node i's open step.
func (s *State) finalise(i int, now time.Time) {
	n := &s.nodes[i]
	a := n.agg
	n.agg = agg{}
	if d := now.Sub(n.openAt); d > 0 {
		n.run += d
	}
	n.cost += a.cost
	s.totalCost += a.cost
	if n.cyc >= 0 {
		s.cycles[n.cyc].cost += a.cost
	}

	r := rec{out: a.out, errSig: a.errSig}
	switch {
	case !a.ok:
		r.flags |= recFailed
	default:
		if a.hasProg {
			r.flags |= recHasProg
			r.prog, r.progRaw = a.prog, a.progRaw
		}
		if a.hasMetric {
			r.flags |= recHasMetric
			r.metric = a.metric
		}
		if a.out == 0 && !a.hasProg && !a.hasMetric {
			r.flags |= recSilent
		}
	}
	s.judge(n, &r, &a)
	prog := s.progress(n, &r)
	s.novelty(n, &r, prog)
	s.pushSeq(i, &r, a.errHash)
	// The sequence keeps them; no rule reads them from the node's
	// history.
	r.shape, r.count = 0, 0
	n.hist.push(r)

	if prog {
		for _, e := range n.in {
			s.edges[e].count = 0
		}
	}
	for k := 0; k < s.trans.n; k++ {
		if t := s.trans.at(k); t.seq == n.openSeq {
			t.prog = progNo
			if prog {
				t.prog = progYes
			}
			break
		}
	}
	if t := s.detect(i, &r, now); t != nil && s.pending == nil {
		s.pending = t
	}
}

// progress decides whether step r of node n made progress, and updates the
// node's progress value and best metric. Progress is a new declared progress
// value, or a metric strictly better than the best so far, or, with neither
// declared, an output not among the node's last Window outputs. A failed
// step is never progress; a silent one (empty result) is, for want of any
// signal to the contrary.
func (s *State) progress(n *node, r *rec) bool {
	if r.failed() {
		return false
	}
	prog := false
	if r.hasProg() {
		if !n.hasLastProg || n.lastProg != r.prog {
			prog = true
		}
		n.hasLastProg, n.lastProg = true, r.prog
	}
	if r.hasMetric() {
		if !n.hasBest || better(r.metric, n.best, n.higher) {
			prog = true
			n.hasBest, n.best, n.noImprove = true, r.metric, 0
		} else {
			n.noImprove++
		}
	}
	if r.hasProg() || r.hasMetric() {
		return prog
	}
	if r.silent() {
		return true
	}
	for k := 0; k < n.hist.n; k++ {
		if h := n.hist.at(k); h.output() && h.out == r.out {
			return false
		}
	}
	return true
}

func better(v, best float64, higher bool) bool {
	if higher {
		return v > best
	}
	return v < best
}

// Abandon gives up on a call started by Begin whose result will never be
// observed: its run continues as new while it is in flight. The call stops
// counting as in flight, so the node's next call opens a step of its own
// instead of joining this one forever. When it was the step's last call in
// flight, the step is finalised with what its other calls showed, or, when
// none showed anything, closed without a history entry (its runtime up to
// now still counts).
func (s *State) Abandon(ref StepRef, now time.Time) {
	n := s.openStep(ref)
	if n == nil {
		return
	}
	n.inflight--
	if n.inflight > 0 {
		return
	}
	if n.agg.ended > 0 {
		s.finalise(ref.Node, now.Round(0))
		return
	}
	n.agg = agg{}
	if d := now.Round(0).Sub(n.openAt); d > 0 {
		n.run += d
	}
}

// openStep resolves the ref of a call that ends (or is abandoned) to the
// node whose open step it belongs to. An exempt call just leaves the node's
// in-flight count; unknown, stale and duplicate refs resolve to nil.
func (s *State) openStep(ref StepRef) *node {
	if ref.Node < 0 || ref.Node >= len(s.nodes) {
		return nil
	}
	n := &s.nodes[ref.Node]
	if ref.Seq == 0 { // exempt call
		if n.exempt && n.inflight > 0 {
			n.inflight--
		}
		return nil
	}
	if n.exempt || ref.Seq != n.openSeq || n.inflight <= 0 {
		return nil
	}
	return n
}
