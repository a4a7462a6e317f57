package detect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
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

// BenchmarkTrace runs a generated trace of 10,000 calls (fan-out, failures,
// small output alphabets) with the default policy and every trip resumed,
// so the trip path (messages, evidence) is included: a trip every ~20 calls.
func BenchmarkTrace(b *testing.B) {
	ops := genOps(1, 10000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		simulate(DefaultPolicy(), ops, nil, false)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/call")
}

// BenchmarkExtract: reading a 200-byte JSON result with rules (parse,
// delete the ignored fields, re-encode, hash) and without (hash only).
func BenchmarkExtract(b *testing.B) {
	data := []byte(`{"passed":false,"failing":["auth.test.ts::login","auth.test.ts::logout"],"durationMs":5120,"runId":"r-101","usage":{"cost":0.012,"tokens":1830}}`)
	p := DefaultPolicy()
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
		// Each node's last fields (up to 16, none after a failed step) and
		// the last 96 steps in half hashes: the size moves with the last
		// steps, bounded.
		{name: "few nodes", wantDelta: 0.5, wantMax: 16 << 10},
		{name: "many node names", names: 500, wantDelta: 1, wantMax: 320 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := genOps(3, 10000, tt.names)
			p := simPolicy()
			_, s1 := runSim(p, firstCalls(ops, 1000), nil)
			_, s10 := runSim(p, ops, nil)
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
	p := DefaultPolicy()
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

// realisticResult builds an agent tool result of about size bytes: ids,
// timestamps, a duration, token usage, a list of failing tests and the
// tool's output text, as a coding agent's run_tests tool returns them.
func realisticResult(size, i int) []byte {
	var out strings.Builder
	for line := 0; out.Len() < size-600; line++ {
		fmt.Fprintf(&out, "tests/test_mod_%03d.py::test_case_%d FAILED - AssertionError: expected %d, got %d (line %d)\n", line%97, line, line*3, line*3+1, 40+line%60)
	}
	v := map[string]any{
		"id":         fmt.Sprintf("call_%08x-%04x-4%03x-a%03x-%012x", i*7919, i%65536, i%4096, i%4096, i*104729),
		"created":    1700000000 + i,
		"created_at": fmt.Sprintf("2026-11-23T12:%02d:%02d.%03dZ", i%60, i%60, i%1000),
		"status":     "failed",
		"summary":    fmt.Sprintf("3 failed, 41 passed in %d.%02ds", 2+i%5, i%100),
		"failing":    []string{"tests/test_auth.py::test_login", "tests/test_auth.py::test_logout", "tests/test_api.py::test_orders"},
		"usage":      map[string]any{"prompt_tokens": 1200 + i, "completion_tokens": 300 + i%50, "cost": 0.0123},
		"arguments":  `{"path": "tests", "k": "auth or api", "verbose": true}`,
		"stdout":     out.String(),
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkDetect measures detection per call on realistic results:
// Extract (reading the result) plus Begin and End, in a two-node agent
// loop. The bytes rows run the same loop with the payload hashed as bytes
// (FNV-64a), as a yardstick of the machine: the ratio between the reader
// row and the bytes row of the same size, in the same run, is the cost
// of reading results as a person would.
//
//	go test -run '^$' -bench BenchmarkDetect -benchmem ./interceptor/detect/
func BenchmarkDetect(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKB/reader", size>>10), func(b *testing.B) { benchDetect(b, size, nil) })
		b.Run(fmt.Sprintf("%dKB/bytes", size>>10), func(b *testing.B) {
			benchDetect(b, size, func(data []byte) Observation {
				return Observation{Output: nonZero(fnvBytes(fnvOffset, bytes.TrimSpace(data)))}
			})
		})
		b.Run(fmt.Sprintf("%dKB/token-scan", size>>10), func(b *testing.B) {
			benchDetect(b, size, func(data []byte) Observation {
				return Observation{Output: nonZero(tokenScan(data))}
			})
		})
	}
}

// tokenScan is the floor of any reader that tells tokens apart, the
// yardstick BenchmarkDetect's token-scan rows measure: it finds each
// token's end eight bytes at a time and hashes the token (as the reader
// does, with nothing recognised, masked or decoded), chaining the tokens'
// hashes. The reader row divided by the token-scan row of the same size,
// in the same run, is what its rules cost beyond telling tokens apart.
func tokenScan(b []byte) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(b); {
		if byteClass[b[i]]&(clSpace|clEsc) != 0 {
			i++
			continue
		}
		j := wordEnd(b, i)
		h = (h ^ tokHash(b[i:j])) * fnvPrime
		i = j
	}
	return h
}

// wordEnd returns the end of the run of bytes from j that are neither
// whitespace nor a backslash, eight bytes at a time.
func wordEnd(s []byte, j int) int {
	for j+8 <= len(s) {
		x := binary.LittleEndian.Uint64(s[j:])
		stop := stopLanes(x)
		if stop == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(stop) / 8
		if byteClass[s[j]]&(clSpace|clEsc) != 0 {
			return j
		}
		j++ // a control byte that is not whitespace: content
	}
	for ; j < len(s); j++ {
		if byteClass[s[j]]&(clSpace|clEsc) != 0 {
			break
		}
	}
	return j
}

// benchDetect runs the loop with Extract's reading of results, or with
// read when it is not nil.
func benchDetect(b *testing.B, size int, read func([]byte) Observation) {
	p := DefaultPolicy()
	p.MaxTotalCalls, p.MaxCallsPerNode, p.MaxCycleIterations, p.MaxEdgeWithoutProgress = 0, 0, 0, 0
	// Sixteen distinct results: more than a window, so no detector
	// trips and every call takes the hot path.
	var results [][]byte
	for k := range 16 {
		results = append(results, realisticResult(size, k))
	}
	b.SetBytes(int64(len(results[0])))
	s := NewState(p)
	nodes := []string{"agent", "run_tests"}
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := cpuTime()
	for i := range b.N {
		node := nodes[i%2]
		ref, trip := s.Begin(node, now)
		if trip != nil {
			s.Resume(trip, Extension{})
			continue
		}
		now = now.Add(time.Second)
		data := results[(i/2)%len(results)]
		if read != nil {
			s.End(ref, read(data), now)
			continue
		}
		s.End(ref, Extract(p, node, data), now)
	}
	if cpu1, ok := cpuTime(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkExtractPeers is the canonical reading on data nobody here
// wrote: every call output of the traces ported from the peers' own test
// suites and real SWE-agent runs (testdata/corpus/peers), read in turn.
// It reports the time per KB of output, so that it compares with
// BenchmarkDetect (-benchmem for the allocations).
//
//	go test -run '^$' -bench BenchmarkExtractPeers -benchmem ./interceptor/detect/
func BenchmarkExtractPeers(b *testing.B) {
	outputs, size := peerOutputs(b)
	{
		b.Run("reader", func(b *testing.B) {
			p := DefaultPolicy()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, cpuOK := cpuTime()
			for range b.N {
				for _, o := range outputs {
					Extract(p, "node", o)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(size)/1024), "ns/KB")
			if cpu1, ok := cpuTime(); ok && cpuOK {
				// Steadier than wall time on a shared machine.
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/(float64(size)/1024), "cpu-ns/KB")
			}
			b.ReportMetric(float64(len(outputs)), "outputs")
		})
	}
}

// peerOutputs are the call outputs of the traces ported from the peers,
// and their size in bytes.
func peerOutputs(b *testing.B) (outputs [][]byte, size int) {
	for _, tr := range loadCorpus(b) {
		if tr.Source != "openhands" && tr.Source != "cline" && tr.Source != "swe-agent" {
			continue
		}
		for _, c := range tr.Calls {
			if len(c.Output) > 0 {
				outputs = append(outputs, c.Output)
				size += len(c.Output)
			}
		}
	}
	require.NotEmpty(b, outputs)
	return outputs, size
}

// BenchmarkMaskToken4 times generation 4's masking of the two kinds of
// token with a digit in BenchmarkDetect's test log: a pytest id (39 in a
// 4 KB result) and a short number (117), the figures of docs/detection.md's
// arithmetic of the reading target.
//
//	go test -run '^$' -bench BenchmarkMaskToken4 -count 3 ./interceptor/detect/
func BenchmarkMaskToken4(b *testing.B) {
	for _, tok := range []string{"tests/test_mod_003.py::test_case_3", "10,"} {
		b.Run(tok, func(b *testing.B) {
			var bufs maskBufs
			w := []byte(tok)
			for b.Loop() {
				maskToken4(w, &bufs)
			}
		})
	}
}
