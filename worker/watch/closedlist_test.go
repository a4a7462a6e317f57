package watch

import (
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/loopguard/loopguard/interceptor/protocol"
)

// A closed run's listing keeps every field of its halts but the event's
// evidence and message, and a listed halt holds under 100 B.
func TestClosedLine(t *testing.T) {
	tripped := time.Date(2026, 11, 28, 17, 0, 0, 123, time.UTC)
	full := func(seq int, pausedBy, action string, paused time.Time) HaltStatus {
		return HaltStatus{
			Call: 10 * seq, Seq: seq, Detector: "cycle", Node: "search", Answered: pausedBy != "", PausedBy: pausedBy,
			Action: action, TrippedAt: tripped, PausedAt: paused, CallsBefore: 2,
			Event: protocol.HaltEvent{
				Seq: seq, Detector: "cycle", Node: "search", Message: "a long message", SuggestedActions: []string{"resume"},
				WorkflowID: "wf", RunID: "run", WorkflowType: "Agent",
			},
		}
	}
	give := ExecutionStatus{
		WorkflowID: "wf", RunID: "run", WorkflowType: "Agent", Warnings: 3, Problems: 1, Closed: true,
		UnstartedTaskFailed: []int64{12}, ResetTo: 9,
		Halts: []HaltStatus{
			full(1, PauseRequestID("wf", "run", 1), "pause", tripped.Add(time.Second)),
			full(2, "operator", "paused by another", tripped.Add(2*time.Second)),
			full(3, "", ActionEscaped, time.Time{}),
		},
	}
	want := give
	want.Halts = slices.Clone(give.Halts)
	for i := range want.Halts {
		want.Halts[i].Event.Message, want.Halts[i].Event.SuggestedActions = "", nil
	}
	c := closedLine(give)
	if got := c.status(); !reflect.DeepEqual(got, want) {
		t.Errorf("closedLine(...).status() =\n%+v\nwant\n%+v", got, want)
	}
	if c.halts[0].pausedBy != "" || c.halts[1].pausedBy != "operator" {
		t.Errorf("pausedBy kept: %q, %q; want the derived one dropped, another's kept", c.halts[0].pausedBy, c.halts[1].pausedBy)
	}
	for _, a := range []string{"pause", "paused by another", "superseded", ActionEscaped,
		FallbackSignal.String(), FallbackCancel.String(), FallbackObserve.String()} {
		if got := actions[actionCode(a)]; got != a {
			t.Errorf("action %q listed as %q", a, got)
		}
	}
	if got := actions[actionCode("something new")]; got != "" {
		t.Errorf("an unknown action listed as %q, want none", got)
	}
	if n := unsafe.Sizeof(listedHalt{}); n > 100 {
		t.Errorf("a listed halt holds %d B, want at most 100", n)
	}
}

// BenchmarkClosedListing weighs the listing of closed runs: 1000 runs of
// 20 halts each, heap after a GC, per listed halt (the run's line
// included; the ids and node strings it shares with the status line it
// is cut from are not counted).
//
//	go test ./worker/watch -run '^$' -bench ClosedListing -benchtime 3x
func BenchmarkClosedListing(b *testing.B) {
	const runs, halts = maxClosedListed, 20
	line := func(r int) ExecutionStatus {
		es := ExecutionStatus{WorkflowID: "wf-" + string(rune('a'+r%26)), RunID: time.Unix(int64(r), 0).String(), WorkflowType: "Agent"}
		for s := 1; s <= halts; s++ {
			ev := protocol.HaltEvent{Seq: s, Detector: "cycle", Node: "search", Message: "a loop", WorkflowID: es.WorkflowID, RunID: es.RunID}
			es.Halts = append(es.Halts, HaltStatus{
				Call: 10 * s, Seq: s, Detector: "cycle", Node: "search", Answered: true,
				PausedBy: PauseRequestID(es.WorkflowID, es.RunID, s), Action: "pause",
				TrippedAt: time.Unix(int64(s), 0), PausedAt: time.Unix(int64(s), 1), Event: ev,
			})
		}
		return es
	}
	var per float64
	for i := 0; i < b.N; i++ {
		lines := make([]ExecutionStatus, runs)
		for r := range lines {
			lines[r] = line(r)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		closed := make([]closedRun, 0, runs)
		for r := range lines {
			closed = append(closed, closedLine(lines[r]))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (runs * halts)
		runtime.KeepAlive(closed)
		runtime.KeepAlive(lines) // the strings a run's line shares: its reader's, held while it was followed
	}
	b.ReportMetric(per, "B/halt")
}
