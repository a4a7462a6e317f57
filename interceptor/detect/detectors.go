package detect

import (
	"fmt"
	"time"
)

// detect runs the stall and oscillation detectors on node i's step r, just
// finalised, in priority order, and returns the first trip.
func (s *State) detect(i int, r *rec, now time.Time) *Trip {
	if t := s.detectLoop(i, now); t != nil {
		return t
	}
	return s.detectDeclared(i, r, now)
}

// detectDeclared runs the detectors of declared progress and metrics.
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
	return nil // transitions repeat as part of the sequence rule
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
