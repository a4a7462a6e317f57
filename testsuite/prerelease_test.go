package testsuite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// TestPrereleaseHistoryFailsItsTask: an execution recorded by a
// pre-release build (here guard version 8, recorded before the first
// release cut the guard to one version) must not replay under this
// release: its commands or decisions could differ from the recorded ones.
// Its workflow task fails with a message that names the cause and the
// remedy, rather than with a nondeterminism error far from the cause or
// a silent different decision.
func TestPrereleaseHistoryFailsItsTask(t *testing.T) {
	reg, ok := fixtures.WorkflowRegistries("fixtures")
	require.True(t, ok)
	guard, ok := fixtures.GuardOptions("warnings-1")
	require.True(t, ok)
	err := testsuite.ReplayFile("testdata/prerelease/guard-v8-warned-then-halted.json",
		testsuite.ReplayOptions{Guard: guard, Register: reg})
	require.Error(t, err)
	for _, want := range []string{"pre-release loopguard build", "guard version 8", "Options.Retire", "reset"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "nondeterministic")
}

// TestEveryOlderMarkerIsRefused rewrites a current fixture's version
// marker to each pre-release version: each replay fails with the same
// message, and the current version replays.
func TestEveryOlderMarkerIsRefused(t *testing.T) {
	const file = "warned-then-halted.json"
	f := fixtureEntry(t, file)
	guard, ok := fixtures.GuardOptions(f.Guard)
	require.True(t, ok)
	h := readFixture(t, file)
	require.NoError(t, testsuite.ReplayHistory(h, replayOpts(t, f, guard)))
	for v := 1; v < interceptor.GuardVersion; v++ {
		err := testsuite.ReplayHistory(withGuardVersion(t, h, v), replayOpts(t, f, guard))
		if assert.Error(t, err, "guard version %d", v) {
			assert.Contains(t, err.Error(), "pre-release loopguard build")
		}
	}
}
