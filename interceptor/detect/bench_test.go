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
	p := legacyPolicy()
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

// BenchmarkTrace runs a generated trace of 10,000 calls (fan-out, failures,
// small output alphabets) with the default policy and every trip resumed,
// so the trip path (messages, evidence) is included: a trip every ~20 calls.
func BenchmarkTrace(b *testing.B) {
	ops := genOps(1, 10000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		simulate(legacyPolicy(), ops, nil, false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/call")
}

// BenchmarkExtract: reading a 200-byte JSON result with rules (parse,
// delete the ignored fields, re-encode, hash) and without (hash only).
func BenchmarkExtract(b *testing.B) {
	data := []byte(`{"passed":false,"failing":["auth.test.ts::login","auth.test.ts::logout"],"durationMs":5120,"runId":"r-101","usage":{"cost":0.012,"tokens":1830}}`)
	p := legacyPolicy()
	p.Nodes = map[string]NodePolicy{"verifier": {Rules: Rules{IgnoreFields: []string{"durationMs", "runId"}, MetricField: "failing", CostField: "usage.cost"}}}
	b.Run("rules", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			Extract(p, "verifier", data)
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			Extract(p, "coder", data)
		}
	})
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

// TestBeginEndDoesNotAllocate guards the hot path: once a workflow's nodes
// and edges are known, Begin and End without a trip allocate nothing.
func TestBeginEndDoesNotAllocate(t *testing.T) {
	p := legacyPolicy()
	p.MaxTotalCalls, p.MaxCallsPerNode, p.MaxCycleIterations = 0, 0, 0
	s := NewState(p)
	nodes := []string{"plan", "code", "test", "review"}
	now := t0
	i := 0
	call := func() {
		ref, trip := s.Begin(nodes[i%len(nodes)], now)
		require.Nil(t, trip)
		now = now.Add(time.Second)
		s.End(ref, Observation{Output: uint64(i)*0x9e3779b97f4a7c15 | 1, HasMetric: true, Metric: float64(-i)}, now)
		i++
	}
	for range 20 { // learn the nodes and edges
		call()
	}
	assert.Zero(t, testing.AllocsPerRun(1000, call))
}
