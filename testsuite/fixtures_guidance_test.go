package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// The v7- fixtures record what guard version 7 changed (issue 16): a
// resume's guidance in the notice header of the loop's later calls, and
// warnings before a halt.

// TestV7ResumeWithGuidance: no call before the resume carries a notice;
// every Code call after it carries the guidance.
func TestV7ResumeWithGuidance(t *testing.T) {
	h := readFixture(t, "resume-with-guidance.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals)
	var before, after []string
	resumed := false
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a.GetSignalName() == protocol.DefaultResumeSignal {
			resumed = true
		}
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		text := ""
		if p := a.GetHeader().GetFields()[protocol.NoticeHeader]; p != nil {
			var n protocol.Notice
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &n))
			text = n.Guidance
		}
		if resumed {
			after = append(after, text)
		} else {
			before = append(before, text)
		}
	}
	require.NotEmpty(t, before)
	require.NotEmpty(t, after)
	for _, s := range before {
		assert.Empty(t, s, "no notice before the halt")
	}
	for _, s := range after {
		assert.Equal(t, "read config/prod.yaml, not config/dev.yaml", s)
	}
}

// TestV7WarnedThenHalted: one halt, after one warning, which it lists.
func TestV7WarnedThenHalted(t *testing.T) {
	h := readFixture(t, "warned-then-halted.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	require.Equal(t, 1, info.HaltedSignals)
	ev := haltedEvent(t, h, 0)
	require.Len(t, ev.Warnings, 1)
	assert.Equal(t, 1, ev.Warnings[0].N)
	assert.Equal(t, []string{"Code"}, ev.Warnings[0].Nodes)
}
