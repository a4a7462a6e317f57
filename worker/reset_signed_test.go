package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// TestResetKeepsSignedAnswers: a run reset to a point after a signed
// answer replays the base run's events, that answer among them, signed for
// the base run. The reset run has an id of its own, so a guard that
// checked answers against that id alone refused it in replay, made other
// commands than the history holds, and the reset run's workflow task failed
// for ever (nondeterminism). An answer signed for the run the reset chain
// started from (workflow.Info.OriginalRunID) is this execution's: the
// reset run goes on from the reset point, halts again, takes an answer
// signed for itself, and the analysis reads both answers as the guard did.
func TestResetKeepsSignedAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 2*time.Minute)
	s := startSigned(t, ctx)
	base := s.start(t, ctx, "agent-reset-late", "ThinkingAgent")
	s.waitFor(t, ctx, "agent-reset-late", halted(1))
	out, err := s.answer(ctx, "alice", "--workflow-id", "agent-reset-late", "--signal", "resume", "--guidance", "before the reset")
	require.NoError(t, err, out)
	s.waitFor(t, ctx, "agent-reset-late", halted(2))

	// The reset point: the last workflow task completed so far, after the
	// answer.
	h, err := testsuite.ExportHistory(ctx, s.c, "agent-reset-late", base)
	require.NoError(t, err)
	var point, answered int64
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			point = e.GetEventId()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == "resume" {
				answered = e.GetEventId()
			}
		}
	}
	require.Greater(t, answered, int64(0))
	require.Greater(t, point, answered, "the reset point comes after the answer")
	runID := s.reset(t, ctx, "agent-reset-late", base, point, "test: after the answer")

	st := s.waitFor(t, ctx, "agent-reset-late", func(st protocol.Status) bool { return st.Halt != nil && st.Halt.RunID == runID })
	assert.Equal(t, protocol.StateHalted, st.State)
	out, err = s.answer(ctx, "alice", "--workflow-id", "agent-reset-late", "--run-id", runID, "escalate", "--reason", "after the reset")
	require.NoError(t, err, out)
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "agent-reset-late", runID).Get(ctx, &res))
	assert.Equal(t, "escalated", res)

	h, err = testsuite.ExportHistory(ctx, s.c, "agent-reset-late", runID)
	require.NoError(t, err)
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			assert.Equal(t, enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, a.GetCause(), "event %d: %s", e.GetEventId(), a.GetFailure().GetMessage())
		}
	}
	a, err := history.NewAnalyzer(history.Options{Guard: s.opts, AsRecorded: true})
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	var got []protocol.Decision
	for _, v := range ex.Verdicts {
		if v.Halt != nil && v.Decision != nil {
			got = append(got, *v.Decision)
		}
	}
	require.Len(t, got, 2, "%+v", got)
	assert.Equal(t, "before the reset", got[0].Guidance)
	assert.Equal(t, "alice", got[0].KeyID)
	assert.Equal(t, protocol.ActionEscalate, got[1].Action)
	assert.Equal(t, "after the reset", got[1].Reason)
}

// reset resets run of workflow id to the workflow task that ended at
// event point, and returns the new run's id.
func (s *signedServer) reset(t *testing.T, ctx context.Context, id, run string, point int64, reason string) string {
	t.Helper()
	r, err := s.c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 s.srv.Namespace(),
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: id, RunId: run},
		Reason:                    reason,
		WorkflowTaskFinishEventId: point,
		RequestId:                 id + "-reset",
	})
	require.NoError(t, err)
	require.NotEqual(t, run, r.GetRunId())
	return r.GetRunId()
}
