package detect

import "time"

// Paused tells the state that the workflow stood paused for d (a halt
// waiting for a human): d does not count toward cycle runtimes. Every
// cycle that has started, and every node's first visit (from which a cycle
// formed later takes its start), moves d later. Node runtimes need no
// change: they sum the durations of calls, and a paused call has not
// started.
func (s *State) Paused(d time.Duration) {
	if d <= 0 {
		return
	}
	for i := range s.nodes {
		if n := &s.nodes[i]; n.firstSeq > 0 {
			n.firstAt = n.firstAt.Add(d)
		}
	}
	for i := range s.cycles {
		if c := &s.cycles[i]; c.hasStart {
			c.start = c.start.Add(d)
		}
	}
}
