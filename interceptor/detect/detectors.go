package detect

import (
	"fmt"
	"time"
)

// detect runs the stall and oscillation detectors on node i's step r, just
// finalised, in priority order, and returns the first trip.
func (s *State) detect(i int, r *rec, now time.Time) *Trip {
	var t *Trip
	switch {
	case s.pol.v3():
		t = s.detectLoopV3(i, now)
	case s.pol.v2():
		t = s.detectRepeatsV2(i, r, now)
	default:
		t = s.detectRepeats(i, r, now)
	}
	if t != nil {
		return t
	}
	return s.detectDeclared(i, r, now)
}

// detectRepeats runs the legacy per-node repetition detectors.
func (s *State) detectRepeats(i int, r *rec, now time.Time) *Trip {
	n := &s.nodes[i]
	if k := s.repeatedError(n, r); k > 0 {
		return s.trip(DetectorRepeatedError, i, now,
			fmt.Sprintf("%s failed with the same error %d times in a row: %s", n.name, k, r.errSig))
	}
	if k := s.identicalOutput(n, r); k > 0 {
		return s.trip(DetectorIdenticalOutput, i, now,
			fmt.Sprintf("%s returned the same output %d times in a row", n.name, k))
	}
	if p := s.outputOscillation(n, r); p > 0 {
		return s.trip(DetectorOutputOscillation, i, now,
			fmt.Sprintf("%s output oscillates with period %d over its last %d results", n.name, p, p*s.lim.oscPeriods))
	}
	return nil
}

// detectDeclared runs the detectors of declared progress and metrics and
// the transition oscillation detector, the same in every generation.
func (s *State) detectDeclared(i int, r *rec, now time.Time) *Trip {
	n := &s.nodes[i]
	if k := s.unchangedProgress(n, r); k > 0 {
		v := r.progRaw
		if v == "" {
			v = hex16(r.prog)
		}
		return s.trip(DetectorUnchangedProgress, i, now,
			fmt.Sprintf("%s progress value unchanged for %d steps (%s)", n.name, k, v))
	}
	if k := s.noImprovement(n, r); k > 0 {
		return s.trip(DetectorNoImprovement, i, now,
			fmt.Sprintf("%s metric has not improved on its best (%.6g) for %d steps", n.name, n.best, k))
	}
	if s.pol.v3() {
		return nil // transitions repeat as part of the sequence rule
	}
	if p := s.transitionOscillation(); p > 0 {
		return s.transitionTrip(i, p, now)
	}
	return nil
}

// repeatedError: the node's last ErrorRepeatThreshold steps all failed with
// the same error signature. It returns the threshold when it trips, else 0.
func (s *State) repeatedError(n *node, r *rec) int {
	k := s.lim.errRepeat
	if k == 0 || !r.failed() || n.hist.n < k {
		return 0
	}
	for j := range k {
		if h := n.hist.at(j); !h.failed() || h.errSig != r.errSig {
			return 0
		}
	}
	return k
}

// identicalOutput: the node's last RepeatThreshold steps all succeeded with
// the same output (steps with an empty result are skipped: no signal).
func (s *State) identicalOutput(n *node, r *rec) int {
	k := s.lim.repeat
	if k == 0 || !r.output() {
		return 0
	}
	cnt := 0
	for j := 0; j < n.hist.n; j++ {
		h := n.hist.at(j)
		if h.silent() {
			continue
		}
		if h.failed() || h.out != r.out {
			return 0
		}
		if cnt++; cnt == k {
			return k
		}
	}
	return 0
}

// unchangedProgress: the node's declared progress value is the same in the
// last StallIterations steps that had one.
func (s *State) unchangedProgress(n *node, r *rec) int {
	k := s.lim.stall
	if k == 0 || !r.hasProg() {
		return 0
	}
	cnt := 0
	for j := 0; j < n.hist.n; j++ {
		h := n.hist.at(j)
		if !h.hasProg() {
			continue
		}
		if h.prog != r.prog {
			return 0
		}
		if cnt++; cnt == k {
			return k
		}
	}
	return 0
}

// noImprovement: the node's declared metric has not been strictly better
// than its best so far for NoImproveIterations consecutive steps.
func (s *State) noImprovement(n *node, r *rec) int {
	k := s.lim.noImprove
	if k == 0 || !r.hasMetric() || n.noImprove < k {
		return 0
	}
	return n.noImprove
}
