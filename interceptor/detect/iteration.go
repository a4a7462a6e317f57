package detect

import (
	"time"
)

// What a node's step brings, for the sequence rule (sequence.go) and the
// edge budget: the numeric fields a node learns are volatile (they move
// while the rest of its result repeats, in no order, or as a clock), the
// key the sequence compares (the result without commentary,
// measurements and learnt volatile fields), and novelty: a result its
// node has not shown in its history.
//
// Waiting is not looping: a node whose repeated steps each followed a
// durable timer the workflow set (State.Timer) and a step of the same node,
// with no other guarded call between, is waiting on the world; its
// repetition does not trip (budgets still bound it). A loop of several
// nodes is never waiting, timers or not.

// Bounds of the learning state of one node.
const maxVolatile = 8 // learnt volatile fields per node

// learning is what a node knows about its results' fields.
type learning struct {
	prev  [maxFields]Field // the fields of the node's previous output
	chg   [maxFields]uint8 // consecutive changes of each prev field
	dir   [maxFields]int8  // the direction of each prev field's last change (-1, 0, 1)
	turns [maxFields]uint8 // how many of its consecutive changes turned direction
	// 1 when each prev field's last change was a clock's
	// (see clock), else 0.
	clk   [maxFields]uint8
	nprev int
	vol   [maxVolatile]uint32 // learnt volatile field paths
	nvol  int
	pend  [maxFields]Field // the fields of the open step's result
	npend int
	basis sameBasis // why the latest step counted as the previous one's repeat
}

// sameBasis says why a step counted as the same as the previous one.
type sameBasis uint8

const (
	basisNone sameBasis = iota
	basisExact
	basisVolatile
	basisNearDup
	basisCounter
	basisCommentary
)

// Timer records that the workflow set a durable timer (Sleep, NewTimer,
// AwaitWithTimeout) at now, on the workflow clock: the next step of the
// node that stepped last counts as waited (see the waiting rule; only the
// order of events counts, not now). It changes no counter, never trips.
func (s *State) Timer(now time.Time) {
	s.timerSeq = s.seq
}

// beginWait marks the open step of node i as waited when a timer was set
// after the previous step, and that step was node i's.
func (s *State) beginWait(i, prev int) {
	n := &s.nodes[i]
	n.openWaited = prev == i && s.timerSeq > 0 && s.timerSeq == s.seq-1
	n.learn.npend = 0
}

// endCall keeps what the rules need of one call's observation.
func (n *node) endCall(obs *Observation) {
	a := &n.agg
	if a.ended > 1 {
		a.fanout = true
		return
	}
	if obs.Failed {
		return
	}
	a.shape, a.count, a.action = obs.Shape, obs.Count, obs.Action
	l := &n.learn
	l.npend = copy(l.pend[:], obs.Fields)
}

// judge decides, for node n's step r just finalised, whether it repeats
// the node's previous output (exactly or fuzzily) and learns the node's
// volatile fields.
func (s *State) judge(n *node, r *rec, a *agg) {
	r.seq = n.openSeq
	if n.openWaited {
		r.flags |= recWaited
	}
	l := &n.learn
	l.basis = basisNone
	r.key = r.out
	if !r.output() || a.fanout {
		l.nprev, l.npend = 0, 0
		return
	}
	r.shape, r.count, r.action = a.shape, a.count, a.action
	if r.action != 0 {
		r.key = r.action
	}
	var prev *rec
	for j := 0; j < n.hist.n; j++ {
		if h := n.hist.at(j); !h.silent() {
			prev = h
			break
		}
	}
	cur := l.pend[:l.npend]
	same := sameFields(l, cur)
	if prev != nil && prev.output() {
		if prev.out != r.out {
			n.varied = true
		}
		switch {
		case prev.out == r.out:
			l.basis = basisExact
		case prev.action != 0 && prev.action == r.action:
			l.basis = basisCommentary
		case same && l.volatileRepeat(cur, prev.out, r.out):
			l.basis = basisVolatile
		}
		if l.basis != basisNone {
			r.flags |= recFuzzy
		}
	}
	if same {
		for k, f := range cur {
			if f.Sum != l.prev[k].Sum {
				l.chg[k] = min(l.chg[k]+1, 255)
				ordered := l.turn(k, f.Num-l.prev[k].Num)
				clock := l.clock(k, s.interleaved(n, f.Path, l.prev[k].Num, f.Num))
				if l.chg[k] >= 2 && (!ordered || clock) {
					l.addVolatile(f.Path)
				}
			} else {
				l.chg[k] = 0
				l.clk[k] = 0
			}
		}
	} else {
		clear(l.chg[:])
		clear(l.dir[:])
		clear(l.turns[:])
		clear(l.clk[:])
	}
	if same && l.nvol > 0 {
		// The sequence compares results without their learnt volatile
		// fields (it needs exact keys).
		for _, f := range cur {
			if l.isVolatile(f.Path) {
				r.key -= f.Sum
			}
		}
		r.key = nonZero(r.key)
	}
	l.nprev = copy(l.prev[:], cur)
	l.npend = 0
}

// turn records the change d of prev field k, its chg[k]-th change in a
// row, and reports whether the field carries order: it is
// noise only when at least half of its changes turned direction and it
// has changed three times in a row. A number that only rises or only
// falls (a count of errors left, a score, a sequence number), or that
// rises and restarts (a job's progress, 0 to 100 and again), is
// information; a duration or a random number turns about two times in
// three.
func (l *learning) turn(k int, d float64) (ordered bool) {
	var sign int8
	switch {
	case d > 0:
		sign = 1
	case d < 0:
		sign = -1
	}
	if l.chg[k] <= 1 {
		l.turns[k] = 0
	} else if sign != 0 && l.dir[k] != 0 && sign != l.dir[k] {
		l.turns[k] = min(l.turns[k]+1, 255)
	}
	l.dir[k] = sign
	return l.chg[k] < 3 || 2*int(l.turns[k]) < int(l.chg[k])
}

// clock records whether prev field k's change was a clock's, and
// reports whether its last two were.
func (l *learning) clock(k int, now bool) bool {
	was := l.clk[k] != 0
	l.clk[k] = 0
	if now {
		l.clk[k] = 1
	}
	return was && now
}

// interleaved reports whether a numeric field at path of node n, which
// rose from before to now, counts the execution's events rather than n's
// work: another node's latest result holds the same field
// with a value between the two. An agent runtime numbers every event,
// the model's action and the tool's observation alike (41, 42, 43, ...):
// one counter that rises at every step whatever the work does. A job's
// progress, a score or a count of tests passed is one node's own, and
// stays information.
func (s *State) interleaved(n *node, path uint32, before, now float64) bool {
	if now <= before {
		return false
	}
	for i := range s.nodes {
		o := &s.nodes[i]
		if o == n {
			continue
		}
		for _, f := range o.learn.prev[:o.learn.nprev] {
			if f.Path == path && f.Num > before && f.Num < now {
				return true
			}
		}
	}
	return false
}

// sameFields: the previous output had the same field paths, in order.
func sameFields(l *learning, cur []Field) bool {
	if l.nprev != len(cur) || len(cur) == 0 {
		return false
	}
	for k, f := range cur {
		if l.prev[k].Path != f.Path {
			return false
		}
	}
	return true
}

// volatileRepeat: the output differs from the previous one only in
// numeric fields (learnt volatile ones, and at most two others), and the
// rest of it, which repeats, holds more than those fields.
func (l *learning) volatileRepeat(cur []Field, prevOut, out uint64) bool {
	var curSum, prevSum, all uint64
	changed, fresh := 0, 0
	for k, f := range cur {
		all += f.Sum
		if f.Sum == l.prev[k].Sum {
			continue
		}
		changed++
		if !l.isVolatile(f.Path) {
			fresh++
		}
		curSum += f.Sum
		prevSum += l.prev[k].Sum
	}
	if changed == 0 || fresh > 2 || (len(cur) == changed && out-all == leaf(fnvOffset, kindObject)) {
		return false
	}
	return out-curSum == prevOut-prevSum
}

func (l *learning) isVolatile(p uint32) bool {
	for _, v := range l.vol[:l.nvol] {
		if v == p {
			return true
		}
	}
	return false
}

func (l *learning) addVolatile(p uint32) {
	if l.nvol < maxVolatile && !l.isVolatile(p) {
		l.vol[l.nvol] = p
		l.nvol++
	}
}

// novelty records whether step r of node n brought something new; prog
// is the declared progress judgement. Without declared progress, novelty
// is what the sequence rule reads: a result (without learnt volatile
// fields) its node has not shown in its history, with no "nearly the
// same" (a count that moved beside a constant field is news). In a
// cycle, a novel step also resets the counters of the edges into the
// members whose results never changed (a constant acknowledgement
// progresses when the loop does); a member whose results vary needs news
// of its own (a planner that rephrases while its researcher finds nothing
// is still stalled).
func (s *State) novelty(n *node, r *rec, prog bool) {
	if !r.output() {
		return
	}
	if !r.hasProg() && !r.hasMetric() {
		prog = true
		for k := 0; k < n.hist.n && prog; k++ {
			if h := n.hist.at(k); h.output() && h.key == r.key {
				prog = false
			}
		}
	}
	if !prog {
		return
	}
	r.flags |= recNovel
	n.novelSeq = r.seq
	if n.cyc < 0 {
		return
	}
	for _, m := range s.cycles[n.cyc].members {
		if s.nodes[m].varied {
			continue
		}
		for _, e := range s.nodes[m].in {
			s.edges[e].count = 0
		}
	}
}
