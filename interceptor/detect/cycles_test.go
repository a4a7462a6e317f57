package detect

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCycleIDStable(t *testing.T) {
	tests := []struct {
		name  string
		graph []Edge
		give  []string
	}{
		{name: "A first", give: list("A", "B", "C", "A")},
		{name: "B first", give: list("B", "C", "A", "B")},
		{name: "C first", give: list("C", "A", "B", "C")},
		{name: "declared", graph: []Edge{{"C", "A"}, {"A", "B"}, {"B", "C"}}},
		{name: "declared, other order", graph: []Edge{{"B", "C"}, {"C", "A"}, {"A", "B"}}, give: list("B")},
	}
	var ids []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			p.Graph = tt.graph
			d := newDriver(p)
			_, trip := d.run(tt.give...)
			require.Nil(t, trip)
			v := d.s.View()
			require.Len(t, v.Cycles, 1)
			c := v.Cycles[0]
			assert.Regexp(t, regexp.MustCompile(`^cyc-[0-9a-f]{12}$`), c.CycleID)
			assert.Equal(t, []string{"A", "B", "C"}, c.Nodes)
			assert.Equal(t, []string{"A->B", "B->C", "C->A"}, c.Edges)
			ids = append(ids, c.CycleID)
		})
	}
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
}

func TestCycleIterations(t *testing.T) {
	d := newDriver(DefaultPolicy())
	require.Nil(t, d.do("C"))
	require.Nil(t, d.do("V"))
	assert.Empty(t, d.s.View().Cycles)
	require.Nil(t, d.do("C"))
	c := d.s.View().Cycles[0]
	assert.Equal(t, "C", c.Anchor)
	assert.Equal(t, 2, c.Iteration, "the cycle forms at iteration 1; its anchor edge makes it 2")
	assert.Equal(t, 8, c.MaxIterations)
	require.Nil(t, d.do("V"))
	assert.Equal(t, 2, d.s.View().Cycles[0].Iteration, "V→? is no anchor edge")
}

func TestDeclaredGraph(t *testing.T) {
	p := DefaultPolicy()
	p.Graph = []Edge{{"coder", "verify"}, {"verify", "coder"}}
	d := newDriver(p)
	v := d.s.View()
	require.Len(t, v.Cycles, 1)
	assert.Equal(t, 1, v.Cycles[0].Iteration)
	assert.Equal(t, "coder", v.Cycles[0].Anchor, "unvisited: by name")
	assert.Empty(t, v.Nodes, "declared nodes are listed once called")

	require.Nil(t, d.do("verify"))
	assert.Equal(t, "verify", d.s.View().Cycles[0].Anchor, "the first visited member anchors")
	require.Nil(t, d.do("coder"))
	assert.Equal(t, 1, d.s.View().Cycles[0].Iteration)
	require.Nil(t, d.do("verify"))
	assert.Equal(t, 2, d.s.View().Cycles[0].Iteration)
}

func TestCycleMergeKeepsIteration(t *testing.T) {
	d := newDriver(policyWith(func(p *Policy) { p.MaxCycleCost = 100 }))
	_, trip := d.run("A;c=1", "B;c=1", "A;c=1", "B;c=1", "A;c=1")
	require.Nil(t, trip)
	v := d.s.View()
	require.Len(t, v.Cycles, 1)
	assert.Equal(t, 3, v.Cycles[0].Iteration)
	assert.Equal(t, 3.0, v.Cycles[0].Cost, "the steps that ended after the cycle formed (A, B, A)")
	old := v.Cycles[0].CycleID

	_, trip = d.run("C;c=1", "A;c=1")
	require.Nil(t, trip)
	v = d.s.View()
	require.Len(t, v.Cycles, 1)
	c := v.Cycles[0]
	assert.NotEqual(t, old, c.CycleID)
	assert.Equal(t, []string{"A", "B", "C"}, c.Nodes)
	assert.Equal(t, "A", c.Anchor)
	assert.Equal(t, 4, c.Iteration, "max of the absorbed cycles, then C→A is an anchor edge")
	assert.Equal(t, 4.0, c.Cost, "absorbed cost carried; C's step ended before it joined")
}

func TestTarjan(t *testing.T) {
	// 0→1→2→0, 2→3, 3→3, 4 alone, 5→6
	adj := [][]int32{{1}, {2}, {0, 3}, {3}, nil, {6}, nil}
	comps := tarjan(adj)
	sizes := map[int]int{}
	for _, c := range comps {
		sizes[len(c)]++
	}
	assert.Equal(t, map[int]int{3: 1, 1: 4}, sizes)
}
