package testsuite_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/testsuite"
)

// The v8- fixtures record what guard version 8 changed: the memo lists the
// warnings, and is written whenever they change.

// memoWarnings lists the memo entries the history upserts, in order, each
// as its state and its warnings' n/of@node.
func memoWarnings(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var out []string
	for _, m := range memos[struct {
		State    string `json:"state"`
		Warnings []struct {
			N, Of   int
			Node    string
			Reason  string
			Message string
		} `json:"warnings"`
	}](t, h) {
		s := m.State
		for _, w := range m.Warnings {
			require.Equal(t, "stalled", w.Reason)
			require.NotEmpty(t, w.Message)
			s += fmt.Sprintf(" %d/%d@%s", w.N, w.Of, w.Node)
		}
		out = append(out, s)
	}
	return out
}

// TestWarningsInTheMemoByVersion: version 8 upserts the memo at a warning
// and when a warning is heeded, listing the warnings; version 7 wrote the
// memo only at halts and decisions, without them, and its histories
// replay so.
func TestWarningsInTheMemoByVersion(t *testing.T) {
	tests := []struct {
		file    string
		version int
		want    []string
	}{
		{"v7-warned-then-halted.json", 7, []string{"halted", "escalated"}},
		{"v8-warned-then-halted.json", 8, []string{"running 1/1@Code", "halted 1/1@Code", "escalated 1/1@Code"}},
		{"v8-warning-heeded.json", 8, []string{"running 1/1@Code", "running"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h := readFixture(t, tt.file)
			assert.Equal(t, tt.version, testsuite.Inspect(h).GuardVersion)
			assert.Equal(t, tt.want, memoWarnings(t, h))
		})
	}
}

// TestV8FixturesNeedVersion8 rewrites the v8 fixtures' version marker to
// 7: a version-7 guard writes no memo at a warning, so the histories no
// longer replay.
func TestV8FixturesNeedVersion8(t *testing.T) {
	for _, file := range []string{"v8-warned-then-halted.json", "v8-warning-heeded.json"} {
		t.Run(file, func(t *testing.T) { requireNeedsVersion(t, file, 8) })
	}
}
