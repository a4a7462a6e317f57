package detect

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// simOp is one Begin or End of a generated trace.
type simOp struct {
	begin bool
	node  string
	slot  int // pairs an End with its Begin
	obs   Observation
	dt    time.Duration
}

// genOps generates a long trace of n calls over a few nodes with small
// output alphabets (so that every detector fires now and then), failures,
// metrics, progress values, costs, exempt polls, fan-out and, if names > 0,
// that many extra node names.
func genOps(seed uint64, n, names int) []simOp {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	nodes := []string{"plan", "code", "test", "review", "research", "poll"}
	var ops []simOp
	slot := 0
	obs := func(node string) Observation {
		o := Observation{Output: h(fmt.Sprintf("%s-%d", node, rng.IntN(4)))}
		switch rng.IntN(10) {
		case 0, 2:
			return Observation{Failed: true, ErrorSig: fmt.Sprintf("error:boom %d", rng.IntN(2))}
		case 1:
			o.Output = h(fmt.Sprintf("fresh-%d", rng.Uint64()))
		}
		if node == "test" {
			o.HasMetric, o.Metric = true, float64(rng.IntN(5))
		}
		if node == "code" && rng.IntN(2) == 0 {
			v := fmt.Sprintf("diff-%d", rng.IntN(3))
			o.HasProgress, o.Progress, o.ProgressRaw = true, h(v), v
		}
		if rng.IntN(3) == 0 {
			o.Cost = float64(rng.IntN(100)) / 1000
		}
		withV2(&o)
		return o
	}
	for calls := 0; calls < n; {
		node := nodes[rng.IntN(len(nodes))]
		if names > 0 && rng.IntN(8) == 0 {
			node = fmt.Sprintf("tool-%d", rng.IntN(names))
		}
		width := 1
		if rng.IntN(6) == 0 {
			width = 2 + rng.IntN(3)
		}
		first := slot
		for range width {
			ops = append(ops, simOp{begin: true, node: node, slot: slot})
			slot++
			calls++
		}
		for k := range width {
			ops = append(ops, simOp{node: node, slot: first + k, obs: obs(node), dt: time.Duration(1+rng.IntN(30)) * time.Second})
		}
	}
	return ops
}

// simPolicy exercises every rule.
func simPolicy() Policy {
	p := DefaultPolicy()
	p.MaxCost = 2
	p.MaxCycleCost = 1
	p.MaxCycleRuntime = 20 * time.Minute
	p.MaxNodeRuntime = 30 * time.Minute
	p.MaxTotalCalls = 150
	p.MaxCallsPerNode = 40
	p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}, "test": {MaxCalls: 12}}
	return p
}

// runSim feeds ops to a State, resuming every trip (alternately resetting
// and extending), and snapshotting and restoring before the ops in snapAt.
// It returns the trips seen, as comparable strings, and the final state.
func runSim(p Policy, ops []simOp, snapAt map[int]bool) ([]string, *State) {
	return simulate(p, ops, snapAt, true)
}

// simulate is runSim; record false skips formatting the trips.
func simulate(p Policy, ops []simOp, snapAt map[int]bool, record bool) ([]string, *State) {
	s := NewState(p)
	refs := make([]StepRef, len(ops))
	for i := range refs {
		refs[i].Node = -1
	}
	var events []string
	trips := 0
	now := t0
	for i, op := range ops {
		if snapAt[i] {
			b, err := s.MarshalJSON()
			if err != nil {
				panic(err)
			}
			if s, err = Restore(p, b); err != nil {
				panic(err)
			}
		}
		now = now.Add(op.dt)
		if !op.begin {
			if ref := refs[op.slot]; ref.Node >= 0 {
				s.End(ref, op.obs, now)
			}
			continue
		}
		ref, trip := s.Begin(op.node, now)
		for round := 0; trip != nil && round < 5; round++ {
			if record {
				events = append(events, fmt.Sprintf("op %d: %s %s %s %q %s %d/%d %v", i, trip.Reason, trip.Detector, trip.Node,
					trip.Message, trip.CycleID, trip.Iteration, trip.MaxIterations, trip.Evidence))
			}
			trips++
			ext := Extension{}
			if trips%3 == 0 {
				ext = Extension{MaxCycleIterations: 2, MaxCallsPerNode: 2, MaxEdgeWithoutProgress: 1, MaxTotalCalls: 50, MaxCost: 0.5, MaxCycleCost: 0.5}
			}
			s.Resume(trip, ext)
			ref, trip = s.Begin(op.node, now)
		}
		if trip == nil {
			refs[op.slot] = ref
		}
	}
	return events, s
}

// withV2 adds what Extract fills in beside the output, derived from it
// (no random draw, so the traces stay the same): the worst case of
// sixteen numeric fields, one of them volatile, a shape and an action.
func withV2(o *Observation) {
	if o.Failed {
		return
	}
	o.Shape, o.Action, o.Count = o.Output>>3|1, o.Output>>1|1, int64(o.Output%7)
	o.Fields = make([]Field, maxFields)
	for k := range o.Fields {
		o.Fields[k] = Field{Path: uint32(k + 1), Sum: uint64(k) * 0x9e3779b97f4a7c15}
	}
	o.Fields[0].Sum = o.Output
}
