package testsuite_test

import (
	"context"
	"encoding/json"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/internal/cputime"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// BenchmarkReplayAttribution splits the replay overhead of
// BenchmarkReplay1000 and BenchmarkReplay1000Rich between reading results
// and the rest, in one run. Each iteration replays the unguarded history,
// then the guarded one pinned to generation 4 (as the overhead
// sub-benchmarks do), then reads the same history's results with
// detect.Extract in a tight loop, with the policy the history pinned and
// each result's node. Each part runs under a pprof label (run=unguarded,
// guarded, read), so that a CPU profile splits by part:
//
//	go test -run '^$' -bench BenchmarkReplayAttribution -benchtime 60x -cpuprofile cpu.out ./testsuite/
//	go tool pprof -tags cpu.out
//	go tool pprof -top -cum -tagfocus 'run=^guarded$' testsuite.test cpu.out | grep -E 'detect\.|interceptor\.'
//
// (-tagfocus takes a regular expression: unanchored, run=guarded would
// also match run=unguarded.)
//
// It reports cpu-ratio (the process CPU time of the guarded replay over
// the unguarded one, medians) and read-floor: 1 plus the tight loop's CPU
// time over the unguarded replay's, the ratio of a guard whose only cost
// were reading results at tight-loop speed. The reader can be slower
// inside a replay, where the SDK's work runs between two results, than in
// a tight loop: detect.Extract's samples under run=guarded per call
// against those under run=read per result say by how much. The guard's
// other costs are the rest of run=guarded's samples beyond run=unguarded's.
func BenchmarkReplayAttribution(b *testing.B) {
	for _, name := range []string{"workload-1000", "workload-rich-1000"} {
		b.Run(name, func(b *testing.B) { benchmarkAttribution(b, name) })
	}
}

func benchmarkAttribution(b *testing.B, name string) {
	unguarded := loadHistory(b, name+"-unguarded.json")
	gen4 := loadHistory(b, name+"-guarded.json")
	uRep := newReplayer(b, testsuite.ReplayOptions{Unguarded: true, Register: fixtures.RegisterWorkflows})
	gRep := newReplayer(b, testsuite.ReplayOptions{Guard: fixtures.WorkloadGuardOptions(), Register: fixtures.RegisterWorkflows})
	policy, results := pinnedResults(b, gen4)

	// part runs f under the pprof label run=label and returns the process
	// CPU time it took.
	cpuOK := true
	part := func(label string, f func()) time.Duration {
		var c time.Duration
		pprof.Do(context.Background(), pprof.Labels("run", label), func(context.Context) {
			c0, ok0 := cputime.Process()
			f()
			c1, ok1 := cputime.Process()
			c, cpuOK = c1-c0, cpuOK && ok0 && ok1
		})
		return c
	}
	var cu, cg, cr []time.Duration
	for b.Loop() {
		cu = append(cu, part("unguarded", func() { replayOnce(b, uRep, unguarded) }))
		cg = append(cg, part("guarded", func() { replayOnce(b, gRep, gen4) }))
		cr = append(cr, part("read", func() {
			for _, r := range results {
				detect.Extract(policy, r.node, r.data)
			}
		}))
	}
	if !cpuOK {
		b.Skip("the process CPU time cannot be read here")
	}
	perCall := func(ds []time.Duration) float64 {
		return float64(median(ds).Nanoseconds()) / 1e3 / float64(len(results))
	}
	b.ReportMetric(float64(median(cg))/float64(median(cu)), "cpu-ratio")
	b.ReportMetric(1+float64(median(cr))/float64(median(cu)), "read-floor")
	b.ReportMetric(perCall(cu), "unguarded-cpu-µs/call")
	b.ReportMetric(perCall(cg), "guarded-cpu-µs/call")
	b.ReportMetric(perCall(cr), "read-cpu-µs/call")
}

// callResult is one call's result as the guard reads it.
type callResult struct {
	node string
	data []byte
}

// pinnedResults returns the detection policy h pinned and the results of
// its activities, each with its activity type (the workload's node).
func pinnedResults(tb testing.TB, h *historypb.History) (detect.Policy, []callResult) {
	tb.Helper()
	var pinned struct {
		Policy *detect.Policy `json:"policy"`
	}
	types := map[int64]string{} // scheduled event id → activity type
	var results []callResult
	for _, e := range h.GetEvents() {
		if a := e.GetMarkerRecordedEventAttributes(); a.GetMarkerName() == "SideEffect" && pinned.Policy == nil {
			require.NoError(tb, json.Unmarshal(a.GetDetails()["data"].GetPayloads()[0].GetData(), &pinned))
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			types[e.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			results = append(results, callResult{node: types[a.GetScheduledEventId()], data: a.GetResult().GetPayloads()[0].GetData()})
		}
	}
	require.NotNil(tb, pinned.Policy, "no pinned policy in the history")
	require.NotEmpty(tb, results)
	return *pinned.Policy, results
}
