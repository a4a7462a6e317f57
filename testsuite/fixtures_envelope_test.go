package testsuite_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/testsuite"
)

// The v10- fixtures are histories of guard version 10, whose new
// executions pin detection generation 4 (clocks are not progress). The
// generation is pinned with the options, so these histories replay with
// generation 4 on any later worker, as generation 3's replay with it.

// TestV10PinsGeneration4: the options the execution pinned select
// generation 4 and the one-loop barrier of version 9; the loop halted once
// and the human escalated it.
func TestV10PinsGeneration4(t *testing.T) {
	h := readFixture(t, "usage-envelope-patch.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	var pinned struct {
		Policy detect.Policy `json:"policy"`
	}
	found := false
	for _, e := range h.GetEvents() {
		a := e.GetMarkerRecordedEventAttributes()
		if a.GetMarkerName() != "SideEffect" {
			continue
		}
		p := a.GetDetails()["data"].GetPayloads()
		require.Len(t, p, 1)
		require.NoError(t, json.Unmarshal(p[0].GetData(), &pinned))
		found = true
		break
	}
	require.True(t, found, "the pinned options")
	assert.Equal(t, detect.DefaultPolicy().Detection, pinned.Policy.Detection)
	assert.True(t, pinned.Policy.OneLoop)
	ev := haltedEvent(t, h, 0)
	assert.Equal(t, interceptor.ReasonStalled, ev.HaltReason)
	assert.Equal(t, "Code", ev.Node)
}
