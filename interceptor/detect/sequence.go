package detect

import (
	"fmt"
	"strings"
	"time"
)

// The third generation's loop rule (DetectionV3): the execution's steps,
// in the order they finished, form one sequence, each step named by its
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
//     waiting, not looping (the second generation's waiting rule).
//
// Nothing is "nearly" the same: results are equal after canonical reading
// or they differ. Canonical reading masks only noise (see canon.go), so a
// count that falls or a score that rises makes each iteration new.

// MaxLoopPeriod is the longest loop period, in steps, that DetectionV3
// sees.
const MaxLoopPeriod = 48

// seqCap is the length of the step sequence kept.
const seqCap = 2 * MaxLoopPeriod

// seqStep is one finished step of the execution's sequence, or a barrier.
type seqStep struct {
	key    uint64 // the node and its result
	node   int32  // -1: a barrier (outside input)
	failed bool
	waited bool
}

// same reports whether two sequence steps are the same step; a barrier is
// the same as nothing.
func (a *seqStep) same(b *seqStep) bool {
	return a.node >= 0 && a.node == b.node && a.key == b.key
}

// kindError and kindSilent are mixed into the keys of failed steps and
// steps with an empty result.
const (
	kindError  uint64 = 0x45
	kindSilent uint64 = 0x53
)

// pushSeq appends node i's finished step r to the sequence.
func (s *State) pushSeq(i int, r *rec, errHash uint64) {
	v := r.key
	switch {
	case r.failed() && errHash != 0:
		v = errHash ^ kindError
	case r.failed():
		v = fnvString(fnvOffset^kindError, r.errSig)
	case r.silent():
		v = kindSilent
	}
	s.steps.push(seqStep{
		key:    mix64(uint64(i+1)*0x9e3779b97f4a7c15 ^ v),
		node:   int32(i),
		failed: r.failed(),
		waited: r.waited(),
	})
}

// Input records input from outside the loop at now: a signal or an update
// the workflow received, a human's answer. With DetectionV3 no repetition
// spans it; with earlier generations it does nothing. It changes no
// counter and never trips.
func (s *State) Input(now time.Time) {
	_ = now // the rule needs only the order of events
	s.barrier()
}

// loopPeriod returns the period p of the repetition that ends the
// sequence and how many times it repeated, or 0, 0.
func (s *State) loopPeriod() (p, k int) {
	n := s.steps.n
	for p := 1; p <= MaxLoopPeriod && 2*p <= n; p++ {
		periodic := true
		for j := 0; j < p && periodic; j++ {
			periodic = s.steps.at(j).same(s.steps.at(j + p))
		}
		if !periodic {
			continue
		}
		k := s.lim.repeat
		if s.nodeTwice(p) {
			k = s.lim.oscPeriods
		}
		if k == 0 {
			continue
		}
		if k*p > seqCap {
			k = 2
		}
		if k*p > n {
			continue
		}
		for j := p; j+p < k*p && periodic; j++ {
			periodic = s.steps.at(j).same(s.steps.at(j + p))
		}
		if periodic && !s.waitedAll(k*p) {
			return p, k
		}
	}
	return 0, 0
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

// detectLoopV3 runs the third generation's loop rule after node i's step,
// then the persistent error rule.
func (s *State) detectLoopV3(i int, now time.Time) *Trip {
	p, k := s.loopPeriod()
	if p == 0 {
		if k := s.errorRun(); k > 0 {
			n := &s.nodes[i]
			t := s.trip(DetectorRepeatedError, i, now,
				fmt.Sprintf("%s failed with the same error %d times in a row, whatever was tried before each call: %s", n.name, k, n.hist.at(0).errSig))
			t.Evidence.Same = "identical error signatures (digits, hex ids and UUIDs masked), with no outside input between"
			return t
		}
		return nil
	}
	names := make([]string, 0, p)
	failed, twice := 0, s.nodeTwice(p)
	for j := p - 1; j >= 0; j-- {
		st := s.steps.at(j)
		names = append(names, s.nodes[st.node].name)
		if st.failed {
			failed++
		}
	}
	path := truncate(strings.Join(names, "→"), maxNameLen)
	var t *Trip
	switch {
	case failed > 0:
		t = s.trip(DetectorRepeatedError, i, now,
			fmt.Sprintf("the last %d steps repeat %d times with the same results and %d failing with the same error: %s", p, k, failed, path))
	case !twice:
		t = s.trip(DetectorIdenticalOutput, i, now,
			fmt.Sprintf("the loop repeated %d times with the same results: %s", k, path))
	default:
		t = s.trip(DetectorOutputOscillation, i, now,
			fmt.Sprintf("the last %d steps repeat %d times with period %d and the same results: %s", k*p, k, p, path))
	}
	t.Evidence.Same = fmt.Sprintf("%d steps, each equal to the one %d before it after canonical reading, with no outside input between", (k-1)*p, p)
	t.Evidence.Ignored = []string{
		"JSON key order and whitespace runs in strings",
		"JSON inside string fields read as JSON; arrays of strings compared as sets",
		"commentary fields (thought, reasoning, why, ...)",
		"noise in strings: timestamps, clock times, UUIDs, hex ids (8+ hex digits), generated ids (16+ mixed-case letters and digits), digit runs of 10+, durations (2.31s, 1.378 s, 150ms)",
	}
	return t
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
	need := s.lim.errRepeat + 2
	last := s.steps.at(0)
	c, between := 0, 0
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
			return need
		}
	}
	return 0
}

// barrier cuts the sequence, as outside input does (DetectionV3).
func (s *State) barrier() {
	if s.pol.v3() {
		s.steps.push(seqStep{node: -1})
	}
}
