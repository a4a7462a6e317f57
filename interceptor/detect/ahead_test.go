package detect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAhead checks Ahead against what Begin then does at the next call:
// a predicted trip comes, with the same detector; where Ahead predicts
// none, none comes unless the call itself decides it (a cycle's budget).
func TestAhead(t *testing.T) {
	noCycles := func(p *Policy) { p.MaxCycleIterations = 0 }
	tests := []struct {
		name      string
		policy    func(p *Policy)
		give      []string
		stop      bool // a human's stop before the next call
		next      string
		wantAhead Detector // "" for none predicted
		wantBegin Detector // "" for the call admitted
	}{
		{name: "identical output: the next call of the node", give: list("A=x", "A=x", "A=x"), next: "A", wantAhead: DetectorIdenticalOutput, wantBegin: DetectorIdenticalOutput},
		{name: "identical output: the next call of any node", give: list("A=x", "B=y", "A=x", "B=y", "A=x"), next: "B", wantAhead: DetectorIdenticalOutput, wantBegin: DetectorIdenticalOutput},
		{name: "two identical outputs: none yet", give: list("A=x", "A=x"), next: "A"},
		{name: "repeated error", give: list("A!e", "A!e", "A!e"), next: "C", wantAhead: DetectorRepeatedError, wantBegin: DetectorRepeatedError},
		{name: "errors that differ", give: list("A!e", "A!f", "A!e"), next: "A"},
		{name: "node calls: the node's next step", policy: func(p *Policy) { p.Nodes = map[string]NodePolicy{"A": {MaxCalls: 2}}; noCycles(p) }, give: list("A", "B", "A", "B"), next: "A", wantAhead: DetectorNodeCalls, wantBegin: DetectorNodeCalls},
		{name: "node calls: another node goes on", policy: func(p *Policy) { p.Nodes = map[string]NodePolicy{"A": {MaxCalls: 2}}; noCycles(p) }, give: list("A", "B", "A", "B"), next: "C"},
		{name: "node runtime", policy: func(p *Policy) { p.MaxNodeRuntime = 5 * time.Second; noCycles(p) }, give: list("A;dt=6", "B"), next: "A", wantAhead: DetectorNodeRuntime, wantBegin: DetectorNodeRuntime},
		{name: "total calls: any node", policy: func(p *Policy) { p.MaxTotalCalls = 3; noCycles(p) }, give: list("A", "B", "C"), next: "D", wantAhead: DetectorTotalCalls, wantBegin: DetectorTotalCalls},
		{name: "total calls: one left", policy: func(p *Policy) { p.MaxTotalCalls = 3; noCycles(p) }, give: list("A", "B"), next: "D"},
		{name: "total cost", policy: func(p *Policy) { p.MaxCost = 1 }, give: list("A;c=0.6", "B;c=0.6"), next: "C", wantAhead: DetectorTotalCost, wantBegin: DetectorTotalCost},
		{name: "exempt node: a pending trip waits for a guarded call", policy: func(p *Policy) { p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}} }, give: list("A=x", "A=x", "A=x"), next: "poll"},
		{name: "a human's stop", give: list("A", "B"), stop: true, next: "A", wantAhead: DetectorUserStop, wantBegin: DetectorUserStop},
		{name: "cycle budget: the call decides it, not predicted", give: rep(8, "coder", "verify"), next: "coder", wantBegin: DetectorCycleIterations},
		{name: "progressing run", give: list("A", "B", "A", "B"), next: "A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := policyWith(func(*Policy) {})
			if tt.policy != nil {
				tt.policy(&p)
			}
			d := newDriver(p)
			for _, sp := range tt.give {
				require.Nil(t, d.do(sp), "step %s", sp)
			}
			if tt.stop {
				d.s.Stop("ana asked to stop", d.now, false)
			}
			gotAhead, ok := d.s.Ahead(tt.next)
			assert.Equal(t, tt.wantAhead, gotAhead)
			assert.Equal(t, tt.wantAhead != "", ok)
			_, trip := d.s.Begin(tt.next, d.now)
			assert.Equal(t, tt.wantBegin, detectorOf(trip))
			if ok {
				require.NotNil(t, trip, "a predicted trip must come")
				assert.Equal(t, gotAhead, trip.Detector)
			}
		})
	}
}

// TestAheadReadsOnly checks that Ahead changes nothing: the same calls
// with and without it give the same trips.
func TestAheadReadsOnly(t *testing.T) {
	steps := seq(rep(3, "A=x", "B"), list("C", "C", "new"))
	plain, asked := newDriver(DefaultPolicy()), newDriver(DefaultPolicy())
	for _, sp := range steps {
		st := parseStep(sp)
		asked.s.Ahead(st.node)
		asked.s.Ahead("never-called")
		want, got := plain.do(sp), asked.do(sp)
		assert.Equal(t, detectorOf(want), detectorOf(got), "step %s", sp)
	}
	assert.Equal(t, plain.s.Size(), asked.s.Size())
}

// TestAheadNeverWrong walks random runs under the default generation with
// every budget on: wherever Ahead predicts a trip, Begin trips it, and
// every trip decided by a result read (a pending trip) was predicted.
func TestAheadNeverWrong(t *testing.T) {
	p := DefaultPolicy()
	p.MaxTotalCalls, p.MaxCost, p.MaxNodeRuntime = 60, 9, 20*time.Second
	p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}, "n1": {MaxCalls: 7}}
	nodes := []string{"n0", "n1", "n2", "n3", "poll"}
	outs := []string{"=x", "=y", "!e", ""}
	rng := uint64(7)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	predicted, foreseenN, came := 0, 0, 0
	for run := 0; run < 300; run++ {
		d := newDriver(p)
		for k := 0; k < 80; k++ {
			node := nodes[next(len(nodes))]
			pending := d.s.Pending() != nil
			want, ok := d.s.Ahead(node)
			foreseen, fok := d.s.Foreseen(d.now)
			ref, trip := d.s.Begin(node, d.now)
			if fok && node != "poll" {
				foreseenN++
				require.NotNil(t, trip, "run %d call %d: %s foreseen", run, k, foreseen.Detector)
				require.Equal(t, foreseen.Detector, trip.Detector)
				require.Equal(t, foreseen.Reason, trip.Reason)
			}
			if ok {
				predicted++
				require.NotNil(t, trip, "run %d call %d: %s predicted at %s", run, k, want, node)
				require.Equal(t, want, trip.Detector)
			}
			if trip != nil {
				came++
				require.False(t, pending && !ok, "run %d call %d: a pending trip not predicted", run, k)
				require.False(t, pending && !fok, "run %d call %d: a pending trip not foreseen", run, k)
				break
			}
			d.now = d.now.Add(time.Duration(next(3)) * time.Second)
			st := parseStep(node + outs[next(len(outs))] + ";c=0.2")
			d.s.End(ref, st.obs, d.now)
		}
	}
	t.Logf("%d trips, %d predicted, %d foreseen at a guarded node", came, predicted, foreseenN)
	assert.Positive(t, predicted)
	assert.Positive(t, foreseenN)
}
