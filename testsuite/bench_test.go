package testsuite_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/cputime"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// BenchmarkReplay1000 replays the recorded 1,000-call Workload history with
// the guard (recorded and replayed with fixtures.WorkloadGuardOptions) and
// the same workload recorded and replayed without it. The "overhead"
// sub-benchmark alternates the two and reports guarded/unguarded as
// "ratio" (of the medians; "ratio-mean" of the means; "cpu-ratio" of the
// medians of the process CPU time); "guarded" also reports the guard's state
// size after 10,000 calls ("state-bytes-10k"). Run with at least 20
// replays a result (the default runs 4 to 7 here, and the same code swung
// from 1.04 to 1.42 between runs):
//
//	go test -run '^$' -bench 'BenchmarkReplay1000$/overhead' -benchtime 20x -benchmem -count 5 ./testsuite/
func BenchmarkReplay1000(b *testing.B) { benchmarkReplay(b, "workload-1000") }

// BenchmarkReplay1000Rich is BenchmarkReplay1000 on the realistic workload:
// 1,000 calls whose results are agent-sized JSON documents (2 to 4 KB, see
// fixtures.AgentDoc), which the guard reads and hashes on every call.
//
//	go test -run '^$' -bench BenchmarkReplay1000Rich -benchmem ./testsuite/
func BenchmarkReplay1000Rich(b *testing.B) { benchmarkReplay(b, "workload-rich-1000") }

func benchmarkReplay(b *testing.B, name string) {
	guarded := loadHistory(b, name+"-guarded.json")
	unguarded := loadHistory(b, name+"-unguarded.json")
	gOpts := testsuite.ReplayOptions{Guard: fixtures.WorkloadGuardOptions(), Register: fixtures.RegisterWorkflows}
	uOpts := testsuite.ReplayOptions{Unguarded: true, Register: fixtures.RegisterWorkflows}
	gRep := newReplayer(b, gOpts)
	uRep := newReplayer(b, uOpts)

	b.Run("unguarded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			replayOnce(b, uRep, unguarded)
		}
	})
	b.Run("guarded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			replayOnce(b, gRep, guarded)
		}
		b.ReportMetric(float64(stateSize(b, 10_000)), "state-bytes-10k")
	})
	b.Run("adoption", func(b *testing.B) {
		// The unguarded history on a guarded replayer: the guard finds no
		// marker and stays out of the way.
		b.ReportAllocs()
		for b.Loop() {
			replayOnce(b, gRep, unguarded)
		}
	})
	// The guarded and the unguarded replays alternate in one loop.
	b.Run("overhead", func(b *testing.B) {
		var tg, tu, cg, cu []time.Duration
		cpuOK := true
		for b.Loop() {
			d, c, ok := timeReplay(b, uRep, unguarded)
			tu, cu, cpuOK = append(tu, d), append(cu, c), cpuOK && ok
			d, c, ok = timeReplay(b, gRep, guarded)
			tg, cg, cpuOK = append(tg, d), append(cg, c), cpuOK && ok
		}
		// The median is robust to the other processes of a shared machine.
		b.ReportMetric(float64(median(tg))/float64(median(tu)), "ratio")
		b.ReportMetric(float64(sum(tg))/float64(sum(tu)), "ratio-mean")
		b.ReportMetric(float64(median(tg).Nanoseconds()), "guarded-ns/op")
		b.ReportMetric(float64(median(tu).Nanoseconds()), "unguarded-ns/op")
		if cpuOK {
			// The process's CPU time (the garbage collector's included) does
			// not count the time a replay waited for a core: on a loaded
			// machine it is steadier than the wall-clock ratio.
			b.ReportMetric(float64(median(cg))/float64(median(cu)), "cpu-ratio")
		}
	})
}

// BenchmarkReplayNotice replays the 1,000 calls of noticeReplays without
// a notice and with one on every call but the first two
// (Notice.Repeats): allocations per replay are the cost of the notice
// (TestNoticeReplayCost pins them per call). Run:
//
//	go test -run '^$' -bench BenchmarkReplayNotice -benchmem ./testsuite/
func BenchmarkReplayNotice(b *testing.B) {
	without, with, r := noticeReplays(b)
	for _, c := range []struct {
		name string
		h    *historypb.History
	}{{"without", without}, {"with", with}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				replayOnce(b, r, c.h)
			}
		})
	}
}

// timeReplay replays h once and returns the wall time and the process CPU
// time it took (ok is false where the CPU time cannot be read).
func timeReplay(tb testing.TB, r worker.WorkflowReplayer, h *historypb.History) (wall, cpu time.Duration, ok bool) {
	c0, ok0 := cputime.Process()
	start := time.Now()
	replayOnce(tb, r, h)
	wall = time.Since(start)
	c1, ok1 := cputime.Process()
	return wall, c1 - c0, ok0 && ok1
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func loadHistory(tb testing.TB, name string) *historypb.History {
	tb.Helper()
	h, err := testsuite.ReadHistoryFile(filepath.Join(historiesDir, name))
	require.NoError(tb, err)
	return h
}

func newReplayer(tb testing.TB, opts testsuite.ReplayOptions) worker.WorkflowReplayer {
	tb.Helper()
	r, err := testsuite.NewReplayer(opts)
	require.NoError(tb, err)
	return r
}

func replayOnce(tb testing.TB, r worker.WorkflowReplayer, h *historypb.History) {
	if err := r.ReplayWorkflowHistoryWithOptions(quiet(), h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: "bench"},
	}); err != nil {
		tb.Fatal(err)
	}
}

// sizeProbe runs Workload's n calls, then continues as new so that the
// guard writes its state into the next run's header: the guard's own state,
// measured without reaching into it.
func sizeProbe(ctx workflow.Context, n int) error {
	if _, err := fixtures.Workload(ctx, n); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, "done")
}

var stateSizes sync.Map // int → carrySize

type carrySize struct{ payload, state int }

// guardStateSize runs n calls through the real guard in the test
// environment and returns the size of the payload it carries across
// continue-as-new (pinned options + detector state) and of the detector
// state in it.
func guardStateSize(tb testing.TB, n int) carrySize {
	tb.Helper()
	if v, ok := stateSizes.Load(n); ok {
		return v.(carrySize)
	}
	rep := testsuite.Run(tb, testsuite.RunOptions{
		Guard:    fixtures.WorkloadGuardOptions(),
		Register: fixtures.Register,
		Timeout:  2 * time.Minute,
	}, sizeProbe, n)
	var can *workflow.ContinueAsNewError
	require.True(tb, errors.As(rep.Err, &can), "want continue-as-new, got %v", rep.Err)
	p := can.Header.GetFields()["loopguard-carry"]
	require.NotNil(tb, p, "the guard carries its state in the loopguard-carry header")
	var carried struct {
		State json.RawMessage `json:"state"`
	}
	require.NoError(tb, converter.GetDefaultDataConverter().FromPayload(p, &carried))
	require.NotEmpty(tb, carried.State)
	s := carrySize{payload: p.Size(), state: len(carried.State)}
	stateSizes.Store(n, s)
	return s
}

// stateSize is the detector state's size after n calls of the workload,
// measured on detect.State directly with the workload's thresholds (fast
// enough for a benchmark metric).
func stateSize(tb testing.TB, n int) int {
	p := detect.DefaultPolicy()
	o := fixtures.WorkloadGuardOptions()
	p.MaxCallsPerNode, p.MaxTotalCalls, p.MaxCycleIterations = o.MaxCallsPerNode, o.MaxTotalCalls, o.MaxCycleIterations
	s := detect.NewState(p)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		node := "Think"
		if i%2 == 1 {
			node = "Act"
		}
		ref, trip := s.Begin(node, now)
		if trip != nil {
			tb.Fatalf("call %d tripped %s: %s", i, trip.Detector, trip.Message)
		}
		out := detect.Extract(p, node, []byte(fmt.Sprintf(`{"text":"%s step %d"}`, node, i)))
		now = now.Add(time.Second)
		s.End(ref, out, now)
	}
	return s.Size()
}

// TestGuardStateBounded shows that the guard's state does not grow with the
// number of calls: through the real guard (the state it carries across
// continue-as-new) after 1,000 and 10,000 calls, and on detect.State up to
// 100,000 calls.
func TestGuardStateBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 11,000 activities in the test environment")
	}
	s1k := guardStateSize(t, 1_000)
	s10k := guardStateSize(t, 10_000)
	t.Logf("guard state after 1,000 calls: %d bytes (carried payload %d bytes); after 10,000: %d bytes (payload %d bytes)", s1k.state, s1k.payload, s10k.state, s10k.payload)
	fmt.Printf("guard state after 1,000 calls: %d bytes (carried payload %d bytes); after 10,000: %d bytes (payload %d bytes)\n", s1k.state, s1k.payload, s10k.state, s10k.payload)
	// Bounded: within 5 %, or 256 bytes, which the counters' digits take
	// as the calls go from 1,000 to 100,000 (generation 4's state is
	// small enough for them to be more than 5 %).
	slack := func(n int) float64 { return max(0.05*float64(n), 256) }
	assert.InDelta(t, s1k.state, s10k.state, slack(s1k.state), "state after 10,000 calls ≈ after 1,000")
	assert.Less(t, s10k.state, 16<<10, "the state stays small")

	d1k, d10k, d100k := stateSize(t, 1_000), stateSize(t, 10_000), stateSize(t, 100_000)
	t.Logf("detect.State size: %d / %d / %d bytes after 1k / 10k / 100k calls", d1k, d10k, d100k)
	assert.InDelta(t, d1k, d10k, slack(d1k))
	assert.InDelta(t, d1k, d100k, slack(d1k))
}

func quiet() interface {
	Debug(string, ...any)
	Info(string, ...any)
	Warn(string, ...any)
	Error(string, ...any)
} {
	return quietLog{}
}

type quietLog struct{}

func (quietLog) Debug(string, ...any) {}
func (quietLog) Info(string, ...any)  {}
func (quietLog) Warn(string, ...any)  {}
func (quietLog) Error(string, ...any) {}

var _ = protocol.DefaultStatusQuery

// BenchmarkReadRichResult is the part of BenchmarkReplay1000Rich's
// overhead that reading results costs: detect.Extract on the workload's
// own 2 to 4 KB results, per result. Set against the
// unguarded replay's cost per call ("unguarded-ns/op" of
// BenchmarkReplay1000Rich/overhead divided by 1,000), it says what replay
// ratio a guard that reads every result can reach at best.
//
//	go test -run '^$' -bench BenchmarkReadRichResult -benchmem ./testsuite/
func BenchmarkReadRichResult(b *testing.B) {
	var results [][]byte
	for i := range 1000 {
		node := []string{"Think", "Act"}[i%2] // as the workload calls them
		data, err := json.Marshal(fixtures.Output{Text: fmt.Sprintf("%s step %d", node, i), Doc: fixtures.NewAgentDoc(node, i)})
		require.NoError(b, err)
		results = append(results, data)
	}
	p := detect.DefaultPolicy()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		detect.Extract(p, "Think", results[i%len(results)])
		i++
	}
}
