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
