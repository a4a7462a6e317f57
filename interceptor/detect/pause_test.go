package detect

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPausedTimeIsNotCycleRuntime(t *testing.T) {
	tests := []struct {
		name string
		// cycles is how many a→b rounds run before the pause (0: the cycle
		// forms after it).
		before int
		paused time.Duration
		// then are the rounds after the pause.
		after int
		want  Detector // "" for no trip
	}{
		{name: "an hour paused in a running cycle", before: 2, paused: time.Hour, after: 3},
		{name: "an hour paused before the cycle forms", before: 0, paused: time.Hour, after: 3},
		{name: "not paused: the hour counts", before: 2, paused: 0, after: 3, want: DetectorCycleRuntime},
		{name: "not paused, the cycle forms after: the hour counts", before: 0, paused: 0, after: 3, want: DetectorCycleRuntime},
		{name: "pausing does not hide the loop's own time", before: 2, paused: time.Hour, after: 40, want: DetectorCycleRuntime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState(policyWith(func(p *Policy) {
				p.MaxCycleRuntime = 30 * time.Minute
				p.MaxCycleIterations = 100
				p.MaxCallsPerNode = 100
			}))
			now := t0
			call := func(node string, i int) *Trip {
				ref, trip := s.Begin(node, now)
				if trip != nil {
					return trip
				}
				now = now.Add(time.Minute)
				s.End(ref, Observation{Output: h(fmt.Sprint(node, i))}, now)
				return nil
			}
			// One first visit of a before the pause, so a cycle formed later
			// takes its start from before the pause too.
			require.Nil(t, call("a", -1))
			for i := range tt.before {
				require.Nil(t, call("b", i))
				require.Nil(t, call("a", i))
			}
			if tt.paused > 0 || tt.want != "" {
				now = now.Add(time.Hour)
			}
			s.Paused(tt.paused)
			var got *Trip
			for i := range tt.after {
				if got = call("b", 100+i); got != nil {
					break
				}
				if got = call("a", 100+i); got != nil {
					break
				}
			}
			assert.Equal(t, tt.want, detectorOf(got))
		})
	}
}
