package testsuite_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// TestGuardReplayCostPerCall pins what the guard adds to each guarded call
// on replay, in allocations and bytes: the recorded 1,000-call Workload
// replayed with the guard, minus the same workload replayed without it,
// divided by the calls. Its results are small, so detect.Extract allocates
// nothing. Nearly all that is left is the SDK's Future.Get of the result
// (5.0 allocations and 78 bytes per call, measured by leaving Get out): the
// receive on the future's channel, the variadic slice and the converter's
// context wrapper, which the guard cannot avoid while it reads results
// through the workflow's own data converter. The rest (0.2 and 19 bytes per
// call) is the guard's per-execution setup spread over the calls.
// Allocation counts do not depend on the machine's speed or load, unlike
// the benchmark's ratio.
func TestGuardReplayCostPerCall(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	const calls = 1000
	guarded := loadHistory(t, "workload-1000-guarded.json")
	unguarded := loadHistory(t, "workload-1000-unguarded.json")
	gRep := newReplayer(t, testsuite.ReplayOptions{Guard: fixtures.WorkloadGuardOptions(), Register: fixtures.RegisterWorkflows})
	uRep := newReplayer(t, testsuite.ReplayOptions{Unguarded: true, Register: fixtures.RegisterWorkflows})

	g := replayCost(t, gRep, guarded)
	u := replayCost(t, uRep, unguarded)
	allocs := float64(int64(g.allocs)-int64(u.allocs)) / calls
	bytes := float64(int64(g.bytes)-int64(u.bytes)) / calls
	t.Logf("the guard adds %.2f allocations and %.0f bytes per call on replay", allocs, bytes)
	// Before the guard lent its RawValue and kept the ResultHook's pointer
	// off the hot path: 7.2 allocations and 250 bytes. Now 5.2 and 98.
	assert.LessOrEqual(t, allocs, 5.5, "allocations the guard adds per call")
	assert.LessOrEqual(t, bytes, 128.0, "bytes the guard adds per call")
}

type cost struct{ allocs, bytes uint64 }

// replayCost is what one replay of h allocates: the least of a few
// replays after a warm-up, so that a background goroutine of an earlier
// test cannot inflate it.
func replayCost(t *testing.T, r worker.WorkflowReplayer, h *historypb.History) cost {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	replayOnce(t, r, h) // warm-up: type caches, pools
	best := cost{allocs: ^uint64(0), bytes: ^uint64(0)}
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		replayOnce(t, r, h)
		runtime.ReadMemStats(&after)
		best.allocs = min(best.allocs, after.Mallocs-before.Mallocs)
		best.bytes = min(best.bytes, after.TotalAlloc-before.TotalAlloc)
	}
	return best
}
