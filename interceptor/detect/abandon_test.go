package detect

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAbandon(t *testing.T) {
	tests := []struct {
		name string
		// run begins calls and abandons or ends them; it returns the ref
		// of the node whose next call must open a step of its own.
		run         func(s *State) StepRef
		wantHistory int           // history entries of node 0
		wantRuntime time.Duration // runtime of node 0
	}{
		{
			name: "the only call in flight: closed without a history entry",
			run: func(s *State) StepRef {
				r, _ := s.Begin("f", t0)
				s.Abandon(r, t0.Add(2*time.Second))
				return r
			},
			wantHistory: 0,
			wantRuntime: 2 * time.Second,
		},
		{
			name: "a fan-out step whose other call ended: finalised with it",
			run: func(s *State) StepRef {
				r1, _ := s.Begin("f", t0)
				s.Begin("f", t0)
				s.End(r1, Observation{Output: 7}, t0.Add(time.Second))
				s.Abandon(r1, t0.Add(3*time.Second))
				return r1
			},
			wantHistory: 1,
			wantRuntime: 3 * time.Second,
		},
		{
			name: "a stale ref is ignored",
			run: func(s *State) StepRef {
				r, _ := s.Begin("f", t0)
				s.End(r, Observation{Output: 1}, t0.Add(time.Second))
				s.Abandon(r, t0.Add(5*time.Second))
				return r
			},
			wantHistory: 1,
			wantRuntime: time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState(DefaultPolicy())
			ref := tt.run(s)
			n := s.nodes[ref.Node]
			assert.Zero(t, n.inflight)
			assert.Equal(t, tt.wantHistory, n.hist.n)
			assert.Equal(t, tt.wantRuntime, n.run)

			// The state survives a snapshot (continue-as-new), and the
			// node's next call opens a new step instead of joining.
			data, err := json.Marshal(s)
			require.NoError(t, err)
			r, err := Restore(DefaultPolicy(), data)
			require.NoError(t, err)
			next, trip := r.Begin("f", t0.Add(time.Minute))
			require.Nil(t, trip)
			assert.NotEqual(t, ref.Seq, next.Seq, "a step of its own")
		})
	}
}

// TestAbandonedCallsDoNotBlindTheGuard: after a call was abandoned, three
// identical outputs of its node trip identical_output as usual.
func TestAbandonedCallsDoNotBlindTheGuard(t *testing.T) {
	s := NewState(DefaultPolicy())
	r, _ := s.Begin("f", t0)
	s.Abandon(r, t0)
	for i := range 3 {
		ref, trip := s.Begin("f", t0.Add(time.Duration(i)*time.Second))
		require.Nil(t, trip)
		s.End(ref, Observation{Output: 42}, t0.Add(time.Duration(i)*time.Second))
	}
	_, trip := s.Begin("f", t0.Add(time.Minute))
	require.NotNil(t, trip)
	assert.Equal(t, DetectorIdenticalOutput, trip.Detector)
}
