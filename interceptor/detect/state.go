package detect

import (
	"time"
)

// State is the loop detector of one workflow execution: plain data fed with
// the execution's guarded calls (Begin before a call, End after it) on the
// workflow clock. It is deterministic (the same calls give the same trips,
// on every replay), bounded (see Size) and not safe for concurrent use,
// which workflow code never needs.
type State struct {
	pol Policy
	lim limits

	nodes     []node
	index     map[string]int32
	overflow  int // index of OverflowNode, -1 until needed
	seenCount int

	edges   []edge
	edgeIdx map[uint64]int32
	cycles  []cycle

	seq        int // last step's sequence number
	totalCalls int
	totalSteps int
	totalCost  float64
	last       int // node of the most recently started step, -1: none

	trans    ring[trans]
	timerSeq int           // s.seq when the workflow last set a durable timer
	cand     int           // node whose repetition waits for the rest of its loop, -1: none
	candSeq  int           // the step of cand that repeated
	steps    ring[seqStep] // the latest steps and barriers, in the order they finished
	pending  *Trip
	// stop is a human's stop that arrived while another trip was pending:
	// it becomes the pending trip when that one is resumed (see Stop).
	stop *Trip
	ext  Extension // extensions granted without a narrower scope

	scratch []uint64
}

// edge is a transition between two nodes, observed or declared.
type edge struct {
	from, to int32
	count    int // times taken since the last progress at to
	declared bool
}

// NewState returns the empty state of an execution guarded by p. p is used
// as given: a zero or negative limit disables its rule (the interceptor
// fills in the defaults first).
func NewState(p Policy) *State {
	s := newState(p)
	for _, e := range p.Graph {
		s.declare(e)
	}
	s.recomputeCycles()
	return s
}

func newState(p Policy) *State {
	lim := newLimits(p)
	return &State{
		steps:    newRing[seqStep](seqCap),
		pol:      p,
		lim:      lim,
		index:    make(map[string]int32),
		overflow: -1,
		edgeIdx:  make(map[uint64]int32),
		last:     -1,
		cand:     -1,
		trans:    newRing[trans](lim.window),
		scratch:  make([]uint64, 0, lim.window),
	}
}

// declare adds a declared edge of Policy.Graph. Edges touching an exempt
// node are ignored: exempt nodes are never cycle members.
func (s *State) declare(e Edge) {
	if e.From == "" || e.To == "" {
		return
	}
	from, to := s.declaredNode(e.From), s.declaredNode(e.To)
	if s.nodes[from].exempt || s.nodes[to].exempt {
		return
	}
	if i := s.edgeIndex(from, to); i >= 0 {
		s.edges[i].declared = true
		return
	}
	s.edges[s.addEdge(from, to)].declared = true
}

func (s *State) declaredNode(name string) int {
	if i := s.find(name); i >= 0 {
		s.nodes[i].declared = true
		return i
	}
	return s.register(truncate(name, maxNameLen), true)
}

func edgeKey(from, to int) uint64 {
	return uint64(uint32(from))<<32 | uint64(uint32(to))
}

func (s *State) edgeIndex(from, to int) int {
	if i, ok := s.edgeIdx[edgeKey(from, to)]; ok {
		return int(i)
	}
	return -1
}

func (s *State) addEdge(from, to int) int {
	i := len(s.edges)
	s.edges = append(s.edges, edge{from: int32(from), to: int32(to)})
	s.edgeIdx[edgeKey(from, to)] = int32(i)
	s.nodes[from].out = append(s.nodes[from].out, int32(i))
	s.nodes[to].in = append(s.nodes[to].in, int32(i))
	return i
}

// Begin is called before each guarded call of node, now being the workflow
// clock. It returns the call's StepRef, to be passed to End, or the Trip
// that forbids the call. A trip returned by Begin records nothing and is not
// stored: the same Begin trips again until Resume resets or extends the
// tripped limit. A pending trip (from End or Stop) is returned to the first
// Begin of a non-exempt node until Resume clears it.
//
// Concurrent calls of a node that has calls in flight join its open step
// (fan-out): they count as calls, not as steps or transitions. Exempt nodes
// count as calls only and can trip nothing but MaxTotalCalls.
func (s *State) Begin(name string, now time.Time) (StepRef, *Trip) {
	now = now.Round(0)
	i := s.lookup(name)
	n := &s.nodes[i]
	if n.exempt {
		// Exempt nodes never trip a detector, but a human's stop is not a
		// detector: it stops the next guarded call, exempt or not, or a
		// workflow that only polls would never stop.
		if s.pending != nil && s.pending.Reason == ReasonUserStop {
			return StepRef{Node: -1}, s.pending
		}
		if t := s.checkTotal(i, now); t != nil {
			return StepRef{Node: -1}, t
		}
		s.totalCalls++
		n.calls++
		n.inflight++
		s.markSeen(n)
		return StepRef{Node: i}, nil
	}
	if s.pending != nil {
		return StepRef{Node: -1}, s.pending
	}
	if t := s.checkTotal(i, now); t != nil {
		return StepRef{Node: -1}, t
	}
	if t := s.checkCost(i, now); t != nil {
		return StepRef{Node: -1}, t
	}
	if n.inflight > 0 { // fan-out: join the open step
		s.totalCalls++
		n.calls++
		n.inflight++
		return StepRef{Node: i, Seq: n.openSeq}, nil
	}
	if t := s.checkNode(i, now); t != nil {
		return StepRef{Node: -1}, t
	}
	prev, ei := s.last, -1
	if prev >= 0 {
		if ei = s.edgeIndex(prev, i); ei < 0 {
			// The graph learns the edge even if the call is refused below:
			// structure, not a counter.
			ei = s.addEdge(prev, i)
			s.recomputeCycles()
			n = &s.nodes[i]
		}
	}
	anchorEdge, t := s.checkCycle(i, prev, now)
	if t != nil {
		return StepRef{Node: -1}, t
	}
	if ei >= 0 {
		if t := s.checkEdge(ei, now); t != nil {
			return StepRef{Node: -1}, t
		}
	}

	// Record the step.
	s.seq++
	s.totalCalls++
	s.totalSteps++
	n.calls++
	n.steps++
	s.markSeen(n)
	first := n.firstSeq == 0
	if first {
		n.firstSeq, n.firstAt = s.seq, now
	}
	n.openSeq, n.openAt, n.inflight, n.agg = s.seq, now, 1, agg{}
	s.beginWait(i, prev)
	if ei >= 0 {
		s.edges[ei].count++
		s.trans.push(trans{from: int32(prev), to: int32(i), seq: s.seq})
	}
	if c := n.cyc; c >= 0 {
		cy := &s.cycles[c]
		if first {
			s.reanchor(cy)
		}
		if anchorEdge {
			cy.iter++
		}
		if cy.restart {
			cy.start, cy.hasStart, cy.restart = now, true, false
		}
	}
	s.last = i
	return StepRef{Node: i, Seq: s.seq}, nil
}

// Stop makes a user_stop trip pending: the next Begin of a non-exempt node
// returns it. When another trip is pending already, that trip halts first:
// with queue false the stop is dropped (the pending trip halts the
// workflow anyway, under OnHalt pause or fail); with queue true it waits
// behind that trip and becomes pending when the trip is resumed. A trip
// that is only observed is resumed at once, so under OnHalt observe a
// queued stop is what makes a human's stop pause the workflow at all.
// Stop reports whether the stop was taken (pending or queued).
func (s *State) Stop(message string, now time.Time, queue bool) bool {
	if s.pending != nil && (!queue || s.stop != nil || s.pending.Reason == ReasonUserStop) {
		return false
	}
	if message == "" {
		message = "a human asked to stop"
	}
	t := &Trip{
		Reason:   ReasonUserStop,
		Detector: DetectorUserStop,
		Message:  truncate(message, maxNameLen),
		At:       now,
	}
	t.Evidence.Transitions = s.transitionStrings()
	if s.pending != nil {
		s.stop = t
		return true
	}
	s.pending = t
	return true
}

// Stopping reports whether a human's stop is pending or queued.
func (s *State) Stopping() bool {
	return s.stop != nil || s.pending != nil && s.pending.Reason == ReasonUserStop
}

// Pending returns the trip waiting for the next Begin, or nil. The trip is
// the State's own: read it, do not modify it.
func (s *State) Pending() *Trip {
	return s.pending
}

// NextStep returns the sequence number of the step a call of name made now
// would be counted in, if it trips nothing: its node's open step when the
// call joins a fan-out, else the next step; 0 for an exempt node, whose
// calls are no step. It only reads.
func (s *State) NextStep(name string) int {
	if i := s.find(name); i >= 0 {
		switch n := &s.nodes[i]; {
		case n.exempt:
			return 0
		case n.inflight > 0:
			return n.openSeq
		}
	}
	return s.seq + 1
}
