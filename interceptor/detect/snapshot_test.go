package detect

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSnapshotRoundTrip(t *testing.T) {
	p := simPolicy()
	p.Graph = []Edge{{"review", "code"}}
	ops := genOps(7, 600, 0)
	want, ref := runSim(p, ops, nil)
	require.NotEmpty(t, want, "the trace should trip now and then")
	wantSnap, err := ref.MarshalJSON()
	require.NoError(t, err)

	tests := []struct {
		name string
		give map[int]bool
	}{
		{name: "at the start", give: map[int]bool{0: true}},
		{name: "once", give: map[int]bool{101: true}},
		{name: "often", give: everyN(len(ops), 7)},
		{name: "before every op", give: everyN(len(ops), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, s := runSim(p, ops, tt.give)
			assert.Equal(t, want, got)
			gotSnap, err := s.MarshalJSON()
			require.NoError(t, err)
			assert.JSONEq(t, string(wantSnap), string(gotSnap))
			assert.Equal(t, ref.View(), s.View())
		})
	}
}

func everyN(n, k int) map[int]bool {
	m := map[int]bool{}
	for i := 0; i < n; i += k {
		m[i] = true
	}
	return m
}

func TestSnapshotKeepsPendingTrip(t *testing.T) {
	d := newDriver(DefaultPolicy())
	_, trip := d.run("A=x", "A=x", "A=x")
	require.NotNil(t, trip)
	b, err := json.Marshal(d.s)
	require.NoError(t, err)
	s, err := Restore(DefaultPolicy(), b)
	require.NoError(t, err)
	require.NotNil(t, s.Pending())
	assert.Equal(t, trip.Message, s.Pending().Message)
	assert.True(t, trip.At.Equal(s.Pending().At))
	_, again := s.Begin("B", d.now)
	assert.Same(t, s.Pending(), again)
	s.Resume(trip, Extension{}) // the original pointer: equal, so it clears
	assert.Nil(t, s.Pending())
}

func TestRestoreRejectsGarbage(t *testing.T) {
	for _, give := range []string{
		``, `{`, `[]`, `{"v":2}`,
		`{"v":1,"n":[{"n":"a"},{"n":"a"}]}`,
		`{"v":1,"n":[{"n":"a"}],"e":[[0,5,1,0]]}`,
		`{"v":1,"n":[{"n":"a"}],"c":[{"id":"x","m":[3],"a":0}]}`,
		`{"v":1,"n":[{"n":"a"}],"tr":[[0,9,1,1]]}`,
	} {
		_, err := Restore(DefaultPolicy(), []byte(give))
		assert.Error(t, err, give)
	}
	s, err := Restore(DefaultPolicy(), []byte(`{"v":1,"l":7}`))
	require.NoError(t, err)
	_, trip := s.Begin("A", t0)
	assert.Nil(t, trip)
}

func TestRestoreWithNewPolicy(t *testing.T) {
	d := newDriver(DefaultPolicy())
	_, trip := d.run("A", "B", "A", "B", "A")
	require.Nil(t, trip)
	b, err := d.s.MarshalJSON()
	require.NoError(t, err)
	p := DefaultPolicy()
	p.Window = 3
	p.Graph = []Edge{{"B", "C"}, {"C", "A"}}
	s, err := Restore(p, b)
	require.NoError(t, err)
	v := s.View()
	require.Len(t, v.Cycles, 1)
	assert.Equal(t, []string{"A", "B", "C"}, v.Cycles[0].Nodes)
	assert.Equal(t, 3, v.Cycles[0].Iteration, "carried into the larger cycle")
}
