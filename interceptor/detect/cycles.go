package detect

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// cycle is a strongly connected component of the transition graph with at
// least two nodes, or one node with a self-loop.
type cycle struct {
	id       string
	members  []int32 // node indexes, ascending
	anchor   int
	iter     int
	start    time.Time
	hasStart bool
	restart  bool // runtime reset by Resume: start again at the next member step
	cost     float64
	ext      Extension // cycle-scoped extensions granted by Resume
}

// recomputeCycles recomputes the strongly connected components (Tarjan) of
// the graph: observed and declared edges. It runs only when an edge
// appears. Cycles keep what they absorbed: the highest iteration, the summed
// cost, the largest extensions, and the start time if the anchor is the same.
func (s *State) recomputeCycles() {
	n := len(s.nodes)
	adj := make([][]int32, n)
	for i := range s.nodes {
		out := s.nodes[i].out
		if len(out) == 0 {
			continue
		}
		nb := make([]int32, len(out))
		for k, e := range out {
			nb[k] = s.edges[e].to
		}
		slices.Sort(nb)
		adj[i] = nb
	}
	comps := tarjan(adj)

	var cycles []cycle
	for _, comp := range comps {
		if len(comp) == 1 && s.edgeIndex(int(comp[0]), int(comp[0])) < 0 {
			continue
		}
		slices.Sort(comp)
		c := cycle{members: comp, iter: 1}
		c.id = s.cycleID(comp)
		c.anchor = s.bestAnchor(comp)
		if a := &s.nodes[c.anchor]; a.firstSeq > 0 {
			c.start, c.hasStart = a.firstAt, true
		}
		s.absorb(&c)
		cycles = append(cycles, c)
	}
	slices.SortFunc(cycles, func(a, b cycle) int { return strings.Compare(a.id, b.id) })
	s.cycles = cycles
	for i := range s.nodes {
		s.nodes[i].cyc = -1
	}
	for ci := range s.cycles {
		for _, m := range s.cycles[ci].members {
			s.nodes[m].cyc = ci
		}
	}
}

// absorb carries the state of the old cycles that c contains into c.
func (s *State) absorb(c *cycle) {
	for oi := range s.cycles {
		old := &s.cycles[oi]
		if !intersects(old.members, c.members) {
			continue
		}
		c.iter = max(c.iter, old.iter)
		c.cost += old.cost
		c.ext.MaxCycleIterations = max(c.ext.MaxCycleIterations, old.ext.MaxCycleIterations)
		c.ext.MaxCycleRuntime = max(c.ext.MaxCycleRuntime, old.ext.MaxCycleRuntime)
		c.ext.MaxCycleCost = max(c.ext.MaxCycleCost, old.ext.MaxCycleCost)
		if old.anchor == c.anchor {
			c.start, c.hasStart, c.restart = old.start, old.hasStart, old.restart
		}
	}
}

// intersects reports whether two ascending index lists share an element.
func intersects(a, b []int32) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			return true
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return false
}

// tarjan returns the strongly connected components of the graph, visiting
// nodes by index and neighbours in ascending order (deterministic).
func tarjan(adj [][]int32) [][]int32 {
	n := len(adj)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	var comps [][]int32
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, int32(v))
		onStack[v] = true
		for _, w := range adj[v] {
			switch {
			case index[w] < 0:
				visit(int(w))
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []int32
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if int(w) == v {
					break
				}
			}
			comps = append(comps, comp)
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return comps
}

// cycleID is "cyc-" and 12 hex digits of the FNV-64a hash of the sorted
// member names and the sorted edges between them: stable whatever the order
// nodes and edges were discovered in.
func (s *State) cycleID(members []int32) string {
	names := make([]string, len(members))
	for k, m := range members {
		names[k] = s.nodes[m].name
	}
	slices.Sort(names)
	edges := s.cycleEdges(members)
	var b strings.Builder
	b.WriteString(strings.Join(names, ","))
	b.WriteByte('|')
	b.WriteString(strings.Join(edges, ","))
	h := fnvString(fnvOffset, b.String())
	return "cyc-" + hex16(h)[:12]
}

// cycleEdges lists the edges between members as sorted "A->B" strings.
func (s *State) cycleEdges(members []int32) []string {
	var edges []string
	for _, m := range members {
		for _, e := range s.nodes[m].out {
			to := s.edges[e].to
			if _, ok := slices.BinarySearch(members, to); ok {
				edges = append(edges, s.nodes[m].name+"->"+s.nodes[to].name)
			}
		}
	}
	slices.Sort(edges)
	return edges
}

// bestAnchor is the member visited first; members never visited (declared)
// come after visited ones, by name.
func (s *State) bestAnchor(members []int32) int {
	best := int(members[0])
	for _, m := range members[1:] {
		if s.anchorLess(int(m), best) {
			best = int(m)
		}
	}
	return best
}

func (s *State) anchorLess(a, b int) bool {
	na, nb := &s.nodes[a], &s.nodes[b]
	switch {
	case na.firstSeq > 0 && nb.firstSeq > 0:
		return na.firstSeq < nb.firstSeq
	case na.firstSeq > 0 || nb.firstSeq > 0:
		return na.firstSeq > 0
	default:
		return na.name < nb.name
	}
}

// reanchor runs at the first step of a member: a cycle none of whose members
// had been visited is anchored at that member and starts now.
func (s *State) reanchor(c *cycle) {
	a := s.bestAnchor(c.members)
	if a == c.anchor && c.hasStart {
		return
	}
	c.anchor = a
	if an := &s.nodes[a]; an.firstSeq > 0 && !c.restart {
		c.start, c.hasStart = an.firstAt, true
	}
}

// cycleName is "anchor→next→…" in visit order, for messages.
func (s *State) cycleName(c *cycle) string {
	order := slices.Clone(c.members)
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case int(a) == c.anchor:
			return -1
		case int(b) == c.anchor:
			return 1
		case s.anchorLess(int(a), int(b)):
			return -1
		case s.anchorLess(int(b), int(a)):
			return 1
		}
		return 0
	})
	var b strings.Builder
	for k, m := range order {
		if k > 0 {
			b.WriteString("→")
		}
		if b.Len() > maxNameLen {
			b.WriteString("… (" + strconv.Itoa(len(order)) + " nodes)")
			break
		}
		b.WriteString(s.nodes[m].name)
	}
	return b.String()
}

// cycleOf returns the cycle with the given id, or -1.
func (s *State) cycleOf(id string) int {
	for i := range s.cycles {
		if s.cycles[i].id == id {
			return i
		}
	}
	return -1
}
