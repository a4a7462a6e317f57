package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

// The v6- fixtures record what guard version 6 changed (issue 15):
// detection generation 3 for new executions, and the workflow's own
// signals as outside input.

// TestV6ConvergingCount: a fix-and-check loop whose only progress signal
// is a falling failure count runs to completion under zero Options.
func TestV6ConvergingCount(t *testing.T) {
	h := readFixture(t, "converging-count.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Zero(t, info.WorkflowTaskFailures)
	assert.Zero(t, info.HaltedSignals, "a falling count is progress")
	assert.True(t, info.Closed)
}

// TestV6UserMessageBetweenRepeats: the same patch twice, the workflow's
// own signal, the same patch twice more: no repetition spans the signal.
func TestV6UserMessageBetweenRepeats(t *testing.T) {
	h := readFixture(t, "user-message-between-repeats.json")
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Zero(t, info.HaltedSignals)
	assert.True(t, info.Closed)
}
