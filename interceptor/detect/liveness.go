package detect

import "math"

// RetripRounds is the most rounds of a loop that goes on unchanged after
// it started over (a warning, a resume, a handler's decision: Resume)
// that the detectors need before one of them trips again: the window they
// read, or the edge budget's limit and one round more when that is
// longer. A round is one period of the loop in steps; parallel calls of
// one node are one step. The guard's liveness bound is built on it
// (interceptor.HaltBound); extensions granted by a resume lengthen it by
// what they add to the edge budget.
func RetripRounds(p Policy) int {
	l := newLimits(p)
	// The limit may be any int: one more than the largest is the largest.
	return max(l.window, min(l.budget.MaxEdgeWithoutProgress, math.MaxInt-1)+1)
}

// NewsSinceBarrier reports whether a step of one of nodes that finished
// since the latest barrier (a warning, a resume, outside input: Resume and
// Input put one) returned something new: a result (or error) that no
// earlier step of its node in the kept sequence returned, before the
// barrier or after it. A loop that goes on unchanged after a warning
// brings nothing new, however long its round, as long as the round fits
// the sequence (MaxLoopPeriod steps); an agent that changed its approach
// does.
//
// It reads at most the kept sequence (2 × MaxLoopPeriod steps), and only
// when asked: the guard asks when a warning's window has gone by.
func (s *State) NewsSinceBarrier(nodes []string) bool {
	// Each step read is compared with at least a longest loop's steps
	// before it, or with everything since the start while the sequence
	// is not full: a step at the far end of a full sequence has nothing
	// before it to be new against.
	limit := s.steps.n
	if limit == len(s.steps.buf) {
		limit -= MaxLoopPeriod
	}
	for i := 0; i < limit; i++ {
		st := s.steps.at(i)
		if st.node < 0 {
			return false // the barrier: nothing new after it
		}
		if !s.inNodes(int(st.node), nodes) {
			continue
		}
		seen := false
		for k := i + 1; k < s.steps.n && !seen; k++ {
			old := s.steps.at(k)
			seen = old.node == st.node && old.key == st.key
		}
		if !seen {
			return true
		}
	}
	return false
}

// inNodes reports whether node i is one of nodes.
func (s *State) inNodes(i int, nodes []string) bool {
	for _, name := range nodes {
		if s.find(name) == i {
			return true
		}
	}
	return false
}
