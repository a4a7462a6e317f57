package testsuite_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
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
	for _, file := range []string{"v8-warned-then-halted.json", "v8-warning-heeded.json", "v8-samples-reviewed.json", "v8-samples-guided.json", "v8-chat-heeds-warning.json", "v8-chat-guided.json"} {
		t.Run(file, func(t *testing.T) { requireNeedsVersion(t, file, 8) })
	}
}

// TestV8SamplesSteered: the samples' steered scenarios, recorded on the
// real server. In reviewed the halt handler's Review activity is scheduled
// after the halt and before any later Code call; in guided a resume update
// is; in both the later Code calls carry the guidance in their notice
// header, and the loop completes.
func TestV8SamplesSteered(t *testing.T) {
	for _, tt := range []struct{ file, answer string }{
		{"v8-samples-reviewed.json", "Review"},
		{"v8-samples-guided.json", "update resume"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			h := readFixture(t, tt.file)
			var seq []string
			for _, e := range h.GetEvents() {
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
					name := a.GetActivityType().GetName()
					if p := a.GetHeader().GetFields()[interceptor.NoticeHeader]; p != nil && name == "Code" {
						var n interceptor.Notice
						require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &n))
						if n.Guidance != "" {
							name += " guided"
						}
					}
					seq = append(seq, name)
				}
				if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
					seq = append(seq, "update "+a.GetAcceptedRequest().GetInput().GetName())
				}
			}
			at := slices.Index(seq, tt.answer)
			require.Positive(t, at, "%v", seq)
			assert.NotContains(t, seq[:at], "Code guided", "no guidance before the answer")
			assert.Contains(t, seq[at:], "Code guided", "the coder is told after it: %v", seq)
			assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, h.GetEvents()[len(h.GetEvents())-1].GetEventType())
		})
	}
}
