package detect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBudgets(t *testing.T) {
	noCycles := func(p *Policy) { p.MaxCycleIterations = 0 }
	runCases(t, []detectorCase{
		{
			name:   "node calls: 11th step refused",
			policy: ptr(policyWith(noCycles)),
			give:   rep(11, "A", "B"), wantAt: 20, wantDet: DetectorNodeCalls, wantReason: ReasonBudgetExceeded,
		},
		{
			name:   "node calls: per-node override (seed 002 test max_visits 5)",
			policy: ptr(policyWith(func(p *Policy) { p.Nodes = map[string]NodePolicy{"test": {MaxCalls: 5}} })),
			give:   seq(list("implement"), rep(6, "test", "fix")), wantAt: 11, wantDet: DetectorNodeCalls,
		},
		{
			name:   "node runtime",
			policy: ptr(policyWith(func(p *Policy) { p.MaxNodeRuntime = 10 * time.Second })),
			give:   list("A;dt=4", "B", "A;dt=4", "B", "A;dt=4", "B", "A"), wantAt: 6, wantDet: DetectorNodeRuntime,
		},
		{
			name:   "node runtime: per-node override",
			policy: ptr(policyWith(func(p *Policy) { p.Nodes = map[string]NodePolicy{"A": {MaxRuntime: 5 * time.Second}} })),
			give:   list("A;dt=4", "B;dt=100", "A;dt=4", "B", "A"), wantAt: 4, wantDet: DetectorNodeRuntime,
		},
		{
			name:   "total calls",
			policy: ptr(policyWith(func(p *Policy) { p.MaxTotalCalls = 5; noCycles(p) })),
			give:   list("A", "B", "C", "D", "E", "F"), wantAt: 5, wantDet: DetectorTotalCalls,
		},
		{
			name:   "total cost: over the limit before the call",
			policy: ptr(policyWith(func(p *Policy) { p.MaxCost = 1 })),
			give:   list("A;c=0.4", "B;c=0.4", "C;c=0.4", "D"), wantAt: 3, wantDet: DetectorTotalCost,
		},
		{
			name:   "total cost: at the limit is not over",
			policy: ptr(policyWith(func(p *Policy) { p.MaxCost = 1 })),
			give:   list("A;c=0.5", "B;c=0.5", "C"), wantAt: -1,
		},
		{
			name: "cycle iterations: 9th coder refused",
			give: rep(9, "coder", "verify"), wantAt: 16, wantDet: DetectorCycleIterations,
		},
		{
			name:   "cycle iterations: self-loop",
			policy: ptr(policyWith(func(p *Policy) { p.MaxCycleIterations = 3 })),
			give:   list("test", "test", "test", "test"), wantAt: 3, wantDet: DetectorCycleIterations,
		},
		{
			name:   "cycle runtime",
			policy: ptr(policyWith(func(p *Policy) { p.MaxCycleRuntime = 10 * time.Second })),
			give:   list("C;dt=3", "V;dt=3", "C;dt=3", "V;dt=3", "C;dt=3"), wantAt: 4, wantDet: DetectorCycleRuntime,
		},
		{
			name:   "cycle cost: counted from the cycle's formation",
			policy: ptr(policyWith(func(p *Policy) { p.MaxCycleCost = 1 })),
			give:   list("C;c=0.3", "V;c=0.3", "C;c=0.3", "V;c=0.3", "C;c=0.3", "V;c=0.3", "C"), wantAt: 6, wantDet: DetectorCycleCost,
		},
		{
			name:   "edge without progress (seed 003 planner→researcher)",
			policy: ptr(policyWith(noCycles)),
			give:   seq(list("P", "R=x", "P", "R=y"), list("P", "R=y", "P", "R=x", "P", "R=x", "P", "R=y", "P", "R=y", "P", "R=x")),
			wantAt: 15, wantDet: DetectorEdgeWithoutProgress, wantReason: ReasonStalled,
		},
		{
			name:   "edge counter reset by progress",
			policy: ptr(policyWith(noCycles)),
			give:   seq(list("P", "R=x", "P", "R=y"), list("P", "R=y", "P", "R=x", "P", "R=z", "P", "R=y", "P", "R=y", "P", "R=x")),
			wantAt: -1,
		},
	})
}

func TestTripMessages(t *testing.T) {
	_, trip := run(DefaultPolicy(), rep(9, "coder", "verify")...)
	require.NotNil(t, trip)
	assert.Equal(t, "cycle coder→verify reached 8/8 iterations", trip.Message)
	assert.Equal(t, 8, trip.Iteration)
	assert.Equal(t, 8, trip.MaxIterations)
	assert.Equal(t, "coder", trip.Node)
	assert.NotEmpty(t, trip.CycleID)
	assert.Len(t, trip.Evidence.OutputHashes, 8)
	assert.Len(t, trip.Evidence.OutputHashes[0], 16)
	assert.Len(t, trip.Evidence.Transitions, 8)
	assert.Equal(t, t0.Add(16*time.Second), trip.At)

	_, trip = run(DefaultPolicy(), "verify=same", "verify=same", "verify=same", "next")
	require.NotNil(t, trip)
	assert.Equal(t, "verify repeated with the same results 3 times in a row", trip.Message)

	p := policyWith(func(p *Policy) { p.MaxCycleIterations = 0 })
	_, trip = run(p, "plan", "research=x", "plan", "research=y", "plan", "research=y", "plan", "research=x",
		"plan", "research=x", "plan", "research=y", "plan", "research=y", "plan", "research=x")
	require.NotNil(t, trip)
	assert.Equal(t, DetectorEdgeWithoutProgress, trip.Detector)
	assert.Equal(t, "edge plan→research taken 6 times without progress at research", trip.Message)
}
