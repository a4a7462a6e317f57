package history

import (
	"path/filepath"
	"runtime"
	"testing"

	historypb "go.temporal.io/api/history/v1"

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
