package detect

// Resume ends the halt of trip t: it clears the pending trip if it is t (or
// an equal copy) and makes the tripped condition not trip again until it
// builds up anew. If ext raises the tripped limit (say a cycle_iterations
// trip with ext.MaxCycleIterations > 0) the counter is kept and the limit
// raised; otherwise the tripped counter or window is reset:
//
//	node_calls              the node's steps → 0
//	node_runtime            the node's runtime → 0
//	total_calls             total calls → 0
//	total_cost              total cost → 0
//	cycle_iterations        the cycle's iteration → 1
//	cycle_runtime           the cycle starts again at its next step
//	cycle_cost              the cycle's cost → 0
//	edge_without_progress   the counters of the edges into the node → 0
//	stall, repeated error,  the node's output, error, progress and
//	output oscillation      metric history is cleared
//	transition_oscillation  the transition window is cleared
//
// Every positive field of ext is then added to its scope: node-scoped fields
// (MaxCallsPerNode, MaxNodeRuntime, MaxEdgeWithoutProgress) to t.Node,
// cycle-scoped ones to t.CycleID (or t.Node's cycle), the others to the
// whole execution; a field whose scope is unknown applies to the whole
// execution. A nil trip or a trip of another State is harmless.
func (s *State) Resume(t *Trip, ext Extension) {
	ext = positive(ext)
	ni, ci := -1, -1
	if t != nil {
		if s.pending != nil && sameTrip(t, s.pending) {
			// A stop queued behind the trip takes its place.
			s.pending, s.stop = s.stop, nil
		}
		if t.Node != "" {
			ni = s.find(t.Node)
		}
		if t.CycleID != "" {
			ci = s.cycleOf(t.CycleID)
		}
		if ci < 0 && ni >= 0 {
			ci = s.nodes[ni].cyc
		}
		switch {
		case raises(t.Detector, ext):
		case budgetOf(t.Detector) == nil:
			// startOver clears what the detector reads, and more.
		default:
			s.reset(t.Detector, ni, ci)
		}
		s.startOver(ni, ci)
	}
	s.extend(ext, ni, ci)
}

// startOver is the one meaning of "starts over": a
// resume, a warning and a halt handler's decision all come here, whatever
// tripped. It puts a barrier in front of every detector that reads
// repetition, so that the loop must repeat a whole window after it before
// any of them trips again:
//
//	sequence, stale rounds,  a barrier in the step sequence: no
//	repeated errors          repetition spans it
//	stalls (progress,        the histories of the loop's nodes are
//	metric, outputs)         cleared
//	edges                    the counters of the edges into the loop's
//	                         nodes → 0
//	transition window        cleared
//
// The loop is cycle ci's members, or node ni alone; a trip that names
// neither (a human's stop) starts every node over.
func (s *State) startOver(ni, ci int) {
	s.barrier()
	s.trans.clear()
	s.cand = -1
	start := func(m int) {
		s.nodes[m].resetHistory()
		for _, e := range s.nodes[m].in {
			s.edges[e].count = 0
		}
	}
	switch {
	case ci >= 0:
		for _, m := range s.cycles[ci].members {
			start(int(m))
		}
	case ni >= 0:
		start(ni)
	default:
		for m := range s.nodes {
			start(m)
		}
	}
}

// raises reports whether ext raises the limit detector d enforces.
func raises(d Detector, ext Extension) bool {
	b := budgetOf(d)
	return b != nil && b.Positive(&ext)
}

// reset clears what detector d counts, at node ni and cycle ci (-1: none).
func (s *State) reset(d Detector, ni, ci int) {
	var n *node
	if ni >= 0 {
		n = &s.nodes[ni]
	}
	var c *cycle
	if ci >= 0 {
		c = &s.cycles[ci]
	}
	if b := budgetOf(d); b != nil {
		if (b.Scope != ScopeNode || n != nil) && (b.Scope != ScopeCycle || c != nil) {
			b.reset(s, n, c)
		}
		return
	}
	switch d {
	case DetectorIdenticalOutput, DetectorOutputOscillation, DetectorUnchangedProgress,
		DetectorNoImprovement, DetectorRepeatedError:
		if n != nil {
			n.resetHistory()
		}
		s.barrier() // a human's answer is outside input
		if c != nil {
			// The rules judge the loop, not the node: the halt was about
			// the whole iteration, so a resume clears what every member
			// repeated. Otherwise the next member of the same
			// stuck iteration would halt again at once.
			for _, m := range c.members {
				s.nodes[m].resetHistory()
			}
		}
	case DetectorTransitionOscillation:
		s.trans.clear()
	}
}

// extend adds ext to its scopes: node-scoped rows to node ni, cycle-scoped
// ones to cycle ci, the others (and those whose scope is unknown) to the
// whole execution.
func (s *State) extend(ext Extension, ni, ci int) {
	for _, b := range budgetTable {
		src := b.ExtensionField(&ext)
		if !positiveAt(src) {
			continue
		}
		dst := b.ExtensionField(&s.ext)
		switch {
		case b.Scope == ScopeNode && ni >= 0:
			dst = b.ExtensionField(&s.nodes[ni].ext)
		case b.Scope == ScopeCycle && ci >= 0:
			dst = b.ExtensionField(&s.cycles[ci].ext)
		}
		addAt(dst, src)
	}
}

// positive drops negative (and NaN) extension fields.
func positive(e Extension) Extension {
	for _, b := range budgetTable {
		clampAt(b.ExtensionField(&e))
	}
	return e
}
