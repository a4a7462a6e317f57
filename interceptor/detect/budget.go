package detect

import (
	"fmt"
	"time"
)

// The budget rules, checked by Begin before a call is recorded. Each limit
// is the policy's (0: off) plus the extensions granted by Resume.

func (s *State) totalLimit() int {
	if s.lim.budget.MaxTotalCalls == 0 {
		return 0
	}
	return s.lim.budget.MaxTotalCalls + s.ext.MaxTotalCalls
}

func (s *State) costLimit() float64 {
	if s.lim.budget.MaxCost == 0 {
		return 0
	}
	return s.lim.budget.MaxCost + s.ext.MaxCost
}

func (s *State) callLimit(n *node) int {
	if n.maxCalls <= 0 {
		return 0
	}
	return n.maxCalls + n.ext.MaxCallsPerNode + s.ext.MaxCallsPerNode
}

func (s *State) runLimit(n *node) time.Duration {
	if n.maxRun <= 0 {
		return 0
	}
	return n.maxRun + n.ext.MaxNodeRuntime + s.ext.MaxNodeRuntime
}

func (s *State) edgeLimit(n *node) int {
	if s.lim.budget.MaxEdgeWithoutProgress == 0 {
		return 0
	}
	return s.lim.budget.MaxEdgeWithoutProgress + n.ext.MaxEdgeWithoutProgress + s.ext.MaxEdgeWithoutProgress
}

func (s *State) iterLimit(c *cycle) int {
	if s.lim.budget.MaxCycleIterations == 0 {
		return 0
	}
	return s.lim.budget.MaxCycleIterations + c.ext.MaxCycleIterations + s.ext.MaxCycleIterations
}

func (s *State) cycleRunLimit(c *cycle) time.Duration {
	if s.lim.budget.MaxCycleRuntime == 0 {
		return 0
	}
	return s.lim.budget.MaxCycleRuntime + c.ext.MaxCycleRuntime + s.ext.MaxCycleRuntime
}

func (s *State) cycleCostLimit(c *cycle) float64 {
	if s.lim.budget.MaxCycleCost == 0 {
		return 0
	}
	return s.lim.budget.MaxCycleCost + c.ext.MaxCycleCost + s.ext.MaxCycleCost
}

// checkTotal: this call would exceed MaxTotalCalls.
func (s *State) checkTotal(i int, now time.Time) *Trip {
	if lim := s.totalLimit(); lim > 0 && s.totalCalls+1 > lim {
		return s.trip(DetectorTotalCalls, i, now,
			fmt.Sprintf("execution reached %d/%d guarded calls", s.totalCalls, lim))
	}
	return nil
}

// checkCost: the execution's cost is already over MaxCost.
func (s *State) checkCost(i int, now time.Time) *Trip {
	if lim := s.costLimit(); lim > 0 && s.totalCost > lim {
		return s.trip(DetectorTotalCost, i, now,
			fmt.Sprintf("execution cost %.6g is over the limit of %.6g", s.totalCost, lim))
	}
	return nil
}

// checkNode: a new step of node i would exceed its step or runtime budget.
func (s *State) checkNode(i int, now time.Time) *Trip {
	n := &s.nodes[i]
	if lim := s.callLimit(n); lim > 0 && n.steps+1 > lim {
		return s.trip(DetectorNodeCalls, i, now,
			fmt.Sprintf("%s reached %d/%d steps", n.name, n.steps, lim))
	}
	if lim := s.runLimit(n); lim > 0 && n.run >= lim {
		return s.trip(DetectorNodeRuntime, i, now,
			fmt.Sprintf("%s ran for %s, limit %s", n.name, n.run, lim))
	}
	return nil
}

// checkCycle checks the budgets of node i's cycle for a step reached from
// prev. It reports whether the step takes an anchor edge.
func (s *State) checkCycle(i, prev int, now time.Time) (anchorEdge bool, t *Trip) {
	c := s.nodes[i].cyc
	if c < 0 {
		return false, nil
	}
	cy := &s.cycles[c]
	anchorEdge = prev >= 0 && cy.anchor == i && s.nodes[prev].cyc == c
	if lim := s.iterLimit(cy); anchorEdge && lim > 0 && cy.iter+1 > lim {
		return false, s.trip(DetectorCycleIterations, i, now,
			fmt.Sprintf("cycle %s reached %d/%d iterations", s.cycleName(cy), cy.iter, lim))
	}
	if lim := s.cycleRunLimit(cy); lim > 0 && cy.hasStart && !cy.restart && now.Sub(cy.start) > lim {
		return false, s.trip(DetectorCycleRuntime, i, now,
			fmt.Sprintf("cycle %s has run for %s, limit %s", s.cycleName(cy), now.Sub(cy.start), lim))
	}
	if lim := s.cycleCostLimit(cy); lim > 0 && cy.cost > lim {
		return false, s.trip(DetectorCycleCost, i, now,
			fmt.Sprintf("cycle %s cost %.6g is over the limit of %.6g", s.cycleName(cy), cy.cost, lim))
	}
	return anchorEdge, nil
}

// checkEdge: taking edge ei would exceed MaxEdgeWithoutProgress.
func (s *State) checkEdge(ei int, now time.Time) *Trip {
	e := &s.edges[ei]
	to := &s.nodes[e.to]
	if lim := s.edgeLimit(to); lim > 0 && e.count+1 > lim {
		return s.trip(DetectorEdgeWithoutProgress, int(e.to), now,
			fmt.Sprintf("edge %s→%s taken %d times without progress at %s",
				s.nodes[e.from].name, to.name, e.count+1, to.name))
	}
	return nil
}
