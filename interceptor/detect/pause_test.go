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

// TestResumeClearsTheIteration: a stall of the second generation is about
// the whole iteration, so a human's resume clears what every member of the
// cycle repeated; the legacy rules clear only the node that tripped, and
// its partner halts at once.
func TestResumeClearsTheIteration(t *testing.T) {
	stuck := rep(3, "Code=same", "Verify=verdict")
	tests := []struct {
		name string
		give Policy
		// want is the detector of the first trip after the resume ("" for
		// none within two more identical iterations).
		want Detector
	}{
		{"the resume clears the loop", DefaultPolicy(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(tt.give)
			_, trip := d.run(stuck...)
			require.NotNil(t, trip, "three identical iterations stall")
			d.s.Resume(trip, Extension{})
			_, again := d.run(rep(2, "Code=same", "Verify=verdict")...)
			if tt.want == "" {
				assert.Nil(t, again, "two more iterations are not yet a new stall")
				return
			}
			require.NotNil(t, again)
			assert.Equal(t, tt.want, again.Detector)
		})
	}
}

// TestStopAtExemptNode: a human's stop halts the next guarded call even
// when its node is exempt, or a workflow that only polls would never
// stop.
func TestStopAtExemptNode(t *testing.T) {
	tests := []struct {
		name string
		give Policy
		want bool // the exempt call is refused with the stop
	}{
		{"the stop halts the exempt call", DefaultPolicy(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.give
			p.Nodes = map[string]NodePolicy{"poll": {Exempt: true}}
			s := NewState(p)
			s.Stop("ana asked to stop", t0, false)
			_, trip := s.Begin("poll", t0)
			if !tt.want {
				assert.Nil(t, trip)
				return
			}
			require.NotNil(t, trip)
			assert.Equal(t, ReasonUserStop, trip.Reason)
			s.Resume(trip, Extension{})
			_, again := s.Begin("poll", t0)
			assert.Nil(t, again, "after the resume the exempt call goes through")
		})
	}
}

// TestStopQueuedBehindATrip: a human's stop that arrives while a
// detector's trip is pending waits behind it when asked to (OnHalt observe,
// where the trip is resumed at once), and is dropped when not.
func TestStopQueuedBehindATrip(t *testing.T) {
	tests := []struct {
		name  string
		queue bool
		want  bool // the stop halts the call after the trip
	}{
		{"queued: the stop follows the observed trip", true, true},
		{"not queued: the trip halts, the stop is dropped", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(DefaultPolicy())
			for d.s.Pending() == nil {
				require.Nil(t, d.do("A!ConnectionError: refused"))
			}
			trip := d.s.Pending()
			assert.Equal(t, DetectorRepeatedError, trip.Detector)

			assert.Equal(t, tt.queue, d.s.Stop("ana asked to stop", d.now, tt.queue))
			assert.Equal(t, tt.queue, d.s.Stopping())
			assert.False(t, d.s.Stop("bo asked too", d.now, tt.queue), "one stop waits at a time")
			// The snapshot carries the queued stop across continue-as-new.
			b, err := d.s.MarshalJSON()
			require.NoError(t, err)
			d.s, err = Restore(d.s.pol, b)
			require.NoError(t, err)

			assert.Equal(t, trip.Detector, d.s.Pending().Detector, "the detector's trip halts first")
			d.s.Resume(d.s.Pending(), Extension{})
			next := d.s.Pending()
			if !tt.want {
				assert.Nil(t, next)
				return
			}
			require.NotNil(t, next)
			assert.Equal(t, DetectorUserStop, next.Detector)
			assert.Equal(t, "ana asked to stop", next.Message)
			assert.Same(t, next, d.do("A"))
			d.s.Resume(next, Extension{})
			assert.Nil(t, d.s.Pending())
			assert.False(t, d.s.Stopping())
		})
	}
}

// TestPausedTimeIsNotChargedToCallsInFlight: a call in flight across a
// pause is read after the resume; its node is not charged the pause.
func TestPausedTimeIsNotChargedToCallsInFlight(t *testing.T) {
	s := NewState(DefaultPolicy())
	ref, trip := s.Begin("Verify", t0)
	require.Nil(t, trip)
	// A minute in, another branch halts and the workflow pauses an hour;
	// the call's result is read a minute after the resume.
	s.Paused(time.Hour)
	s.End(ref, Observation{Output: h("ok")}, t0.Add(time.Hour+2*time.Minute))
	assert.Equal(t, 2*time.Minute, s.View().Nodes[0].Runtime)
}
