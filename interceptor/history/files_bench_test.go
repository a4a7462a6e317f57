package history_test

import (
	"flag"
	"runtime"
	"testing"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/internal/cputime"
)

var analyzeDir = flag.String("analyze.dir", "../../testsuite/testdata/histories", "histories BenchmarkAnalyzeFiles reads (a folder, read recursively)")

// BenchmarkAnalyzeFiles analyses the histories of a folder from their
// files, as `worker analyze DIR` does: files read and decoded ahead on
// every core (-cpu 1,2 compares one core with two), judged in order. It
// reports calls a second of wall time and calls per CPU-second (on a
// loaded machine the wall time also counts the waits for a core); the
// retained heap after each pass shows that memory does not grow with the
// number of histories read (the Analyzer keeps the summary only).
//
//	go test ./interceptor/history/ -run '^$' -bench AnalyzeFiles -benchmem -cpu 1,2
//	go test ./interceptor/history/ -run '^$' -bench AnalyzeFiles -benchmem -cpu 1,2 -benchtime 5x -args -analyze.dir /tmp/trial
func BenchmarkAnalyzeFiles(b *testing.B) {
	files, err := history.HistoryFiles(*analyzeDir)
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	calls := 0
	cpu0, cpuOK := cputime.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := history.AnalyzeFiles(files, history.Options{}, func(ex history.Execution) {
			if ex.Err != nil {
				b.Fatal(ex.Err)
			}
			calls += len(ex.Calls)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu1, _ := cputime.Process()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	if cpuOK {
		b.ReportMetric(float64(calls)/(cpu1-cpu0).Seconds(), "calls/cpu-s")
	}
	b.ReportMetric(float64(len(files)*b.N), "histories")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024, "retained-KiB")
}
