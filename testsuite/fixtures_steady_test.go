package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// The v5- fixtures record what guard version 5 changed (issue 14).

// TestV5ObserveStopBehindTrip: under observe, the detector's trip is
// observed and the human's stop, sent while that trip was pending, pauses
// the next call.
func TestV5ObserveStopBehindTrip(t *testing.T) {
	h := readFixture(t, "observe-stop-behind-trip.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Zero(t, info.WorkflowTaskFailures)
	assert.Equal(t, 2, info.HaltedSignals, "the observed trip, then the human's stop")
	assert.True(t, haltedEvent(t, h, 0).Observed)
	stop := haltedEvent(t, h, 1)
	assert.Equal(t, protocol.ReasonUserStop, stop.HaltReason)
	assert.False(t, stop.Observed, "the human's stop pauses")
	assert.Equal(t, []string{"halted:user_stop", "running:"}, memoStates(t, h))
}

// TestV5ContinuedRunShowsRunning: the run continued after an escalation
// shows itself running at its start, not the escalation the server copied.
func TestV5ContinuedRunShowsRunning(t *testing.T) {
	assert.Equal(t, []string{"halted:stalled", "escalated:stalled"}, memoStates(t, readFixture(t, "continued-after-escalation-run1.json")))
	h := readFixture(t, "continued-after-escalation-run2.json")
	assert.Equal(t, interceptor.GuardVersion, testsuite.Inspect(h).GuardVersion)
	assert.Equal(t, []string{"running:"}, memoStates(t, h))
}

// TestV5PausedCallInFlight: one halt only; the in-flight call was not
// charged the pause.
func TestV5PausedCallInFlight(t *testing.T) {
	h := readFixture(t, "paused-call-in-flight.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals, "no node_runtime halt after the resume")
}
