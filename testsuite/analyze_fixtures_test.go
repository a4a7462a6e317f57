package testsuite_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// haltKey is what must agree between a halt the guard raised and the one
// the analysis finds.
func haltKey(h protocol.HaltEvent) string {
	return fmt.Sprintf("#%d %s/%s@%s it=%d/%d warned=%d", h.Seq, h.HaltReason, h.Detector, h.Node, h.Iteration, h.MaxIterations, len(h.Warnings))
}

func warningKey(w protocol.Warning) string {
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
		// A notice rides on an activity's header or a child workflow's.
		p := e.GetActivityTaskScheduledEventAttributes().GetHeader().GetFields()[protocol.NoticeHeader]
		if p == nil {
			p = e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetHeader().GetFields()[protocol.NoticeHeader]
		}
		if p == nil {
			continue
		}
		var n protocol.Notice
		if err := converter.GetDefaultDataConverter().FromPayload(p, &n); err != nil {
			t.Fatalf("event %d: notice: %v", e.GetEventId(), err)
		}
		if n.Warning != nil {
			if k := warningKey(*n.Warning); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// handlerActivity is the activity the fixtures' halt handler calls (the
// samples' reviewer, workflows.CoderVerifierLoop's askReviewer): its
// calls are not guarded.
const handlerActivity = "Review"

// liveHaltCalls are the calls (of the run, from 1) the guard's halts met
// live: its loop.halted local activity runs before the call it halts. It
// also returns the number of guarded calls the run made.
func liveHaltCalls(t *testing.T, file string) (at []int, calls int) {
	h, err := testsuite.ReadHistoryFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() != handlerActivity ||
			e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil {
			calls++
		}
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "LocalActivity" {
			at = append(at, calls+1)
		}
	}
	return at, calls
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
			at, calls := liveHaltCalls(t, f)
			for i, h := range ex.Recorded.Halts {
				want = append(want, fmt.Sprintf("call %d: %s", at[i], haltKey(h)))
			}
			// Every guarded call is judged: no halt is left waiting for a
			// decision the history holds.
			assert.Equal(t, calls, len(ex.Calls), "guarded calls judged")
			for _, w := range ex.Warnings() {
				got = append(got, warningKey(w))
			}
			// Each halt ends with the decision the history holds for it.
			for _, v := range ex.Verdicts {
				for _, a := range ex.Recorded.Answers {
					if v.Halt != nil && a.HaltSeq == v.Halt.Seq && a.Error == "" {
						if assert.NotNil(t, v.Decision, "halt %d: decision", v.Halt.Seq) {
							assert.Equal(t, a.Name, string(v.Decision.Action), "halt %d: decision", v.Halt.Seq)
							assert.Equal(t, a.Handler, v.Decision.By == interceptor.HandlerBy, "halt %d: decided by the handler", v.Halt.Seq)
						}
					}
				}
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
	assert.Equal(t, "3 halts: #1 stalled at Verify, resume; #2 budget_exceeded at Code, resume; #3 budget_exceeded at Code, escalate", ex.Recorded.Told())
	ex, err = testsuite.AnalyzeFile("testdata/histories/observe-identical-patch.json", testsuite.AnalyzeOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ex.Recorded.Told(), "5 halts: #1 stalled at Verify, observed;"), ex.Recorded.Told())
	assert.True(t, strings.HasSuffix(ex.Recorded.Told(), "; 2 more"), ex.Recorded.Told())
}

// TestRecordedGuardDecisions: as recorded, the halts the guard decided
// itself say how (the history holds no answer for them).
func TestRecordedGuardDecisions(t *testing.T) {
	for f, want := range map[string]string{
		"fail-oscillating.json":      "1 halts: #1 oscillating at Verify, escalate by the guard (policy: fail on halt)",
		"pause-timeout-resumes.json": "1 halts: #1 stalled at Verify, resume by the guard (no decision within the pause timeout of 2s)",
	} {
		ex, err := testsuite.AnalyzeFile(filepath.Join("testdata/histories", f), testsuite.AnalyzeOptions{AsRecorded: true})
		require.NoError(t, err)
		assert.Equal(t, want, ex.Recorded.Told(), f)
		ex, err = testsuite.AnalyzeFile(filepath.Join("testdata/histories", f), testsuite.AnalyzeOptions{})
		require.NoError(t, err)
		assert.Contains(t, ex.Recorded.Told(), "no answer in the history", f)
	}
}

// TestAnalyzeFollowsTheHaltHandler: a halt the workflow's halt handler
// resumed (guard versions 8 and 9: the handler calls Review, then resumes
// with its guidance) is followed as recorded: the Review call is the
// handler's, not guarded, and every guarded call after the halt is judged
// (before, the analysis waited at the halt for a human who never came:
// 10 of 14 calls).
func TestAnalyzeFollowsTheHaltHandler(t *testing.T) {
	for _, f := range []string{"samples-reviewed-handler-race.json", "samples-reviewed-published.json"} {
		ex, err := testsuite.AnalyzeFile(filepath.Join("testdata/histories", f), testsuite.AnalyzeOptions{AsRecorded: true})
		require.NoError(t, err)
		assert.Len(t, ex.Calls, 14, f)
		assert.NotContains(t, ex.Calls, handlerActivity, f)
		assert.Equal(t, "1 halts: #1 stalled at Verify, resume by the halt handler", ex.Recorded.Told(), f)
		halts := 0
		for _, v := range ex.Verdicts {
			if v.Halt == nil {
				continue
			}
			halts++
			require.NotNil(t, v.Decision, f)
			assert.Equal(t, protocol.ActionResume, v.Decision.Action, f)
			assert.Equal(t, interceptor.HandlerBy, v.Decision.By, f)
			assert.Contains(t, v.Decision.Guidance, "Fix the cache TTL arithmetic", f)
		}
		assert.Equal(t, 1, halts, f)
	}
}

// TestAnalyzeFindsTheHeldCallPastAHandlersCalls: at guard version 8 a
// handler's resume publishes nothing, so the held call is told from the
// handler's calls by the guidance it carries. The v8 reviewed history with
// a second Review call in a later workflow task, before the held Code
// call, is judged as recorded: the Review calls are the handler's, Code is
// the held call (read by the workflow task alone, the second Review was
// taken for it and judged).
func TestAnalyzeFindsTheHeldCallPastAHandlersCalls(t *testing.T) {
	h, err := testsuite.ReadHistoryFile("testdata/histories/samples-reviewed-handler-race.json")
	require.NoError(t, err)
	var review *historypb.HistoryEvent
	at := -1
	for i, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == handlerActivity {
			review = e
		}
		if review != nil && at < 0 && e.GetWorkflowPropertiesModifiedEventAttributes() != nil {
			at = i // the task in which the handler resumed
		}
	}
	require.NotNil(t, review)
	require.Positive(t, at)
	again := proto.Clone(review).(*historypb.HistoryEvent)
	again.EventId = 10_000
	h.Events = append(h.Events[:at:at], append([]*historypb.HistoryEvent{again}, h.Events[at:]...)...)

	a, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{AsRecorded: true})
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	assert.Len(t, ex.Calls, 14)
	assert.NotContains(t, ex.Calls, handlerActivity)
	assert.Equal(t, "1 halts: #1 stalled at Verify, resume by the halt handler", ex.Recorded.Told())
}
