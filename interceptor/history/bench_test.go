package history

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/cputime"
)

// richWorkload is a run of 1,000 sequential calls with distinct, rich
// outputs, recorded without the guard (6,005 events).
func richWorkload(b *testing.B) []*historypb.HistoryEvent {
	b.Helper()
	h, err := ReadHistoryFile(filepath.Join(fixtureDir, "workload-rich-1000-unguarded.json"))
	if err != nil {
		b.Fatal(err)
	}
	return h.GetEvents()
}

// BenchmarkReaderAdd feeds a Reader a 1,000-call history one event at a
// time, as a watcher's long poll brings them at worst, and reports the
// cost of one Add per event: wall and CPU time (the process's, GC
// included), bytes and allocations.
//
//	go test ./interceptor/history/ -run '^$' -bench ReaderAdd -benchmem
func BenchmarkReaderAdd(b *testing.B) {
	evs := richWorkload(b)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := cputime.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := NewReader(Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range evs {
			if err := r.Add(e); err != nil {
				b.Fatal(err)
			}
		}
		if ex := r.Close(); len(ex.Calls) != 1000 {
			b.Fatalf("%d calls judged, want 1000", len(ex.Calls))
		}
	}
	b.StopTimer()
	cpu1, _ := cputime.Process()
	runtime.ReadMemStats(&after)
	events := float64(b.N * len(evs))
	if cpuOK {
		// The process's CPU time: on a loaded machine, wall time is not
		// the Reader's.
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/events, "cpu-ns/event")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/events, "B/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReaderFollow measures the memory a followed execution holds:
// 200 Readers, each fed a run up to its 100th or its 500th call (the
// events decoded once and shared, as a watcher's history pages are its
// own whichever Reader holds them), live at once. B/execution is the heap
// they hold after a GC, divided by 200: the Judge's state, the events of
// the workflow task held, the open calls and the Execution so far.
//
//	go test ./interceptor/history/ -run '^$' -bench ReaderFollow -benchtime 3x
func BenchmarkReaderFollow(b *testing.B) {
	evs := richWorkload(b)
	for _, calls := range []int{100, 500} {
		b.Run(map[int]string{100: "100-calls", 500: "500-calls"}[calls], func(b *testing.B) {
			upto := 6 * calls // six events a call: task scheduled, started, completed; activity scheduled, started, completed
			const n = 200
			var per float64
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rs := make([]*Reader, n)
				for k := range rs {
					r, err := NewReader(Options{})
					if err != nil {
						b.Fatal(err)
					}
					if err := r.Add(evs[:upto]...); err != nil {
						b.Fatal(err)
					}
					rs[k] = r
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				per = float64(after.HeapAlloc-before.HeapAlloc) / n
				if got := len(rs[n-1].Execution().Calls); got < calls-1 {
					b.Fatalf("%d calls judged, want about %d", got, calls)
				}
				runtime.KeepAlive(rs)
			}
			b.ReportMetric(per, "B/execution")
		})
	}
}

// BenchmarkFollowMemory weighs what a followed execution holds against
// the guard's own state, on the 1000-call workload the watcher's
// BenchmarkFollow reads (recorded without the guard; judged with halts
// answered as observe answers them, so that its stuck loop halts again
// and again), fed a workflow task at a time up to the task before the
// run's last, 100 executions live at once; B/execution is the heap they
// hold after a GC, divided by 100:
//
//   - guard: the guard's own state after those calls, the interceptor's
//     guard value with its detectors, its warnings' evidence and its
//     halt, which the Judge drives as the interceptor does (the Judge
//     kept alone, its verdicts taken out): the budget;
//   - reader: a Reader with the whole analysis (Options{}), every
//     verdict with its evidence and every call's node;
//   - follow: a Reader under Options.Follow, whose Executions a follower
//     has read after each task.
//
// held-events is the events the Reader holds besides (the cursor: the
// rest of a workflow task), shared here with the other executions as a
// watcher's page is its own.
//
//	go test ./interceptor/history/ -run '^$' -bench FollowMemory -benchtime 3x
func BenchmarkFollowMemory(b *testing.B) {
	h, err := ReadHistoryFile(filepath.Join(fixtureDir, "workload-1000-unguarded.json"))
	if err != nil {
		b.Fatal(err)
	}
	pages := taskPages(h.GetEvents())
	follow := func(opts Options) *Reader {
		r, err := NewReader(opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pages {
			if err := r.Add(p...); err != nil {
				b.Fatal(err)
			}
			r.Execution()
		}
		return r
	}
	for _, tc := range followKeepers(follow) {
		b.Run(tc.name, func(b *testing.B) {
			heldPer(b, 100, tc.keep)
		})
	}
}

// taskPages splits a run's events a workflow task at a time, as a long
// poll hands them at worst, up to the task before its last (the run
// still going).
func taskPages(evs []*historypb.HistoryEvent) [][]*historypb.HistoryEvent {
	var pages [][]*historypb.HistoryEvent
	start := 0
	for i, e := range evs {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			pages = append(pages, evs[start:i+1])
			start = i + 1
		}
	}
	return pages[:len(pages)-1]
}

// heldPer keeps n values of keep live at once and reports the heap they
// hold after a GC, divided by n (B/execution), and, for a Reader, what it
// judged and holds.
func heldPer(b *testing.B, n int, keep func() any, into ...*float64) {
	var per float64
	runs := b.N
	if len(into) > 0 {
		runs = 1 // once, for a caller that reports its own metrics
	}
	for range runs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make([]any, n)
		for k := range kept {
			kept[k] = keep()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
		if r, ok := kept[0].(*Reader); ok {
			b.ReportMetric(float64(len(r.run.evs)), "held-events")
			ex := r.Execution()
			b.ReportMetric(float64(ex.Called), "calls")
			b.ReportMetric(float64(ex.VerdictsSeen), "verdicts")
			b.ReportMetric(float64(len(ex.Verdicts)), "verdicts-held")
		}
		runtime.KeepAlive(kept)
		if len(into) > 0 {
			*into[0] = per
			return
		}
	}
	b.ReportMetric(per, "B/execution")
}

// keeper is one thing weighed per followed execution.
type keeper struct {
	name string
	keep func() any
}

// followKeepers are what BenchmarkFollowMemory weighs, each built by
// follow under its options: the guard's own state (the Judge kept alone,
// its verdicts taken out), the Reader with the whole analysis, and the
// Reader following.
func followKeepers(follow func(Options) *Reader) []keeper {
	return []keeper{
		{"guard", func() any {
			j := follow(Options{Follow: true}).run.judge
			j.Verdicts()
			// The reader's hook would keep the whole reader alive.
			j.OnRefused(nil)
			return j
		}},
		{"reader", func() any { return follow(Options{}) }},
		{"follow", func() any { return follow(Options{Follow: true}) }},
	}
}

// BenchmarkFollowPausedMemory weighs what a followed execution holds for
// each halt a Workflow Pause answered (the watcher's pause for its halt,
// unpaused by an operator, again and again), beyond the guard's own
// state: the heap a Reader under Options.Follow holds after 2k such
// rounds (100 executions live at once, heap after a GC), and the slope
// between k and 2k rounds per halt (B/paused-halt: the halt and its
// pause kept compact, and what the guard keeps of each resume). The
// events' strings are their own, as a history read from the server has
// them.
//
//	go test ./interceptor/history/ -run '^$' -bench FollowPausedMemory -benchtime 3x
func BenchmarkFollowPausedMemory(b *testing.B) {
	const k = 40
	rounds := func(n, calls int) []*historypb.HistoryEvent {
		bl := newBuilder(new(testing.T))
		bl.task()
		// The watcher's pause names the newest halt waiting, as it
		// reads it.
		r, err := NewReader(Options{Follow: true})
		if err != nil {
			b.Fatal(err)
		}
		fed := 0
		feed := func() {
			if err := r.Add(bl.evs[fed:]...); err != nil {
				b.Fatal(err)
			}
			fed = len(bl.evs)
		}
		for range n {
			bl.calls(calls, "Think", "same").task()
			feed()
			seq := 0
			if ex := r.Execution(); ex.Pending() != nil {
				seq = ex.Pending().Seq
			}
			bl.pause(PauseIdentity, PauseRequestID(testWorkflowID, testRunID, seq)).unpause("alice@ops")
			feed()
		}
		// Each event's strings its own, as a history read from the
		// server has them, the watcher's reason as it gives it.
		for _, e := range bl.evs {
			if a := e.GetWorkflowExecutionPausedEventAttributes(); a != nil {
				a.Identity, a.RequestId = strings.Clone(a.Identity), strings.Clone(a.RequestId)
				a.Reason = strings.Clone(PauseReason(protocol.HaltEvent{Detector: "identical_output", Node: "Think", Iteration: 3, MaxIterations: 3}))
			}
			if a := e.GetWorkflowExecutionUnpausedEventAttributes(); a != nil {
				a.Identity, a.Reason = strings.Clone(a.Identity), strings.Clone(a.Reason)
			}
		}
		return bl.evs
	}
	held := func(evs []*historypb.HistoryEvent) (float64, int, int) {
		var r *Reader
		per := 0.0
		heldPer(b, 100, func() any {
			var err error
			if r, err = NewReader(Options{Follow: true}); err != nil {
				b.Fatal(err)
			}
			for _, e := range evs {
				if err := r.Add(e); err != nil {
					b.Fatal(err)
				}
				r.Execution()
			}
			return r
		}, &per)
		ex := r.Execution()
		return per, ex.Halted.Len(), ex.Pauses.Len()
	}
	// calls a round: 4 lets the calls after the trip raise halts the
	// pause supersedes (a pause that lands late), 3 has one halt a pause
	// (the watcher holding the tripping call).
	for _, calls := range []int{4, 3} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			short, long := rounds(k, calls), rounds(2*k, calls)
			for range b.N {
				h1, n1, _ := held(short)
				h2, n2, pauses := held(long)
				b.ReportMetric(h2, "B/execution")
				b.ReportMetric(float64(n2), "halts")
				b.ReportMetric(float64(pauses), "pauses")
				b.ReportMetric((h2-h1)/float64(n2-n1), "B/paused-halt")
			}
		})
	}
}
