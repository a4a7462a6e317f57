package testsuite_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

// haltKey is what must agree between a halt the guard raised and the one
// the analysis finds.
func haltKey(h interceptor.HaltEvent) string {
	return fmt.Sprintf("#%d %s/%s@%s it=%d/%d warned=%d", h.Seq, h.HaltReason, h.Detector, h.Node, h.Iteration, h.MaxIterations, len(h.Warnings))
}

func warningKey(w interceptor.Warning) string {
	return fmt.Sprintf("warning %d/%d %s/%s@%s", w.N, w.Of, w.Reason, w.Detector, w.Node)
}

// liveWarnings are the warnings the guard gave live: each first shows in
// the notice header of the call it was issued at.
func liveWarnings(t *testing.T, file string) []string {
	h, err := testsuite.ReadHistoryFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range h.GetEvents() {
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "LocalActivity" {
			// A halt: the same warning seen after it was issued again
			// (signed-answers: warned, halted, resumed, warned again).
			seen = map[string]bool{}
		}
		p := e.GetActivityTaskScheduledEventAttributes().GetHeader().GetFields()[interceptor.NoticeHeader]
		if p == nil {
			continue
		}
		var n interceptor.Notice
		if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err != nil {
			t.Fatalf("event %d: notice: %v", e.GetEventId(), err)
		}
		if n.Warning != nil {
			if n.Warning.Node == "" {
				// Version 7 notices leave the node out: the call's own is
				// the loop's in these one-node loops.
				n.Warning.Node = e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			}
			if k := warningKey(*n.Warning); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// liveHaltCalls are the calls (of the run, from 1) the guard's halts met
// live: its loop.halted local activity runs before the call it halts.
func liveHaltCalls(t *testing.T, file string) []int {
	h, err := testsuite.ReadHistoryFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	calls := 0
	for _, e := range h.GetEvents() {
		if e.GetActivityTaskScheduledEventAttributes() != nil || e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil {
			calls++
		}
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "LocalActivity" {
			out = append(out, calls+1)
		}
	}
	return out
}

// TestAnalyzeAgreesWithFixtures: each fixture history recorded with the
// guard, analysed under the options it pinned and with the decisions it
// holds, gives the halts the guard raised live, call for call.
func TestAnalyzeAgreesWithFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	a, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{AsRecorded: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "manifest.json" {
			continue
		}
		ex := a.File(f)
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			if ex.Err != nil {
				t.Fatal(ex.Err)
			}
			for _, p := range ex.Problems {
				t.Errorf("problem: %s", p)
			}
			if !ex.Recorded.Guarded {
				return // no live guard to agree with: see the worker's e2e agreement test
			}
			var got, want []string
			for _, v := range ex.Verdicts {
				if v.Halt != nil {
					got = append(got, fmt.Sprintf("call %d: %s", v.Call-ex.FirstCall+1, haltKey(*v.Halt)))
				}
			}
			at := liveHaltCalls(t, f)
			for i, h := range ex.Recorded.Halts {
				want = append(want, fmt.Sprintf("call %d: %s", at[i], haltKey(h)))
			}
			for _, w := range ex.Warnings() {
				got = append(got, warningKey(w))
			}
			want = append(want, liveWarnings(t, f)...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("halts and warnings (v%d, %d calls):\ngot:\n%s\nwant:\n%s", ex.Recorded.Version, len(ex.Calls), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestRecordedAnswers: a history recorded with the guard tells where it
// halted and how each halt was answered.
func TestRecordedAnswers(t *testing.T) {
	ex, err := testsuite.AnalyzeFile("testdata/histories/stalled-resume-resume-escalate.json", testsuite.AnalyzeOptions{})
	require.NoError(t, err)
	assert.Equal(t, "3 halts: #1 stalled at Code, resume; #2 stalled at Verify, resume; #3 stalled at Code, escalate", ex.Recorded.Told())
	ex, err = testsuite.AnalyzeFile("testdata/histories/observe-identical-patch.json", testsuite.AnalyzeOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ex.Recorded.Told(), "16 halts: #1 stalled at Code, observed;"), ex.Recorded.Told())
	assert.True(t, strings.HasSuffix(ex.Recorded.Told(), "; 13 more"), ex.Recorded.Told())
}
