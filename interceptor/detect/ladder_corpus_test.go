package detect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// warningRung models the guard's warning rung (interceptor/warning.go)
// for measurement on the corpus: Options.Warnings warnings per loop before
// a halt, the loop's calls counted against the warning in force until it
// is heeded. oneLoop selects guard version 9's loop (identity by anchor,
// heeded in periods); otherwise version 8's (per cycle id, Window calls
// per node). The interceptor's tests check the rung itself.
type warningRung struct {
	warnings, window int
	unanswered       map[string]int
	inForce          string
	nodes            []string
	left, issued     int
	// calls counts every call that went ahead; since and tripWindow are
	// the count at the last warning and the steps its detector needs to
	// trip again (Trip.Window), so a run that ended with the warning in
	// force can be told apart from one that ran a whole window past it.
	calls, since, tripWindow, period int
}

func newWarningRung(p Policy, warnings int) *warningRung {
	return &warningRung{warnings: warnings, window: p.Window, unanswered: map[string]int{}}
}

func (w *warningRung) key(t *Trip) string {
	switch {
	case t.Loop != "":
		return "loop:" + t.Loop
	case t.CycleID != "":
		return t.CycleID
	}
	return "node:" + t.Node
}

func (w *warningRung) warned(s *State, t *Trip) bool {
	k := w.key(t)
	if t.Reason == ReasonBudgetExceeded || t.Reason == ReasonUserStop || w.unanswered[k] >= w.warnings {
		return false
	}
	w.unanswered[k]++
	w.issued++
	w.inForce, w.nodes = k, []string{t.Node}
	for _, c := range s.View().Cycles {
		if c.CycleID == t.CycleID {
			w.nodes = c.Nodes
		}
	}
	w.left = w.window * len(w.nodes)
	w.since, w.tripWindow, w.period = w.calls, t.Window, t.Period
	if t.Period > 0 {
		w.left = max(w.window*t.Period, t.Window+t.Period)
	}
	s.Resume(t, Extension{})
	return true
}

func (w *warningRung) call(node string) {
	w.calls++
	if w.inForce == "" || !slices.Contains(w.nodes, node) {
		return
	}
	if w.left--; w.left == 0 {
		delete(w.unanswered, w.inForce) // heeded
		w.inForce = ""
	}
}

// ladderOutcome is what became of a loop the rule without warnings
// caught, once warned.
type ladderOutcome int

const (
	outcomeHalted  ladderOutcome = iota // warned, then halted
	outcomeEnded                        // the run ended within one window (Trip.Window steps) of the warning
	outcomeStopped                      // the run went on past a window, and nothing after the warning is a loop the detectors catch from a clean start
	outcomeMissed                       // the run went on, the detectors catch a loop after the warning from a clean start, and the warned run was not halted
	outcomeAgain                        // warned more than Warnings times, never halted
)

// TestRealCorpusWithWarnings measures the ladder on the real corpus with
// the tool-call grain's budgets: loops caught and progressing runs halted
// without warnings and with Warnings 1; and, for each loop caught without
// warnings, what the warning made of it. The target (issue 22): every
// loop caught without warnings is warned, then halted, unless the run
// ends within one window of the warning. A recorded agent does not read
// its warnings, and most recorded loops stop soon after their labelled
// stretch, so a loop that is not halted is accounted for in one of two
// ways: its run ended within one window of the warning (Trip.Window, the
// steps the detector needs to trip again on an unchanged loop), or the
// run went on and the calls after the warning hold nothing the detectors
// catch from a clean start (a fresh State over the rest of the run): the
// loop stopped repeating. The test fails on any other: a loop that went on
// after its warning, that the detectors would catch afresh, but that the
// warned guard let run (outcomeMissed), or that was warned again and again.
func TestRealCorpusWithWarnings(t *testing.T) {
	traces := loadRealCorpus(t)
	type rule struct{ name string }
	rules := []rule{{"loopguard"}}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-16s %-6s %-20s %-20s %-6s %-7s %-7s %-6s %-8s %s\n", "GrainToolCall", "half", "caught, no warnings", "caught, Warnings 1", "ended", "stopped", "missed", "again", "warnings", "progressing runs halted (no warnings / Warnings 1)")
	for _, r := range rules {
		for _, h := range []string{"tune", "check"} {
			var plain, warned corpusStats
			var outcomes [5]int
			issued := 0
			for i := range traces {
				tr := &traces[i]
				if tr.Half != h {
					continue
				}
				p := ToolCallPolicy()
				calls, onset := realCalls(tr)
				ct := &corpusTrace{Name: tr.Name, Loop: tr.Loop, Onset: onset}
				at0, trip0 := replay(p, calls)
				plain.add(ct, at0, trip0, false)
				lad := newWarningRung(p, 1)
				at, trip := replayWith(p, calls, lad)
				warned.add(ct, at, trip, false)
				if !tr.Loop || at0 < 0 {
					continue
				}
				issued += lad.issued
				after := lad.calls - lad.since
				o := outcomeHalted
				switch {
				case at >= 0:
				case lad.issued > 1:
					o = outcomeAgain
				case after < lad.tripWindow:
					o = outcomeEnded
				case freshTrip(p, calls, lad.since) < 0:
					o = outcomeStopped
				default:
					o = outcomeMissed
				}
				outcomes[o]++
				if o == outcomeAgain || o == outcomeMissed {
					t.Logf("%s: %s: warned %d times, %d calls after the last warning, not halted", r.name, tr.Name, lad.issued, after)
				}
			}
			fmt.Fprintf(&report, "%-16s %-6s %-20s %-20s %-6d %-7d %-7d %-6d %-8d %d/%d / %d/%d\n", r.name, h,
				fmt.Sprintf("%d/%d", plain.caught, plain.loops), fmt.Sprintf("%d/%d", warned.caught, warned.loops),
				outcomes[outcomeEnded], outcomes[outcomeStopped], outcomes[outcomeMissed], outcomes[outcomeAgain], issued,
				plain.falseHalts, plain.progressing, warned.falseHalts, warned.progressing)
			assert.Zero(t, outcomes[outcomeAgain], "%s, %s half: loops warned again and again, never halted", r.name, h)
			assert.Zero(t, outcomes[outcomeMissed], "%s, %s half: loops that went on after their warning, not halted", r.name, h)
			assert.Zero(t, warned.falseHalts, "%s, %s half: progressing runs halted", r.name, h)
		}
	}
	t.Log(report.String())
}

// freshTrip replays the calls from the since-th guarded call on (the
// warned call included) with a fresh State: the index of its trip within
// them, -1 for none.
func freshTrip(p Policy, calls []corpusCall, since int) int {
	n := 0
	for k, c := range calls {
		if c.Input {
			continue
		}
		if n == since {
			at, _ := replay(p, calls[k:])
			return at
		}
		n++
	}
	return -1
}
