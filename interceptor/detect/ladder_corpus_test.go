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
	oneLoop          bool
	unanswered       map[string]int
	inForce          string
	nodes            []string
	left, issued     int
}

func newWarningRung(p Policy, warnings int) *warningRung {
	return &warningRung{warnings: warnings, window: p.Window, oneLoop: p.OneLoop, unanswered: map[string]int{}}
}

func (w *warningRung) key(t *Trip) string {
	switch {
	case w.oneLoop && t.Loop != "":
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
	if w.oneLoop && t.Period > 0 {
		w.left = max(w.window*t.Period, t.Window+t.Period)
	}
	s.Resume(t, Extension{})
	return true
}

func (w *warningRung) call(node string) {
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
	outcomeHalted ladderOutcome = iota // warned, then halted
	outcomeEnded                       // the run ended with its warning in force (not yet heeded)
	outcomeHeeded                      // its repetition did not come back within the heeded window: the recorded agent moved on
	outcomeAgain                       // warned more than Warnings times, never halted
)

// TestRealCorpusWithWarnings measures the ladder on the real corpus with
// the tool-call grain's budgets: loops caught and progressing runs halted
// without warnings and with Warnings 1, at guard versions 8 and 9; and,
// for each loop caught without warnings, what the warning made of it. A
// recorded agent does not read its warnings, so a loop whose repetition
// stopped after the warning (the labelled stretch ended, the agent moved
// on) is heeded, as it would be live. At version 9 no loop is warned
// again and again without a halt (version 8 renewed the warnings of a
// loop that took a detour, or whose period outlasted the heeded window).
func TestRealCorpusWithWarnings(t *testing.T) {
	traces := loadRealCorpus(t)
	type rule struct {
		name    string
		oneLoop bool
	}
	rules := []rule{{"version 8", false}, {"version 9", true}}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-10s %-6s %-22s %-22s %-10s %-10s %-10s %-8s %s\n", "GrainToolCall", "half", "caught, no warnings", "caught, Warnings 1", "ended", "heeded", "again", "warnings", "progressing runs halted (no warnings / Warnings 1)")
	for _, r := range rules {
		for _, h := range []string{"tune", "check"} {
			var plain, warned corpusStats
			var outcomes [4]int
			issued := 0
			for i := range traces {
				tr := &traces[i]
				if tr.Half != h {
					continue
				}
				p := ToolCallPolicy()
				p.OneLoop = r.oneLoop
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
				switch {
				case at >= 0:
					outcomes[outcomeHalted]++
				case lad.issued > 1:
					outcomes[outcomeAgain]++
					t.Logf("%s: %s warned %d times, never halted", r.name, tr.Name, lad.issued)
				case lad.inForce != "":
					outcomes[outcomeEnded]++
				default:
					outcomes[outcomeHeeded]++
				}
			}
			fmt.Fprintf(&report, "%-10s %-6s %-22s %-22s %-10d %-10d %-10d %-8d %d/%d / %d/%d\n", r.name, h,
				fmt.Sprintf("%d/%d", plain.caught, plain.loops), fmt.Sprintf("%d/%d", warned.caught, warned.loops),
				outcomes[outcomeEnded], outcomes[outcomeHeeded], outcomes[outcomeAgain], issued,
				plain.falseHalts, plain.progressing, warned.falseHalts, warned.progressing)
			if r.oneLoop {
				assert.Zero(t, outcomes[outcomeAgain], "%s half: loops warned again and again, never halted", h)
				assert.Zero(t, warned.falseHalts, "%s half: progressing runs halted", h)
			}
		}
	}
	t.Log(report.String())
}
