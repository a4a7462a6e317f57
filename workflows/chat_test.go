package workflows_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// runChat runs ChatAgent under testsuite.Run with its guard options.
func runChat(t *testing.T, in workflows.ChatInput, answer testsuite.AnswerFunc) (testsuite.Report, workflows.ChatResult) {
	t.Helper()
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard:    workflows.ChatGuardOptions(),
		Register: workflows.Register,
		Answer:   answer,
	}, workflows.ChatAgent, in)
	t.Log(rep)
	require.NoError(t, rep.Err)
	var res workflows.ChatResult
	require.NoError(t, rep.Result(&res))
	return rep, res
}

// TestChatAgentHeedsWarning: a workflow that keeps its conversation reads
// the guard's warning with interceptor.NoticeFor, puts its directive in
// the prompt, and the model changes approach: the loop completes, never
// halted.
func TestChatAgentHeedsWarning(t *testing.T) {
	rep, res := runChat(t, workflows.ChatInput{Task: "make the cache tests pass"}, nil)
	assert.Equal(t, workflows.OutcomeCompleted, res.Outcome, "%+v", res)
	assert.Empty(t, rep.Halts)
	assert.Equal(t, 1, rep.FinalStatus.Warnings)
	require.Len(t, res.Told, 1)
	assert.True(t, strings.HasPrefix(res.Told[0], "warning: "), res.Told[0])
	assert.Contains(t, res.Told[0], "Loop ", "the prompt says the budget left")
	assert.Contains(t, res.Final, activities.GuidanceFile)
	t.Log(res.Told)
}

// TestChatAgentFollowsGuidance: a model that ignores the warning halts;
// the human resumes with guidance, which the workflow reads with
// NoticeFor and puts in the prompt, and the model follows it.
func TestChatAgentFollowsGuidance(t *testing.T) {
	rep, res := runChat(t, workflows.ChatInput{Task: "make the cache tests pass", Stubborn: true}, testsuite.ResumeWithGuidance(workflows.ChatGuidance))
	assert.Equal(t, workflows.OutcomeCompleted, res.Outcome, "%+v", res)
	require.Len(t, rep.Halts, 1)
	assert.Len(t, rep.Halts[0].Warnings, 1, "the halt lists the warning it ignored")
	require.Len(t, res.Told, 2)
	assert.Equal(t, "guidance: "+workflows.ChatGuidance, res.Told[1][:len("guidance: ")+len(workflows.ChatGuidance)])
	assert.Contains(t, res.Final, "as the reviewer said")
}

// TestNoticeForUnguarded: an unguarded workflow is told nothing.
func TestNoticeForUnguarded(t *testing.T) {
	rep := testsuite.Run(t, testsuite.RunOptions{Unguarded: true, Register: workflows.Register},
		workflows.ChatAgent, workflows.ChatInput{Task: "t", MaxTurns: 12})
	require.NoError(t, rep.Err)
	var res workflows.ChatResult
	require.NoError(t, rep.Result(&res))
	assert.Empty(t, res.Told)
	assert.Equal(t, workflows.OutcomeGaveUp, res.Outcome)
}
