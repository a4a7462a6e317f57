package detect

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFanOut(t *testing.T) {
	t.Run("parallel calls are one step and never trip", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		for turn := range 4 {
			out := fmt.Sprintf("search=turn%d", turn)
			require.Nil(t, d.do("plan"))
			require.Nil(t, d.par(out, out, out, out, out))
		}
		require.Nil(t, d.do("plan"))
		assert.Nil(t, d.s.Pending())
		v := d.s.View()
		require.Len(t, v.Nodes, 2)
		assert.Equal(t, NodeView{Node: "search", Calls: 20, Steps: 4, MaxCalls: 10, Runtime: 4 * time.Second}, v.Nodes[1])
		assert.Equal(t, 25, v.TotalCalls)
		assert.Equal(t, 9, v.TotalSteps)
	})
	t.Run("identical fan-out results are not a stall", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		require.Nil(t, d.par("fetch=same", "fetch=same", "fetch=same", "fetch=same"))
		require.Nil(t, d.do("next"))
	})
	t.Run("fan-out counts every call against MaxTotalCalls", func(t *testing.T) {
		d := newDriver(policyWith(func(p *Policy) { p.MaxTotalCalls = 5 }))
		require.Nil(t, d.par("fetch", "fetch", "fetch", "fetch"))
		require.Nil(t, d.do("next"))
		assert.Equal(t, DetectorTotalCalls, detectorOf(d.do("again")))
	})
	t.Run("a fan-out step fails only if every call failed", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		for range 3 {
			require.Nil(t, d.par("fetch!e", "fetch=ok"))
		}
		// fetch=ok three times: that is identical output, not repeated error.
		assert.Equal(t, DetectorIdenticalOutput, detectorOf(d.s.Pending()))
	})
	t.Run("outputs combine order-independently", func(t *testing.T) {
		a, b := newDriver(DefaultPolicy()), newDriver(DefaultPolicy())
		require.Nil(t, a.par("f=1", "f=2"))
		require.Nil(t, b.par("f=2", "f=1"))
		assert.Equal(t, a.s.nodes[0].hist.at(0).out, b.s.nodes[0].hist.at(0).out)
	})
	t.Run("joined calls end in any order", func(t *testing.T) {
		s := NewState(DefaultPolicy())
		r1, _ := s.Begin("f", t0)
		r2, _ := s.Begin("f", t0)
		assert.Equal(t, r1, r2)
		s.End(r2, Observation{Output: 2}, t0.Add(time.Second))
		assert.Equal(t, 1, s.View().Nodes[0].InFlight)
		s.End(r1, Observation{Output: 1, Cost: 0.5}, t0.Add(3*time.Second))
		v := s.View()
		assert.Equal(t, 0, v.Nodes[0].InFlight)
		assert.Equal(t, 3*time.Second, v.Nodes[0].Runtime)
		assert.Equal(t, 0.5, v.TotalCost)
	})
}

func TestEndIgnoresBadRefs(t *testing.T) {
	s := NewState(DefaultPolicy())
	ref, trip := s.Begin("A", t0)
	require.Nil(t, trip)
	s.End(StepRef{Node: -1}, Observation{}, t0)
	s.End(StepRef{Node: 99, Seq: 1}, Observation{}, t0)
	s.End(StepRef{Node: ref.Node, Seq: 42}, Observation{}, t0)
	s.End(ref, Observation{Output: 1}, t0)
	s.End(ref, Observation{Output: 1}, t0) // duplicate
	s.End(StepRef{}, Observation{}, t0)
	v := s.View()
	assert.Equal(t, 1, v.TotalSteps)
	assert.Equal(t, 0, v.Nodes[0].InFlight)
}

func TestResume(t *testing.T) {
	t.Run("reset: cycle iteration back to 1", func(t *testing.T) {
		d := newDriver(policyWith(func(p *Policy) { p.MaxCallsPerNode = 0 }))
		at, trip := d.run(rep(9, "coder", "verify")...)
		require.Equal(t, 16, at)
		d.s.Resume(trip, Extension{})
		require.Nil(t, d.do("coder"))
		assert.Equal(t, 2, d.s.View().Cycles[0].Iteration)
		at, trip = d.run(seq(list("verify"), rep(7, "coder", "verify"))...)
		assert.Equal(t, 13, at)
		assert.Equal(t, DetectorCycleIterations, detectorOf(trip))
	})
	t.Run("extend: counter kept, limit raised", func(t *testing.T) {
		d := newDriver(policyWith(func(p *Policy) { p.MaxCallsPerNode = 0 }))
		_, trip := d.run(rep(9, "coder", "verify")...)
		d.s.Resume(trip, Extension{MaxCycleIterations: 2})
		require.Nil(t, d.do("coder"))
		c := d.s.View().Cycles[0]
		assert.Equal(t, 9, c.Iteration)
		assert.Equal(t, 10, c.MaxIterations)
		at, trip := d.run("verify", "coder", "verify", "coder")
		assert.Equal(t, 3, at)
		assert.Equal(t, DetectorCycleIterations, detectorOf(trip))
		assert.Equal(t, "cycle coder→verify reached 10/10 iterations", trip.Message)
	})
	t.Run("stall: pending cleared, history cleared", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		at, trip := d.run("A=x", "A=x", "A=x", "B")
		require.Equal(t, 3, at)
		assert.Same(t, trip, d.s.Pending())
		d.s.Resume(trip, Extension{})
		assert.Nil(t, d.s.Pending())
		require.Nil(t, d.do("B"))
		at, trip = d.run("A=x", "B=y", "A=x", "B=y", "A=x", "B=y", "A=x", "B=y")
		assert.Equal(t, 5, at)
		assert.Equal(t, DetectorIdenticalOutput, detectorOf(trip))
	})
	t.Run("a JSON copy of the pending trip clears it", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		_, trip := d.run("A!e", "A!e", "A!e")
		cp := *trip
		cp.At = cp.At.In(time.FixedZone("x", 3600))
		d.s.Resume(&cp, Extension{})
		assert.Nil(t, d.s.Pending())
	})
	t.Run("node calls: reset and extend", func(t *testing.T) {
		p := policyWith(func(p *Policy) { p.MaxCycleIterations = 0; p.MaxCallsPerNode = 2 })
		d := newDriver(p)
		at, trip := d.run("A", "B", "A", "B", "A")
		require.Equal(t, 4, at)
		d.s.Resume(trip, Extension{MaxCallsPerNode: 1})
		at, trip = d.run("A", "B", "A")
		require.Equal(t, 1, at) // B has its own limit of 2
		assert.Equal(t, "B", trip.Node)
		d.s.Resume(trip, Extension{})
		at, _ = d.run("B", "A", "B", "A")
		assert.Equal(t, 1, at) // A: 3/3 after the extension
	})
	t.Run("edge without progress: reset", func(t *testing.T) {
		p := policyWith(func(p *Policy) { p.MaxCycleIterations = 0; p.MaxEdgeWithoutProgress = 2 })
		d := newDriver(p)
		at, trip := d.run("P", "R=x", "P", "R=y", "P", "R=y", "P", "R=x", "P", "R=x")
		require.Equal(t, 9, at, "%+v", trip)
		require.Equal(t, DetectorEdgeWithoutProgress, trip.Detector)
		d.s.Resume(trip, Extension{})
		require.Nil(t, d.do("R=y"))
	})
	t.Run("total calls: reset", func(t *testing.T) {
		d := newDriver(policyWith(func(p *Policy) { p.MaxTotalCalls = 2 }))
		at, trip := d.run("A", "B", "C")
		require.Equal(t, 2, at)
		d.s.Resume(trip, Extension{})
		at, _ = d.run("C", "D", "E")
		assert.Equal(t, 2, at)
	})
	t.Run("observe mode: resume then the same Begin passes", func(t *testing.T) {
		for _, p := range []Policy{
			policyWith(func(p *Policy) { p.MaxCost = 0.1 }),
			policyWith(func(p *Policy) { p.MaxCycleCost = 0.1 }),
			policyWith(func(p *Policy) { p.MaxCycleRuntime = time.Second }),
			policyWith(func(p *Policy) { p.MaxNodeRuntime = time.Second }),
		} {
			d := newDriver(p)
			for k := range 30 {
				sp := []string{"C;c=0.2;dt=2", "V;c=0.2;dt=2"}[k%2]
				// Each Resume clears one tripped rule; a few rules may
				// be over at once.
				trip := d.do(sp)
				for round := 0; trip != nil; round++ {
					require.Less(t, round, 4, "%+v", trip)
					d.s.Resume(trip, Extension{})
					trip = d.do(sp)
				}
			}
		}
	})
	t.Run("transition oscillation: window cleared", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		_, trip := d.run("I=a", "T=f1", "F=y1", "I=b", "T=f2", "F=y2", "I=a", "T=f1", "F=y1", "I=a", "T=f1", "F=y1", "I")
		require.Equal(t, DetectorTransitionOscillation, detectorOf(trip))
		d.s.Resume(trip, Extension{})
		assert.Empty(t, d.s.View().Transitions)
		require.Nil(t, d.do("A=b"))
	})
	t.Run("nil and foreign trips are harmless", func(t *testing.T) {
		d := newDriver(DefaultPolicy())
		_, trip := d.run("A=x", "A=x", "A=x")
		require.NotNil(t, trip)
		d.s.Resume(nil, Extension{MaxTotalCalls: 5, MaxCycleIterations: 1})
		d.s.Resume(&Trip{Detector: DetectorCycleIterations, Node: "nope", CycleID: "cyc-000000000000"}, Extension{})
		d.s.Resume(&Trip{Detector: "bogus"}, Extension{MaxCost: -1})
		assert.Same(t, trip, d.s.Pending())
		assert.Equal(t, 1005, d.s.totalLimit())
	})
}

func TestStop(t *testing.T) {
	p := policyWith(func(p *Policy) { p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}} })
	d := newDriver(p)
	require.Nil(t, d.do("A"))
	d.s.Stop("alice asked to stop: wrong branch", d.now, false)
	trip := d.s.Pending()
	require.NotNil(t, trip)
	assert.Equal(t, ReasonUserStop, trip.Reason)
	assert.Equal(t, DetectorUserStop, trip.Detector)
	assert.Equal(t, "alice asked to stop: wrong branch", trip.Message)
	assert.Same(t, trip, d.do("poll"), "a human's stop holds exempt nodes too")
	assert.Same(t, trip, d.do("B"))
	assert.Same(t, trip, d.do("B"), "pending until resumed")
	d.s.Stop("again", d.now, false)
	assert.Same(t, trip, d.s.Pending(), "a pending trip is not replaced")
	d.s.Resume(trip, Extension{})
	assert.Nil(t, d.s.Pending())
	require.Nil(t, d.do("B"))
}

func TestExempt(t *testing.T) {
	p := policyWith(func(p *Policy) { p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}} })
	d := newDriver(p)
	require.Nil(t, d.do("A"))
	for range 50 {
		require.Nil(t, d.do("poll=pending"))
	}
	require.Nil(t, d.do("B"))
	v := d.s.View()
	assert.Equal(t, []string{"A->B"}, v.Transitions)
	assert.Equal(t, NodeView{Node: "poll", Calls: 50, Exempt: true}, v.Nodes[1])
	assert.Equal(t, 52, v.TotalCalls)
	assert.Equal(t, 2, v.TotalSteps)
	assert.Empty(t, v.Cycles)

	d = newDriver(policyWith(func(p *Policy) {
		p.MaxTotalCalls = 3
		p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}}
	}))
	at, trip := d.run("poll", "poll", "poll", "poll")
	assert.Equal(t, 3, at)
	assert.Equal(t, DetectorTotalCalls, detectorOf(trip))
}

func TestOverflowNodes(t *testing.T) {
	p := policyWith(func(p *Policy) {
		p.MaxNodes = 3
		p.MaxCallsPerNode = 0
		p.MaxCycleIterations = 0
		p.MaxTotalCalls = 0
		p.Nodes = map[string]NodePolicy{"named": {}}
	})
	d := newDriver(p)
	for k := range 200 {
		require.Nil(t, d.do(fmt.Sprintf("tool-%d", k)))
	}
	require.Nil(t, d.do("named"))
	v := d.s.View()
	var names []string
	for _, n := range v.Nodes {
		names = append(names, n.Node)
	}
	assert.Equal(t, []string{"tool-0", "tool-1", "tool-2", OverflowNode, "named"}, names)
	assert.Equal(t, 197, v.Nodes[3].Steps)
	assert.Len(t, d.s.nodes, 5)
}

func TestViewEmpty(t *testing.T) {
	v := NewState(DefaultPolicy()).View()
	assert.NotNil(t, v.Nodes)
	assert.NotNil(t, v.Cycles)
	assert.Zero(t, v.TotalCalls)
}

func TestOddPoliciesDoNotPanic(t *testing.T) {
	for _, p := range []Policy{
		{},
		{Window: -5, MaxNodes: -1, OscillationPeriods: 1, MaxOscillationPeriod: 1, RepeatThreshold: 1},
		{Window: 1 << 30, RepeatThreshold: 1 << 20, OscillationPeriods: 1 << 20, MaxOscillationPeriod: 1 << 20},
		{MaxCost: -1, MaxCycleCost: -3, MaxNodeRuntime: -time.Second, Graph: []Edge{{"A", "B"}, {"B", "A"}, {"", "x"}, {"A", "A"}}},
	} {
		d := newDriver(p)
		for k := range 100 {
			if trip := d.do([]string{"A=x", "B=y", "A!e", "C;m=3"}[k%4]); trip != nil {
				d.s.Resume(trip, Extension{})
			}
		}
		_ = d.s.View()
		assert.Less(t, d.s.Size(), 1<<20)
	}
}

// TestStateSize: after 10,000 calls of a two-node agent loop whose
// every result is new (the replay benchmark's workload), the state is at
// most 3 KB with periods up to 48 steps (issue 23).
func TestStateSize(t *testing.T) {
	size := func() int {
		p := DefaultPolicy()
		p.MaxCallsPerNode, p.MaxTotalCalls, p.MaxCycleIterations = 100000, 200000, 100000
		s := NewState(p)
		now := t0
		for i := range 10000 {
			node := []string{"Think", "Act"}[i%2]
			ref, trip := s.Begin(node, now)
			require.Nil(t, trip)
			now = now.Add(time.Second)
			s.End(ref, Extract(p, node, []byte(fmt.Sprintf(`{"text":"%s step %d"}`, node, i))), now)
		}
		return s.Size()
	}
	n := size()
	t.Logf("state after 10,000 calls: %d bytes", n)
	assert.LessOrEqual(t, n, 3000)
	assert.Equal(t, 2*MaxLoopPeriod, seqCap, "periods up to 48 steps are kept")
}
