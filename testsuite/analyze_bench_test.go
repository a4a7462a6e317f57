package testsuite_test

import (
	"flag"
	"runtime"
	"testing"

	"github.com/loopguard/loopguard/testsuite"
)

var analyzeDir = flag.String("analyze.dir", "testdata/histories", "histories BenchmarkAnalyzeFiles reads")

// BenchmarkAnalyzeFiles analyses the recorded fixture histories from their
// files, as `worker analyze DIR` does, and reports calls a second; the
// retained heap after each pass shows that memory does not grow with the
// number of histories read (the Analyzer keeps the summary only).
//
//	go test ./testsuite/ -run '^$' -bench AnalyzeFiles -benchmem
//	go test ./testsuite/ -run '^$' -bench AnalyzeFiles -benchmem -args -analyze.dir /tmp/trial
func BenchmarkAnalyzeFiles(b *testing.B) {
	files, err := testsuite.HistoryFiles(*analyzeDir)
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	calls := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := testsuite.AnalyzeFiles(files, testsuite.AnalyzeOptions{}, func(ex testsuite.Execution) {
			if ex.Err != nil {
				b.Fatal(ex.Err)
			}
			calls += len(ex.Calls)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(len(files)*b.N), "histories")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024, "retained-KiB")
}
