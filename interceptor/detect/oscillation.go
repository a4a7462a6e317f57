package detect

// outputOscillation: the node's last OscillationPeriods×p successful outputs
// are periodic with period p (o[i] == o[i-p]) for some p in
// 2..MaxOscillationPeriod, smallest first, and one period holds at least
// two distinct outputs (one repeated output is identicalOutput's job). It
// returns p, or 0.
func (s *State) outputOscillation(n *node, r *rec) int {
	if s.lim.oscPeriods == 0 || !r.output() {
		return 0
	}
	most := s.lim.oscPeriods * s.lim.maxOscP
	outs := s.scratch[:0]
	for j := 0; j < n.hist.n && len(outs) < most; j++ {
		if h := n.hist.at(j); h.output() {
			v := h.out
			if s.pol.v2() {
				v = h.key // commentary and measurements left out
			}
			outs = append(outs, v)
		}
	}
	s.scratch = outs[:0]
	for p := 2; p <= s.lim.maxOscP; p++ {
		need := s.lim.oscPeriods * p
		if len(outs) < need {
			break
		}
		if periodic(outs[:need], p) {
			return p
		}
	}
	return 0
}

// periodic reports whether w (newest first) repeats with period p and one
// period holds two distinct values.
func periodic(w []uint64, p int) bool {
	for j := 0; j+p < len(w); j++ {
		if w[j] != w[j+p] {
			return false
		}
	}
	for j := 1; j < p; j++ {
		if w[j] != w[0] {
			return true
		}
	}
	return false
}

// transitionOscillation: the last OscillationPeriods×p transitions (global
// order) repeat with period p in 2..MaxOscillationPeriod, one period holds
// two distinct transitions, and none of the steps they led to made progress.
// It returns p, or 0.
func (s *State) transitionOscillation() int {
	if s.lim.oscPeriods == 0 {
		return 0
	}
	for p := 2; p <= s.lim.maxOscP; p++ {
		need := s.lim.oscPeriods * p
		if s.trans.n < need {
			return 0
		}
		for j := 0; j < need; j++ {
			if s.trans.at(j).prog != progNo {
				return 0 // a longer window holds this step too
			}
		}
		if s.transPeriodic(need, p) {
			return p
		}
	}
	return 0
}

func (s *State) transPeriodic(need, p int) bool {
	for j := 0; j+p < need; j++ {
		a, b := s.trans.at(j), s.trans.at(j+p)
		if a.from != b.from || a.to != b.to {
			return false
		}
	}
	first := s.trans.at(0)
	for j := 1; j < p; j++ {
		if t := s.trans.at(j); t.from != first.from || t.to != first.to {
			return true
		}
	}
	return false
}
