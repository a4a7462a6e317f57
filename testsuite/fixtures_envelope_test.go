package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// TestUsageEnvelopePatchHalts: a coder whose every result carries a
// provider's usage envelope (token counts that move every call) around
// the same patch is stalled, not progressing: the loop halted once on
// Code and the human escalated it.
func TestUsageEnvelopePatchHalts(t *testing.T) {
	h := readFixture(t, "usage-envelope-patch.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	ev := haltedEvent(t, h, 0)
	assert.Equal(t, protocol.ReasonStalled, ev.HaltReason)
	assert.Equal(t, "Code", ev.Node)
}
