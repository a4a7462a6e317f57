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
			s.pending = nil
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
		if !raises(t.Detector, ext) {
			s.reset(t.Detector, ni, ci)
		}
	}
	s.extend(ext, ni, ci)
}

// raises reports whether ext raises the limit detector d enforces.
func raises(d Detector, ext Extension) bool {
	switch d {
	case DetectorNodeCalls:
		return ext.MaxCallsPerNode > 0
	case DetectorNodeRuntime:
		return ext.MaxNodeRuntime > 0
	case DetectorTotalCalls:
		return ext.MaxTotalCalls > 0
	case DetectorTotalCost:
		return ext.MaxCost > 0
	case DetectorCycleIterations:
		return ext.MaxCycleIterations > 0
	case DetectorCycleRuntime:
		return ext.MaxCycleRuntime > 0
	case DetectorCycleCost:
		return ext.MaxCycleCost > 0
	case DetectorEdgeWithoutProgress:
		return ext.MaxEdgeWithoutProgress > 0
	}
	return false
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
	switch d {
	case DetectorNodeCalls:
		if n != nil {
			n.steps = 0
		}
	case DetectorNodeRuntime:
		if n != nil {
			n.run = 0
		}
	case DetectorTotalCalls:
		s.totalCalls = 0
	case DetectorTotalCost:
		s.totalCost = 0
	case DetectorCycleIterations:
		if c != nil {
			c.iter = 1
		}
	case DetectorCycleRuntime:
		if c != nil {
			c.hasStart, c.restart = false, true
		}
	case DetectorCycleCost:
		if c != nil {
			c.cost = 0
		}
	case DetectorEdgeWithoutProgress:
		if n != nil {
			for _, e := range n.in {
				s.edges[e].count = 0
			}
		}
	case DetectorIdenticalOutput, DetectorOutputOscillation, DetectorUnchangedProgress,
		DetectorNoImprovement, DetectorRepeatedError:
		if n != nil {
			n.hist.clear()
			n.hasLastProg, n.lastProg = false, 0
			n.hasBest, n.best, n.noImprove = false, 0, 0
		}
	case DetectorTransitionOscillation:
		s.trans.clear()
	}
}

// extend adds ext to its scopes.
func (s *State) extend(ext Extension, ni, ci int) {
	if ni >= 0 {
		n := &s.nodes[ni]
		n.extCalls += ext.MaxCallsPerNode
		n.extRun += ext.MaxNodeRuntime
		n.extEdge += ext.MaxEdgeWithoutProgress
	} else {
		s.ext.MaxCallsPerNode += ext.MaxCallsPerNode
		s.ext.MaxNodeRuntime += ext.MaxNodeRuntime
		s.ext.MaxEdgeWithoutProgress += ext.MaxEdgeWithoutProgress
	}
	if ci >= 0 {
		c := &s.cycles[ci]
		c.extIter += ext.MaxCycleIterations
		c.extRun += ext.MaxCycleRuntime
		c.extCost += ext.MaxCycleCost
	} else {
		s.ext.MaxCycleIterations += ext.MaxCycleIterations
		s.ext.MaxCycleRuntime += ext.MaxCycleRuntime
		s.ext.MaxCycleCost += ext.MaxCycleCost
	}
	s.ext.MaxTotalCalls += ext.MaxTotalCalls
	s.ext.MaxCost += ext.MaxCost
}

// positive drops negative (and NaN) extension fields.
func positive(e Extension) Extension {
	return Extension{
		MaxCallsPerNode:        posInt(e.MaxCallsPerNode),
		MaxNodeRuntime:         posDur(e.MaxNodeRuntime),
		MaxTotalCalls:          posInt(e.MaxTotalCalls),
		MaxCost:                posFloat(e.MaxCost),
		MaxCycleIterations:     posInt(e.MaxCycleIterations),
		MaxCycleRuntime:        posDur(e.MaxCycleRuntime),
		MaxCycleCost:           posFloat(e.MaxCycleCost),
		MaxEdgeWithoutProgress: posInt(e.MaxEdgeWithoutProgress),
	}
}
