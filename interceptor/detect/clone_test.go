package detect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCloneSharesNothing walks random runs, every budget on: at each call a clone reads as its original, and driving the
// clone on (calls, results, a resume, a stop) leaves the original's
// encoding, and the trips it then meets, as they were.
func TestCloneSharesNothing(t *testing.T) {
	nodes := []string{"n0", "n1", "n2", "poll"}
	outs := []string{"=x", "=y", "!e", "", ";p=1", ";m=2"}
	rng := uint64(11)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	{
		p := DefaultPolicy()
		p.MaxTotalCalls, p.MaxCost, p.MaxNodeRuntime = 400, 60, 200*time.Second
		p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}, "n1": {MaxCalls: 7}}
		p.Graph = []Edge{{From: "n0", To: "n1"}}
		for run := 0; run < 16; run++ {
			d := newDriver(p)
			for k := 0; k < 130; k++ {
				before, err := d.s.MarshalJSON()
				require.NoError(t, err)
				c := d.s.Clone()
				got, err := c.MarshalJSON()
				require.NoError(t, err)
				require.Equal(t, string(before), string(got), "run %d call %d: the clone reads otherwise", run, k)
				// Drive the clone on.
				now := d.now
				for j := 0; j < 4; j++ {
					node := nodes[next(len(nodes))]
					ref, trip := c.Begin(node, now)
					if trip != nil {
						c.Resume(trip, Extension{MaxTotalCalls: 5})
						continue
					}
					now = now.Add(time.Second)
					c.End(ref, parseStep(node+outs[next(len(outs))]).obs, now)
				}
				c.Stop("", now, true)
				after, err := d.s.MarshalJSON()
				require.NoError(t, err)
				require.Equal(t, string(before), string(after), "run %d call %d: the clone changed its original", run, k)

				node := nodes[next(len(nodes))]
				ref, trip := d.s.Begin(node, d.now)
				if trip != nil {
					d.s.Resume(trip, Extension{})
					continue
				}
				d.now = d.now.Add(time.Duration(next(3)) * time.Second)
				d.s.End(ref, parseStep(node+outs[next(len(outs))]+";c=0.2").obs, d.now)
			}
		}
	}
}
