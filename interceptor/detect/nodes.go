package detect

import (
	"time"
	"unicode/utf8"
)

// node is everything the State knows about one node. Nodes are indexed by
// int (StepRef.Node) and never removed.
type node struct {
	name     string
	exempt   bool
	higher   bool          // metric: higher is better
	maxCalls int           // 0: off
	maxRun   time.Duration // 0: off
	declared bool          // named by Policy.Graph

	seen  int // first-seen order of the node's first call (1-based), 0: never called
	calls int
	steps int // since the last reset of the node_calls budget
	run   time.Duration
	cost  float64

	firstSeq int // seq of the node's first step, 0: none yet
	firstAt  time.Time

	openSeq  int // seq of the node's current or last step
	openAt   time.Time
	inflight int
	agg      agg

	hist        ring[rec]
	hasLastProg bool
	lastProg    uint64
	hasBest     bool
	best        float64
	noImprove   int

	ext Extension // node-scoped extensions granted by Resume

	novelSeq   int  // seq of the node's last step that brought something new
	varied     bool // its output has changed at least once (a constant node is an acknowledgement)
	openWaited bool // the open step follows a durable timer and a step of this node, nothing between
	learn      learning

	cyc int     // index into State.cycles, -1: in no cycle
	in  []int32 // edges into the node
	out []int32 // edges out of the node
}

// resetHistory forgets the node's output, error, progress and metric
// history (Resume after a stall, repeated error or oscillation).
func (n *node) resetHistory() {
	n.hist.clear()
	n.hasLastProg, n.lastProg = false, 0
	n.hasBest, n.best, n.noImprove = false, 0, 0
}

// agg combines the observations of a step's calls (more than one on fan-out).
type agg struct {
	ended     int
	ok        bool // at least one call succeeded
	out       uint64
	errSig    string
	errHash   uint64 // the first error's ErrorHash
	hasProg   bool
	prog      uint64
	progRaw   string
	hasMetric bool
	metric    float64
	cost      float64
	shape     uint64 // a single call's Observation.Shape, Count and Action
	count     int64
	action    uint64
	fanout    bool // more than one call: no SimHash, no fields
}

// lookup returns the index of a node, registering it when it is new. Names
// past the node limit fold into OverflowNode, unless the policy names them.
func (s *State) lookup(name string) int {
	name = truncate(name, maxNameLen)
	if i, ok := s.index[name]; ok {
		return int(i)
	}
	if s.named() >= s.lim.maxNodes && !s.policyNames(name) {
		if s.overflow < 0 {
			s.overflow = s.register(OverflowNode, false)
		}
		return s.overflow
	}
	return s.register(name, false)
}

// named counts the registered nodes other than OverflowNode.
func (s *State) named() int {
	if s.overflow >= 0 {
		return len(s.nodes) - 1
	}
	return len(s.nodes)
}

// policyNames reports whether the policy itself names the node, so that it
// is tracked on its own whatever the node limit (the policy is bounded).
// The nodes of Policy.Graph need no check: they are registered up front.
func (s *State) policyNames(name string) bool {
	_, ok := s.pol.Nodes[name]
	return ok
}

// find returns the index of a registered node, or -1.
func (s *State) find(name string) int {
	if i, ok := s.index[truncate(name, maxNameLen)]; ok {
		return int(i)
	}
	return -1
}

func (s *State) register(name string, declared bool) int {
	np := s.pol.Nodes[name]
	n := node{
		name:     name,
		exempt:   np.Exempt,
		higher:   np.HigherIsBetter,
		maxCalls: s.lim.budget.MaxCallsPerNode,
		maxRun:   s.lim.budget.MaxNodeRuntime,
		declared: declared,
		cyc:      -1,
		hist:     newRing[rec](s.lim.window),
	}
	if np.MaxCalls > 0 {
		n.maxCalls = np.MaxCalls
	}
	if np.MaxRuntime > 0 {
		n.maxRun = np.MaxRuntime
	}
	i := len(s.nodes)
	s.nodes = append(s.nodes, n)
	s.index[name] = int32(i)
	if name == OverflowNode {
		s.overflow = i
	}
	return i
}

// markSeen records a node's first call, for the View's order.
func (s *State) markSeen(n *node) {
	if n.seen == 0 {
		s.seenCount++
		n.seen = s.seenCount
	}
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
