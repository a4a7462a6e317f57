package schedule_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// TestDocsStateTheLivenessPlans: docs/schedule-test.md has a row for every
// feature, names the liveness invariants, and quotes the shapes and delays
// of features stuck and longpause as the code has them.
func TestDocsStateTheLivenessPlans(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schedule-test.md"))
	require.NoError(t, err)
	doc := string(data)
	for _, f := range schedule.AllFeatures {
		assert.Contains(t, doc, fmt.Sprintf("| `%s` |", f), "a row for feature %s", f)
	}
	for _, inv := range []string{"stuck-halts", "paused-time"} {
		assert.Contains(t, doc, fmt.Sprintf("| `%s` |", inv), "a row for invariant %s", inv)
	}
	for _, want := range []string{
		fmt.Sprintf("`Warnings` from 0 to %d", schedule.MaxStuckWarnings),
		fmt.Sprintf("to %d (`schedule.WithLiveness`)", schedule.LivenessBudget),
		fmt.Sprintf("a round of 1 to %d groups", schedule.MaxRoundGroups),
		fmt.Sprintf("2 to %d concurrent calls", schedule.MaxGroupWidth),
		fmt.Sprintf("`schedule.LongPauseDelay` (%s)", wholeSeconds(schedule.LongPauseDelay.Seconds())),
		fmt.Sprintf("a pause timeout of %s that escalates", wholeSeconds(schedule.LongPauseDelay.Seconds())),
		fmt.Sprintf("(sleeps %s, then escalates)", wholeSeconds(schedule.HandlerSlowSleep.Seconds())),
	} {
		assert.Contains(t, doc, want)
	}
	for _, n := range schedule.StuckNodes {
		assert.Contains(t, doc, fmt.Sprintf("`%s`", n))
	}
}

// wholeSeconds writes whole seconds as the docs do ("6 s").
func wholeSeconds(s float64) string { return fmt.Sprintf("%g s", s) }
