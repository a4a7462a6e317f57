package testsuite_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

// TestScopeKeepsGuardedExecutions: narrowing Options.Workflows so that it
// no longer names a workflow type must not unguard the executions already
// running with the guard. Every guarded fixture replays on a replayer whose
// scope names none of them; TestFixturesReplayWithoutGuard shows that the
// same histories fail without the guard, so these replays pass only if the
// guard still runs for them.
func TestScopeKeepsGuardedExecutions(t *testing.T) {
	scoped := interceptor.Options{Workflows: []string{"SomeOtherAgent"}}
	for _, f := range manifest(t).Fixtures {
		if f.Guard == "" {
			continue
		}
		t.Run(strings.TrimSuffix(f.File, ".json"), func(t *testing.T) {
			t.Parallel()
			err := testsuite.ReplayFile(filepath.Join(historiesDir, f.File), replayOpts(t, f, scoped))
			assert.NoError(t, err)
		})
	}
}
