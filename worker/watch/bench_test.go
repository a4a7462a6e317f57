//go:build unix

package watch

import (
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
// which closes it: 100 followers live at once).
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
		var per float64
		for i := 0; i < b.N; i++ {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rs := make([]*reader, n)
			for k := range rs {
				rs[k] = followPages(b, w, pages[:len(pages)-1])
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			per = float64(after.HeapAlloc-before.HeapAlloc) / n
			runtime.KeepAlive(rs)
		}
		b.ReportMetric(per, "B/execution")
	})
}
