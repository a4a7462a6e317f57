package detect

import "slices"

// View summarises the state for status queries: the nodes called so far in
// first-seen order, the cycles sorted by CycleID (MaxIterations includes
// extensions) and the latest transitions, oldest first.
func (s *State) View() View {
	v := View{
		TotalCalls:  s.totalCalls,
		TotalSteps:  s.totalSteps,
		TotalCost:   s.totalCost,
		Nodes:       []NodeView{},
		Cycles:      []CycleView{},
		Transitions: s.transitionStrings(),
	}
	v.MaxTotalCalls = s.totalLimit()
	order := make([]int, 0, len(s.nodes))
	for i := range s.nodes {
		if s.nodes[i].seen > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return s.nodes[a].seen - s.nodes[b].seen })
	for _, i := range order {
		n := &s.nodes[i]
		nv := NodeView{
			Node:     n.name,
			Calls:    n.calls,
			Steps:    n.steps,
			Runtime:  n.run,
			Cost:     n.cost,
			InFlight: n.inflight,
			Exempt:   n.exempt,
		}
		if !n.exempt {
			nv.MaxCalls = s.callLimit(n)
		}
		v.Nodes = append(v.Nodes, nv)
	}
	for ci := range s.cycles { // kept sorted by id
		c := &s.cycles[ci]
		cv := CycleView{
			CycleID:       c.id,
			Edges:         s.cycleEdges(c.members),
			Anchor:        s.nodes[c.anchor].name,
			Iteration:     c.iter,
			MaxIterations: s.iterLimit(c),
			Cost:          c.cost,
		}
		for _, m := range c.members {
			cv.Nodes = append(cv.Nodes, s.nodes[m].name)
		}
		slices.Sort(cv.Nodes)
		v.Cycles = append(v.Cycles, cv)
	}
	return v
}
