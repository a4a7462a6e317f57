package detect

// staleRound and period as of 2371beb, frozen: the faster scans
// (sequence.go: a period whose step names another node is not looked at;
// no stale round is looked for beyond the latest steps with no node
// twice) must answer as these do on every sequence, since recorded
// histories replay against their answers.

import (
	"math/rand/v2"
	"testing"
)

// TestSequenceScansMatchReference compares period and staleRound with
// their frozen copies on random sequences: periodic tails, barriers,
// failures, empty results and waits, every repeat and oscillation limit.
func TestSequenceScansMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	hits, periods := 0, 0
	for trial := range 100000 {
		s := newState(DefaultPolicy())
		s.lim.repeat = 1 + r.IntN(4)
		s.lim.oscPeriods = r.IntN(5)
		nodes := 1 + r.IntN(8)
		vals := 1 + r.IntN(3)
		n := r.IntN(2 * seqCap)
		for i := 0; i < n; i++ {
			st := seqStep{node: int32(r.IntN(nodes+1) - 1), waited: r.IntN(8) == 0}
			if r.IntN(3) > 0 && i > 0 {
				st = *s.steps.at(r.IntN(min(i, 12))) // a periodic tail
			}
			st.failed, st.silent = r.IntN(6) == 0, r.IntN(8) == 0
			st.exact = uint64(r.IntN(vals))
			st.key = st.exact
			s.steps.push(st)
		}
		for _, exact := range []bool{true, false} {
			p1, k1, s1 := s.refPeriod(exact)
			p2, k2, s2 := s.period(exact)
			if p1 != p2 || k1 != k2 || s1 != s2 {
				t.Fatalf("trial %d: period old %d %d %d new %d %d %d", trial, p1, k1, s1, p2, k2, s2)
			}
			if p1 > 0 {
				periods++
			}
		}
		if a, b := s.refStaleRound(), s.staleRound(); a != b {
			t.Fatalf("trial %d: staleRound old %d new %d", trial, a, b)
		} else if a > 0 {
			hits++
		}
	}
	t.Logf("%d sequences with a stale round, %d periods found", hits, periods)
}

func (s *State) refStaleRound() int {
	k := s.lim.repeat
	if k == 0 {
		return 0
	}
	n := s.steps.n
	for p := 3; p <= MaxLoopPeriod && k*p <= n; p++ {
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

func (s *State) refPeriod(exact bool) (p, k, span int) {
	n := s.steps.n
	for p := 1; p <= MaxLoopPeriod && p < n; p++ {
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
