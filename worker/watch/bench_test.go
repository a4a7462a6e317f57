//go:build unix

package watch

import (
	historypb "go.temporal.io/api/history/v1"
	"runtime"
	"testing"
	"time"
)

// BenchmarkFollow is the watcher's work for one execution, without the
// server: a 1000-call history recorded without the guard, fed page by
// page (a page a workflow task, as the long poll hands them) into the
// reader and acted on. ns/call is the wall time per call it makes,
// cpu-ns/call the process's CPU time (garbage collection included); B/execution the heap a followed execution holds once
// its 1000 calls are read, the run still going (every page but the last,
// which closes it: 100 followers live at once, each with its reader).
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
}
