package detect

import "time"

// Paused tells the state that the workflow stood paused for d (a halt
// waiting for a human): d does not count toward cycle runtimes. Every
// cycle that has started, and every node's first visit (from which a cycle
// formed later takes its start), moves d later.
//
// Calls in flight across the pause move d later too, so their node's
// runtime is not charged the pause. The guard reads results lazily, at
// the next guarded call: a call that ended a minute into an hour's pause
// is read after the resume, and without the shift it would carry the
// whole hour.
func (s *State) Paused(d time.Duration) {
	if d <= 0 {
		return
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.firstSeq > 0 {
			n.firstAt = n.firstAt.Add(d)
		}
		if n.inflight > 0 {
			n.openAt = n.openAt.Add(d)
		}
	}
	for i := range s.cycles {
		if c := &s.cycles[i]; c.hasStart {
			c.start = c.start.Add(d)
		}
	}
}
