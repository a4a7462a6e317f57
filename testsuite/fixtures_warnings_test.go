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
	"github.com/loopguard/loopguard/interceptor/protocol"
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

// TestWarningsInTheMemo: the guard upserts the memo at a warning and when
// a warning is heeded, listing the warnings in force.
func TestWarningsInTheMemo(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"warned-then-halted-memo.json", []string{"running 1/1@Code", "halted 1/1@Code", "escalated 1/1@Code"}},
		{"warning-heeded.json", []string{"running 1/1@Code", "running"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h := readFixture(t, tt.file)
			assert.Equal(t, interceptor.GuardVersion, testsuite.Inspect(h).GuardVersion)
			assert.Equal(t, tt.want, memoWarnings(t, h))
		})
	}
}

// TestV8SamplesSteered: the samples' steered scenarios, recorded on the
// real server. In reviewed the halt handler's Review activity is scheduled
// after the halt and before any later Code call; in guided a resume update
// is; in both the later Code calls carry the guidance in their notice
// header, and the loop completes.
func TestV8SamplesSteered(t *testing.T) {
	for _, tt := range []struct{ file, answer string }{
		{"samples-reviewed-handler-race.json", "Review"},
		{"samples-guided.json", "update resume"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			h := readFixture(t, tt.file)
			var seq []string
			for _, e := range h.GetEvents() {
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
					name := a.GetActivityType().GetName()
					if p := a.GetHeader().GetFields()[protocol.NoticeHeader]; p != nil && name == "Code" {
						var n protocol.Notice
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
