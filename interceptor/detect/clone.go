package detect

import (
	"maps"
	"slices"
)

// Clone returns a copy of the state that shares nothing it changes with
// s: what the one is told afterwards leaves the other as it was. A
// watcher previews what the results read so far make of the next call
// (End on the copy, then Ahead) without changing the state it judges
// with. The policy, which neither changes, is shared.
func (s *State) Clone() *State {
	c := *s
	c.nodes = slices.Clone(s.nodes)
	for i := range c.nodes {
		n := &c.nodes[i]
		n.hist = n.hist.clone()
		n.in = slices.Clone(n.in)
		n.out = slices.Clone(n.out)
	}
	c.index = maps.Clone(s.index)
	c.edges = slices.Clone(s.edges)
	c.edgeIdx = maps.Clone(s.edgeIdx)
	c.cycles = slices.Clone(s.cycles)
	for i := range c.cycles {
		c.cycles[i].members = slices.Clone(c.cycles[i].members)
	}
	c.trans = s.trans.clone()
	c.steps = s.steps.clone()
	c.pending = s.pending.clone()
	c.stop = s.stop.clone()
	c.scratch = make([]uint64, 0, cap(s.scratch))
	return &c
}

// clone copies the ring's buffer.
func (r ring[T]) clone() ring[T] {
	r.buf = slices.Clone(r.buf)
	return r
}

// clone copies a trip with its evidence (nil: nil).
func (t *Trip) clone() *Trip {
	if t == nil {
		return nil
	}
	c := *t
	e := &c.Evidence
	e.OutputHashes = slices.Clone(e.OutputHashes)
	e.ErrorSignatures = slices.Clone(e.ErrorSignatures)
	e.ProgressValues = slices.Clone(e.ProgressValues)
	e.Metrics = slices.Clone(e.Metrics)
	e.Transitions = slices.Clone(e.Transitions)
	e.Ignored = slices.Clone(e.Ignored)
	return &c
}
