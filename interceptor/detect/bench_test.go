package detect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkBeginEnd measures one guarded call (Begin + End) on the hot
// path: an agent loop over four nodes with fresh outputs, every detector
// enabled, no trip. Run with -benchmem: it should not allocate.
func BenchmarkBeginEnd(b *testing.B) {
	p := DefaultPolicy()
	p.MaxTotalCalls, p.MaxCallsPerNode, p.MaxCycleIterations = 0, 0, 0
	p.MaxCost, p.MaxCycleCost, p.MaxCycleRuntime = 1e18, 1e18, 1e6*time.Hour
	s := NewState(p)
	nodes := []string{"plan", "code", "test", "review"}
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ref, trip := s.Begin(nodes[i%len(nodes)], now)
		if trip != nil {
			b.Fatalf("unexpected trip: %s", trip.Message)
		}
		now = now.Add(time.Second)
		s.End(ref, Observation{Output: uint64(i)*0x9e3779b97f4a7c15 | 1, Cost: 0.001}, now)
	}
}

// BenchmarkBeginEndDefault runs a generated trace with the default policy
// and every trip resumed: the trip path (messages, evidence) included.
func BenchmarkBeginEndDefault(b *testing.B) {
	ops := genOps(1, 10000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		runSim(DefaultPolicy(), ops, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/call")
}

// TestSizeBounded: the state does not grow with the number of calls. With a
// few nodes it is the same after 1,000 and 10,000 calls; with ever new node
// names it grows only until MaxNodes nodes and their edges are all known.
func TestSizeBounded(t *testing.T) {
	tests := []struct {
		name      string
		names     int
		wantDelta float64 // relative
		wantMax   int
	}{
		{name: "few nodes", wantDelta: 0.05, wantMax: 8 << 10},
		{name: "many node names", names: 500, wantDelta: 1, wantMax: 160 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := genOps(3, 10000, tt.names)
			_, s1 := runSim(simPolicy(), firstCalls(ops, 1000), nil)
			_, s10 := runSim(simPolicy(), ops, nil)
			size1, size10 := s1.Size(), s10.Size()
			t.Logf("state size after 1,000 calls: %d bytes; after 10,000 calls: %d bytes", size1, size10)
			assert.InDelta(t, size1, size10, float64(size1)*tt.wantDelta, "state must not grow with the calls")
			assert.Less(t, size10, tt.wantMax)
			require.LessOrEqual(t, len(s10.nodes), simPolicy().MaxNodes+1)
		})
	}
}

// firstCalls cuts ops after n Begins (their Ends may be cut too).
func firstCalls(ops []simOp, n int) []simOp {
	calls := 0
	for i, op := range ops {
		if op.begin {
			if calls++; calls > n {
				return ops[:i]
			}
		}
	}
	return ops
}
