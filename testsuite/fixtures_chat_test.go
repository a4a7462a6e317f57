package testsuite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// TestChatFixturesHeededInWorkflow: workflows.ChatAgent, recorded on the
// real server, read what the guard had to tell its model in workflow code
// (interceptor.NoticeFor) and put it in the model's prompt: in
// chat-heeds-warning the warning's directive, never halted; in
// chat-guided the human's guidance, after the resume signal and never
// before. The histories replay with the fixture replay tests
// (TestFixturesReplay and the drift tests); they need guard version 8.
func TestChatFixturesHeededInWorkflow(t *testing.T) {
	for _, tt := range []struct {
		file string
		want string // the prefix of the system message the prompt gains
	}{
		{"chat-heeds-warning.json", activities.WarningPrefix},
		{"chat-guided.json", activities.GuidancePrefix + workflows.ChatGuidance},
	} {
		t.Run(tt.file, func(t *testing.T) {
			h := readFixture(t, tt.file)
			var seq []string
			for _, e := range h.GetEvents() {
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Chat" {
					var req activities.ChatRequest
					require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &req))
					told := "Chat"
					for _, m := range req.Messages {
						if m.Role == "system" && strings.HasPrefix(m.Text, tt.want) {
							told = "Chat told"
						}
					}
					seq = append(seq, told)
				}
				if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == protocol.DefaultResumeSignal {
					seq = append(seq, "resume")
				}
			}
			first := -1
			for i, s := range seq {
				if s == "Chat told" {
					first = i
					break
				}
			}
			require.Positive(t, first, "the workflow put it in a prompt: %v", seq)
			if strings.Contains(tt.file, "guided") {
				// The paused call's prompt was built before the halt; the
				// next model call's carries the guidance.
				r := slices.Index(seq, "resume")
				assert.True(t, r >= 0 && r < first, "guidance reaches a model call after the resume, none before: %v", seq)
			} else {
				assert.NotContains(t, seq, "resume")
			}
			assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, h.GetEvents()[len(h.GetEvents())-1].GetEventType())
		})
	}
}
