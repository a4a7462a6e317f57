//go:build unix

package watch

import (
	"runtime"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// BenchmarkFollow is the watcher's work for one execution, without the
// server: a 1000-call history recorded without the guard, fed page by
// page (a page a workflow task, as the long poll hands them) into the
// reader and acted on. ns/call is the wall time per call it makes,
// cpu-ns/call the process's CPU time (garbage collection included); B/execution the heap a followed execution holds once
// its 1000 calls are read, the run still going (every page but the last,
// which closes it: 100 followers live at once, each with its reader);
// paused-memory the same with a pause for each halt, unpaused at once
// (B/paused-halt).
//
//	go test ./worker/watch -run '^$' -bench Follow -benchtime 5x
func BenchmarkFollow(b *testing.B) {
	pages, calls := tasks(b, "../../testsuite/testdata/histories/workload-1000-unguarded.json")
	w, err := New(Options{Service: &nopService{}})
	if err != nil {
		b.Fatal(err)
	}
	follow := func() *reader { return followPages(b, w, pages) }
	b.Run("cpu", func(b *testing.B) {
		start, cpu := time.Now(), cpuTime(b)
		for i := 0; i < b.N; i++ {
			follow()
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*calls), "ns/call")
		b.ReportMetric(float64((cpuTime(b)-cpu).Nanoseconds())/float64(b.N*calls), "cpu-ns/call")
	})
	b.Run("memory", func(b *testing.B) {
		const n = 100
		// held is the heap n followers of the run's first pages hold, and
		// the halts one holds.
		held := func(pages [][]*historypb.HistoryEvent) (float64, int) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rs := make([]any, 2*n) // each reader and its follower
			for k := 0; k < len(rs); k += 2 {
				rs[k], rs[k+1] = following(b, w, pages)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(rs)
			return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n, rs[0].(*reader).snapshot().Halted.Len()
		}
		var per, perHalt float64
		var halts int
		for i := 0; i < b.N; i++ {
			// The heap a halt costs: the slope between the run half read
			// and read to its last task.
			half, h0 := held(pages[:len(pages)/2])
			per, halts = held(pages[:len(pages)-1])
			perHalt = (per - half) / float64(halts-h0)
		}
		b.ReportMetric(per, "B/execution")
		b.ReportMetric(float64(halts), "halts")
		b.ReportMetric(perHalt, "B/halt")
	})
	// The same with a pause for each halt, which an operator unpauses
	// at once (the loop starts over): what a halt answered costs.
	b.Run("paused-memory", func(b *testing.B) {
		paused := pausedPages(b, w.opts.Guard, pages)
		const n = 100
		held := func(pages [][]*historypb.HistoryEvent) (float64, int, int) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rs := make([]any, 2*n)
			for k := 0; k < len(rs); k += 2 {
				rs[k], rs[k+1] = following(b, w, pages)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(rs)
			s := rs[0].(*reader).snapshot()
			return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n, s.Halted.Len(), s.Pauses.Len()
		}
		for i := 0; i < b.N; i++ {
			half, h0, _ := held(paused[:len(paused)/2])
			per, halts, pauses := held(paused[:len(paused)-1])
			b.ReportMetric(per, "B/execution")
			b.ReportMetric(float64(halts), "halts")
			b.ReportMetric(float64(pauses), "pauses")
			b.ReportMetric((per-half)/float64(halts-h0), "B/paused-halt")
		}
	})
}

// pausedPages are pages with a Workflow Pause for each halt, as the
// watcher asks for it, unpaused by an operator at once: after the
// workflow task in which a halt waits, a Paused event with the
// watcher's request id and reason and an Unpaused event. The events
// after them are numbered on, every event id they name moved with them.
func pausedPages(t testing.TB, guard interceptor.Options, pages [][]*historypb.HistoryEvent) [][]*historypb.HistoryEvent {
	r, err := newReader(guard, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]*historypb.HistoryEvent
	var shift int64
	for _, p := range pages {
		page := make([]*historypb.HistoryEvent, len(p))
		for i, e := range p {
			page[i] = shifted(e, shift)
		}
		r.add(page...)
		if h := r.snapshot().pending(); h != nil {
			last := page[len(page)-1]
			ev := h.Verdict.Halt
			paused := &historypb.HistoryEvent{EventId: last.GetEventId() + 1, EventTime: last.GetEventTime(),
				EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED,
				Attributes: &historypb.HistoryEvent_WorkflowExecutionPausedEventAttributes{WorkflowExecutionPausedEventAttributes: &historypb.WorkflowExecutionPausedEventAttributes{
					Identity: PauseIdentity, Reason: history.PauseReason(*ev), RequestId: PauseRequestID(ev.WorkflowID, ev.RunID, ev.Seq)}}}
			unpaused := &historypb.HistoryEvent{EventId: last.GetEventId() + 2, EventTime: last.GetEventTime(),
				EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED,
				Attributes: &historypb.HistoryEvent_WorkflowExecutionUnpausedEventAttributes{WorkflowExecutionUnpausedEventAttributes: &historypb.WorkflowExecutionUnpausedEventAttributes{
					Identity: "alice@ops", Reason: "looked at it"}}}
			page = append(page, paused, unpaused)
			r.add(paused, unpaused)
			shift += 2
		}
		out = append(out, page)
	}
	return out
}

// shifted is a copy of e with its id and every event id it names moved
// by d.
func shifted(e *historypb.HistoryEvent, d int64) *historypb.HistoryEvent {
	c := proto.Clone(e).(*historypb.HistoryEvent)
	var move func(m protoreflect.Message)
	move = func(m protoreflect.Message) {
		m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case f.Kind() == protoreflect.Int64Kind && !f.IsList() && strings.HasSuffix(string(f.Name()), "event_id") && v.Int() > 0:
				m.Set(f, protoreflect.ValueOfInt64(v.Int()+d))
			case f.Kind() == protoreflect.MessageKind && !f.IsList() && !f.IsMap():
				move(v.Message())
			}
			return true
		})
	}
	move(c.ProtoReflect())
	return c
}

// BenchmarkStatusHalts is the work of listing a run's halts (/status),
// each answered by a pause of its own, an operator unpausing it: the
// pause of each halt is found in the compact pauses, and only it is
// expanded.
//
//	go test ./worker/watch -run '^$' -bench StatusHalts -benchmem
func BenchmarkStatusHalts(b *testing.B) {
	const n = 2000
	var verdicts []interceptor.Verdict
	var pauses []history.Pause
	for i := range n {
		seq := i + 1
		verdicts = append(verdicts, interceptor.Verdict{Call: 10 * seq, OnHalt: protocol.OnHaltPause,
			Halt: &protocol.HaltEvent{Seq: seq, Detector: "identical_output", Node: "Think", WorkflowID: "w", RunID: "r"}})
		pauses = append(pauses, history.Pause{Event: int64(100 * seq), Identity: PauseIdentity, RequestID: PauseRequestID("w", "r", seq),
			HaltSeq: seq, Ended: int64(100*seq + 1), Unpaused: true, UnpausedBy: "ops", Called: 10 * seq, CalledBefore: 10 * seq})
	}
	s := snapshot{Halted: history.HaltedOf(verdicts...), Pauses: history.PausesOf(pauses...), FirstCall: 1}
	b.ReportAllocs()
	for b.Loop() {
		if hs := s.halts(); len(hs) != n || !hs[n-1].Answered {
			b.Fatalf("%d halts, the last answered %v", len(hs), hs[n-1].Answered)
		}
	}
}
