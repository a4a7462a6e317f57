package detect

import (
	"fmt"
	"strings"
	"time"
)

// The loop rule: the execution's steps, in the order they finished, form one sequence, each step named by its
// node and what it returned (its canonical result, or its error
// signature). A loop is a stretch at the end of that sequence that
// repeats with some period p, step for step and result for result:
//
//   - a period in which every node steps once (coder→verifier, or one
//     model turn and the tool it called) must repeat RepeatThreshold
//     times: A B A B is also what an agent does when it re-reads a file
//     after an edit;
//   - a period in which a node steps twice or more (a model that
//     alternates between two tools, a node that flips between two
//     outputs) must repeat OscillationPeriods times: the alternation is
//     itself the repetition;
//   - p runs from 1 to MaxLoopPeriod steps (48, so that a model↔tool loop
//     of 24 tool calls is seen), and the state is that many steps
//     twice: bounded, whatever the run's length;
//   - outside input (a signal or an update the workflow received, a
//     resume) is a barrier: no repetition spans it, and a loop that goes
//     on unchanged after it is seen again once it has repeated enough
//     after it;
//   - a repetition of steps that each followed a durable timer is
//     waiting, not looping (the waiting rule, iteration.go).
//
// Nothing is "nearly" the same: results are equal after canonical reading
// or they differ. Canonical reading masks only noise (see canon.go), so a
// count that falls or a score that rises makes each iteration new.

// MaxLoopPeriod is the longest loop period, in steps, the loop rule sees.
const MaxLoopPeriod = 48

// seqCap is the length of the step sequence kept.
const seqCap = 2 * MaxLoopPeriod

// SequenceSteps is how many of the latest steps the loop rule keeps (twice
// MaxLoopPeriod). A period whose RepeatThreshold (or OscillationPeriods)
// repeats do not fit in it is held to two repeats, and a run of failures
// longer than it is not seen: interceptor.New refuses thresholds that even
// the shortest period could not be read with.
const SequenceSteps = seqCap

// seqStep is one finished step of the execution's sequence, or a barrier.
type seqStep struct {
	exact  uint64 // the node and its result, as read
	key    uint64 // the same without the node's learnt volatile fields
	node   int32  // -1: a barrier (outside input)
	failed bool
	silent bool // an empty result: no evidence of its own
	waited bool
	count  int64  // the sum of the result's integers (Observation.Count)
	shape  uint64 // the result with its numbers masked (Observation.Shape)
}

// same reports whether two sequence steps are the same step (by their
// exact results, or without learnt volatile fields); a barrier is the
// same as nothing. With loose (the period holds a step that returned
// something), two failures of the node are the same whatever their
// errors, and two empty results are the same; otherwise an empty result
// is the same as nothing: a void call repeated on its own shows nothing.
func (a *seqStep) same(b *seqStep, exact, loose bool) bool {
	switch {
	case a.node < 0 || a.node != b.node:
		return false
	case a.silent || b.silent:
		return loose && a.silent && b.silent
	case loose && a.failed && b.failed:
		return true
	case exact:
		return a.exact == b.exact
	}
	return a.key == b.key
}

// kindError and kindSilent are mixed into the keys of failed steps and
// steps with an empty result.
const (
	kindError  uint64 = 0x45
	kindSilent uint64 = 0x53
)

// pushSeq appends node i's finished step r to the sequence.
func (s *State) pushSeq(i int, r *rec, errHash uint64) {
	v, x := r.key, r.out
	if r.action != 0 {
		x = r.action
	}
	switch {
	case r.failed() && errHash != 0:
		v = errHash ^ kindError
		x = v
	case r.failed():
		v = fnvString(fnvOffset^kindError, r.errSig)
		x = v
	case r.silent():
		v, x = kindSilent, kindSilent
	}
	node := uint64(i+1) * 0x9e3779b97f4a7c15
	st := seqStep{
		exact:  mix64(node ^ x),
		key:    mix64(node ^ v),
		node:   int32(i),
		failed: r.failed(),
		silent: r.silent(),
		waited: r.waited(),
		count:  r.count,
		shape:  r.shape,
	}
	// Half a hash tells 96 steps apart as well (a false match needs a
	// whole period of them), in half the state.
	st.exact, st.key, st.shape = st.exact>>32, st.key>>32, st.shape>>32
	s.steps.push(st)
}

// Input records input from outside the loop at now: a signal or an update
// the workflow received, a human's answer. No repetition spans it (only
// the order of events counts, not now). It changes no counter, never trips.
func (s *State) Input(now time.Time) {
	s.barrier()
}

// loopPeriod returns the period p of the repetition that ends the
// sequence, how many times it repeated and how many steps it spans, or
// zeros. Exact repetition is looked for first, then repetition without
// the learnt volatile fields: a number that flips between two values is
// an oscillation before it is noise. A period in which every node steps
// once has repeated k times at the first step of its k-th iteration: the
// same call, after the same results twice, is about to be made a third
// time. In a period with a step that succeeded, a step that failed
// matches any failure of its node (the same action, failing each time,
// whatever the error says).
func (s *State) loopPeriod() (p, k, span int) {
	for _, exact := range [2]bool{true, false} {
		if p, k, span := s.period(exact); p > 0 {
			return p, k, span
		}
	}
	return 0, 0, 0
}

func (s *State) period(exact bool) (p, k, span int) {
	n := s.steps.n
	for p := 1; p <= MaxLoopPeriod && p < n; p++ {
		if a := s.steps.at(0); a.node < 0 || s.steps.at(p).node != a.node {
			continue // not the same step, however loosely compared (same)
		}
		anyError := false
		if p > 1 {
			for j := 0; j < p && !anyError; j++ {
				st := s.steps.at(j)
				anyError = !st.failed && !st.silent && st.node >= 0
			}
		}
		if !s.steps.at(0).same(s.steps.at(p), exact, anyError && p < n-1) {
			continue
		}
		twice := s.nodeTwice(p)
		k := s.lim.repeat
		if twice {
			k = s.lim.oscPeriods
		}
		if k == 0 {
			continue
		}
		if k*p > seqCap {
			k = 2
		}
		span := k * p
		if !twice {
			span = (k-1)*p + 1
		}
		if span > n {
			continue
		}
		periodic := true
		for j := 1; j < span && periodic; j++ {
			// With RepeatThreshold 2 the comparisons below leave steps of
			// the first period unread: none of them may be a barrier.
			periodic = s.steps.at(j).node >= 0
		}
		for j := 1; j+p < span && periodic; j++ {
			// The oldest step of the stretch must match as read: a
			// failure there followed a call the stretch does not hold.
			// (anyError is the loose matching of same.)
			periodic = s.steps.at(j).same(s.steps.at(j+p), exact, anyError && j+p < span-1)
		}
		if periodic && !s.waitedAll(span) && !s.restarts(p) {
			return p, k, span
		}
	}
	return 0, 0, 0
}

// restarts reports whether, in the latest p steps, a node steps three
// times or more with results that differ only in their numbers, and its
// integers, read round the period in time order, rise at every step but
// one, or fall at every step but one: a job that runs to its end and
// starts again (progress 0, 25, 50, 75, 100, then 0), not a loop.
func (s *State) restarts(p int) bool {
	var counts [MaxLoopPeriod]int64
	for a := 0; a < p; a++ {
		first := s.steps.at(a)
		m := 0
		for b := p - 1; b >= a; b-- { // oldest first
			if st := s.steps.at(b); st.node == first.node {
				if st.failed || st.shape == 0 || st.shape != first.shape {
					m = 0
					break
				}
				counts[m] = st.count
				m++
			}
		}
		if m < 3 {
			continue
		}
		if !s.onlyCounterMoved(p) {
			// A restart's evidence: nothing but the counter moved.
			continue
		}
		up, down := 0, 0
		for j := range m {
			switch next := counts[(j+1)%m]; {
			case next > counts[j]:
				up++
			case next < counts[j]:
				down++
			}
		}
		if up >= m-1 || down >= m-1 {
			return true
		}
	}
	return false
}

// onlyCounterMoved reports whether, in the latest p steps, each node's
// steps differ from one another in their numbers at most (equal shapes):
// the evidence a restart needs. A job that
// runs to its end and starts again shows the same action and the same
// kind of answer throughout; an agent that re-reads a file in ranges
// (view_range 1-50, 51-100, ..., then 1-50 again) gets other text back
// each time, and is a loop.
func (s *State) onlyCounterMoved(p int) bool {
	for a := 0; a < p; a++ {
		first := s.steps.at(a)
		for b := a + 1; b < p; b++ {
			if st := s.steps.at(b); st.node == first.node && (st.failed != first.failed || st.shape != first.shape) {
				return false
			}
		}
	}
	return true
}

// staleRound reports whether the latest steps go round the same nodes in
// the same order, period p with every node once and at least three nodes
// (a round of two is one model turn and one tool call, and re-running a
// command whose output was seen before is everyday work there: the real
// corpus shows it), RepeatThreshold times,
// and no step after the first round brought back a result its node had
// not already shown since the last outside input: the loop revisits what it has tried (plan A, plan B,
// plan A again) without anything new. It returns p, or 0.
func (s *State) staleRound() int {
	k := s.lim.repeat
	if k == 0 {
		return 0
	}
	n := s.steps.n
	// A period in which a node steps twice never qualifies, and a node
	// that steps twice in the latest p steps does so in every longer
	// stretch: the periods beyond d are not looked at.
	d := s.distinctRun(min(MaxLoopPeriod, n))
	for p := 3; p <= d && k*p <= n; p++ {
		ok := true
		for j := 0; j+p < k*p && ok; j++ {
			a, b := s.steps.at(j), s.steps.at(j+p)
			ok = a.node >= 0 && a.node == b.node
		}
		if !ok || s.nodeTwice(p) {
			continue
		}
		// Every step after the first round repeats an earlier result
		// of its node, since the last outside input.
		for j := 0; j < (k-1)*p && ok; j++ {
			a, seen := s.steps.at(j), false
			for m := j + p; m < n && !seen; m++ {
				b := s.steps.at(m)
				if b.node < 0 {
					break
				}
				seen = a.same(b, false, false)
			}
			ok = seen
		}
		if ok && !s.waitedAll(k*p) {
			return p
		}
	}
	return 0
}

// distinctRun returns the largest d ≤ limit such that no node steps twice
// in the latest d steps: nodeTwice(p) is false for p ≤ d, and true for
// p > d when d < limit.
func (s *State) distinctRun(limit int) int {
	for d := 1; d < limit; d++ {
		nd := s.steps.at(d).node
		for a := 0; a < d; a++ {
			if s.steps.at(a).node == nd {
				return d
			}
		}
	}
	return limit
}

// nodeTwice reports whether a node steps twice in the latest p steps.
func (s *State) nodeTwice(p int) bool {
	for a := 0; a < p; a++ {
		for b := a + 1; b < p; b++ {
			if s.steps.at(a).node == s.steps.at(b).node {
				return true
			}
		}
	}
	return false
}

// waitedAll reports whether every one of the latest w steps but the oldest
// followed a durable timer (the waiting rule).
func (s *State) waitedAll(w int) bool {
	for j := 0; j < w-1; j++ {
		if !s.steps.at(j).waited {
			return false
		}
	}
	return w > 1
}

// detectLoop runs the loop rule after node i's step,
// then the persistent error rule.
func (s *State) detectLoop(i int, now time.Time) *Trip {
	p, k, span := s.loopPeriod()
	if p == 0 {
		if k := s.quietRepeat(); k > 0 {
			n := &s.nodes[i]
			t := s.trip(DetectorIdenticalOutput, i, now,
				fmt.Sprintf("%s returned the same result %d times in a row, and every other node that ran meanwhile repeated its own", n.name, k))
			t.Evidence.Same = "equal after canonical reading; the other nodes' steps between equal to their step before"
			return t
		}
		if p := s.staleRound(); p > 0 {
			t := s.trip(DetectorTransitionOscillation, i, now,
				fmt.Sprintf("the loop went round %s %d times and each result was one it had already shown", s.periodPath(p*s.lim.repeat-1, p), s.lim.repeat))
			t.Evidence.Same = "every step's result equal to one of the same node earlier in the stretch, after canonical reading"
			s.measure(t, i, p, p*s.lim.repeat)
			return t
		}
		if k := s.errorRun(); k > 0 {
			n := &s.nodes[i]
			t := s.trip(DetectorRepeatedError, i, now,
				fmt.Sprintf("%s failed with the same error %d times in a row, whatever was tried before each call: %s", n.name, k, n.hist.at(0).errSig))
			t.Evidence.Same = "identical error signatures (digits, hex ids and UUIDs masked), with no outside input between"
			s.measure(t, i, 2, 2*k) // a failure, and at most one step before it
			return t
		}
		return nil
	}
	twice, errSig := s.nodeTwice(p), ""
	for j := 0; j < p; j++ {
		if st := s.steps.at(j); st.failed {
			if n := &s.nodes[st.node]; n.hist.n > 0 {
				errSig = n.hist.at(0).errSig
			}
		}
	}
	path := s.periodPath(span-1, p)
	var t *Trip
	switch {
	case errSig != "":
		t = s.trip(DetectorRepeatedError, i, now,
			fmt.Sprintf("%s repeated %d times in a row, failing each time: %s", path, k, errSig))
	case !twice:
		t = s.trip(DetectorIdenticalOutput, i, now,
			fmt.Sprintf("%s repeated with the same results %d times in a row", path, k))
	default:
		t = s.trip(DetectorOutputOscillation, i, now,
			fmt.Sprintf("%s repeated with the same results %d times in a row (a period of %d steps)", path, k, p))
	}
	t.Evidence.Same = fmt.Sprintf("%d steps, each equal to the one %d before it after canonical reading, with no outside input between", span-p, p)
	s.measure(t, i, p, span)
	t.Evidence.Ignored = []string{
		"JSON key order and whitespace runs in strings",
		"JSON inside string fields read as JSON; arrays of strings compared as sets",
		"commentary fields (thought, reasoning, why, ...)",
		"noise in strings: timestamps, clock times, UUIDs, hex ids (8+ hex digits), generated ids (16+ mixed-case letters and digits), digit runs of 10+, durations (2.31s, 1.378 s, 150ms)",
		"measurements of the call and the runtime's own counters by name: token usage and its cost, cause, event and command ids, task_progress",
		"step N of M counters and progress meter lines",
		"clocks: numeric fields that rose by the same stride, at least the steps between, at each of their node's steps",
	}
	return t
}

// quietRepeat returns RepeatThreshold when the latest step's node returned
// the same result that many times in a row (its own steps) and every
// other node that stepped meanwhile repeated its own previous result each
// time: nothing new, however the steps interleave. Parallel branches that
// each loop (workflow.Go) finish their steps in no fixed order, so their
// sequence need not be periodic. It returns 0 otherwise, when the steps
// waited, or when outside input came between.
func (s *State) quietRepeat() int {
	k := s.lim.repeat
	if k == 0 || s.steps.n == 0 {
		return 0
	}
	last := s.steps.at(0)
	if last.node < 0 || last.failed || last.silent {
		return 0
	}
	// The stretch: back to the node's k-th newest step.
	c, end, waited := 0, -1, true
	for j := 0; j < s.steps.n; j++ {
		st := s.steps.at(j)
		if st.node < 0 {
			return 0
		}
		if st.node != last.node {
			continue
		}
		if !st.same(last, false, false) {
			return 0
		}
		if c++; c == k {
			end = j
			break
		}
		waited = waited && st.waited
	}
	if end < 0 || waited {
		return 0
	}
	// Every other node's steps in the stretch equal its step before it.
	others := false
	for j := 1; j < end; j++ {
		st := s.steps.at(j)
		if st.node == last.node {
			continue
		}
		others = true
		prev := (*seqStep)(nil)
		for m := end + 1; m < s.steps.n; m++ {
			b := s.steps.at(m)
			if b.node < 0 {
				break
			}
			if b.node == st.node {
				prev = b
				break
			}
		}
		if prev == nil || !st.same(prev, false, false) {
			return 0
		}
	}
	if !others {
		return 0 // a node alone: the loop rule's period 1
	}
	return k
}

// errorRun returns how many times in a row the latest step's node failed
// with the latest step's error when that is at least ErrorRepeatThreshold
// + 2, else 0. One step of another node may come before each failure and
// may differ every time (the step that chose the attempt: five different
// attempts that meet the same error are no change of approach). Two steps
// between failures, a success of the node or a barrier end the run.
// With the same attempts each time the loop rule halts at
// ErrorRepeatThreshold already.
func (s *State) errorRun() int {
	if s.lim.errRepeat == 0 || s.steps.n == 0 || !s.steps.at(0).failed {
		return 0
	}
	need := s.lim.errRepeat + 1
	last := s.steps.at(0)
	c, between, waited := 0, 0, true
	for j := 0; j < s.steps.n; j++ {
		st := s.steps.at(j)
		if st.node < 0 {
			return 0
		}
		if st.node != last.node {
			if between++; between > 1 {
				return 0 // more happened between two attempts than choosing the next one
			}
			continue
		}
		between = 0
		if st.key != last.key {
			return 0
		}
		if c++; c == need {
			if waited {
				return 0 // polling a service that is down, with a timer between polls
			}
			return need
		}
		waited = waited && st.waited
	}
	return 0
}

// periodPath names the p steps from the sequence's from-th newest on, in
// the order they ran: the period, from the first step of the repeating
// stretch.
func (s *State) periodPath(from, p int) string {
	names := make([]string, 0, p)
	for j := from; j > from-p; j-- {
		names = append(names, s.nodes[s.steps.at(j).node].name)
	}
	return truncate(strings.Join(names, "→"), maxNameLen)
}

// barrier cuts the sequence, as outside input does.
func (s *State) barrier() {
	s.steps.push(seqStep{node: -1})
}
