package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// TestSignedSignalJudgedAtItsTask (issue 36, guard version 13): a signed
// answer sent as a signal is judged at the workflow time of the task that
// delivers it, as an update is. The halt below is seconds old when it is
// answered with a window that opens when the answer is sent: the signal
// handler's clock still shows the halt's task, so before version 13 the
// signal was refused "not valid yet" (as every answer was once the halt
// was older than the window's start: `worker answer` opens it a minute
// back). The same answer by update, and `worker answer --signal`, lift
// the next halts; the analysis of the history, as recorded, takes the
// same answers from the same keys at the same halts. Under the default
// names and under renamed ones (docs/guarantees.md), each answer sent
// under the names loop.status reports.
func TestSignedSignalJudgedAtItsTask(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	for _, n := range protocolNames {
		t.Run(n.name, func(t *testing.T) { signedSignalJudgedAtItsTask(t, n.edit) })
	}
}

// protocolNames are the protocol's names the answer paths are tried
// under: the defaults, and those an agent that uses "resume" itself sets.
var protocolNames = []struct {
	name string
	edit func(*interceptor.Options)
}{
	{"default names", func(*interceptor.Options) {}},
	{"renamed", renamedProtocol},
}

func signedSignalJudgedAtItsTask(t *testing.T, names func(*interceptor.Options)) {
	ctx := testContext(t, 3*time.Minute)
	s := startSignedWith(t, ctx, names)
	runID := s.start(t, ctx, "clock-a", "ThinkingAgent")
	signedNow := s.signer(t, "clock-a", runID)
	settled := func(seq int) { s.settled(t, ctx, "clock-a", seq) }

	settled(1)
	as := s.status(t, ctx, "clock-a").Names
	require.NoError(t, s.c.SignalWorkflow(ctx, "clock-a", runID, as.For(protocol.ActionResume, true), signedNow(1, protocol.ActionResume, "by signal")))
	st := s.waitFor(t, ctx, "clock-a", func(st protocol.Status) bool {
		return st.LastDecision != nil && st.LastDecision.HaltSeq == 1 || len(st.Refused) > 0
	})
	require.Empty(t, st.Refused, "a signed resume sent as a signal, valid from when it was sent")
	assert.Equal(t, "alice", st.LastDecision.KeyID)

	settled(2)
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "clock-a", RunID: runID, UpdateName: as.For(protocol.ActionResume, false),
		Args: []any{signedNow(2, protocol.ActionResume, "by update")}, WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	require.NoError(t, h.Get(ctx, nil), "the same answer by update")

	settled(3)
	out, err := s.answer(ctx, "alice", "--workflow-id", "clock-a", "--status-query", s.statusQuery(), "--signal", "escalate", "--reason", "enough")
	require.NoError(t, err, out)
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "clock-a", "").Get(ctx, &res))
	assert.Equal(t, "escalated", res)
	st = s.status(t, ctx, "clock-a")
	assert.Empty(t, st.Refused)

	// The analysis, as recorded, takes the same answers.
	hist, err := testsuite.ExportHistory(ctx, s.c, "clock-a", "")
	require.NoError(t, err)
	got := analysedDecisions(t, history.Options{Guard: s.opts, AsRecorded: true}, hist)
	want := []protocol.Decision{
		{Action: protocol.ActionResume, By: "alice", HaltSeq: 1, Guidance: "by signal", KeyID: "alice"},
		{Action: protocol.ActionResume, By: "alice", HaltSeq: 2, Guidance: "by update", KeyID: "alice"},
		{Action: protocol.ActionEscalate, Reason: "enough", By: "alice", HaltSeq: 3, KeyID: "alice"},
	}
	assert.Equal(t, want, got)
}

// patientAgent thinks once, then waits for its own "go" signal before
// each further thought: a workflow that stands still between calls, as an
// agent waiting for a user does, with no halt in force.
func patientAgent(ctx workflow.Context) (string, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	next := workflow.GetSignalChannel(ctx, "go")
	for i := range 10 {
		if i > 0 {
			next.Receive(ctx, nil)
		}
		if err := workflow.ExecuteActivity(actx, "Think").Get(ctx, nil); err != nil {
			if interceptor.IsEscalated(err) {
				return "escalated", nil
			}
			return "", err
		}
	}
	return "done", nil
}

// TestSignedStopAndDryRunJudgedAtTheirTask: the other signal paths of
// docs/halts.md, judged at the task that delivers them. A signed halt
// (what `worker answer halt` sends), valid from when it is sent to a
// workflow that has stood still for over a second, stops its next call;
// then `worker answer --dry-run escalate`, pasted as a signal as an
// operator pastes it into the Web UI, ends that halt. Under the default
// names and renamed ones.
func TestSignedStopAndDryRunJudgedAtTheirTask(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	for _, n := range protocolNames {
		t.Run(n.name, func(t *testing.T) { signedStopAndDryRunJudgedAtTheirTask(t, n.edit) })
	}
}

func signedStopAndDryRunJudgedAtTheirTask(t *testing.T, names func(*interceptor.Options)) {
	ctx := testContext(t, 3*time.Minute)
	s := startSignedWith(t, ctx, names)
	runID := s.start(t, ctx, "clock-b", "PatientAgent")
	_, alice, err := readPrivateKey(filepath.Join(s.dir, "alice.key"))
	require.NoError(t, err)
	s.waitFor(t, ctx, "clock-b", func(st protocol.Status) bool { return st.TotalCalls == 1 })
	time.Sleep(1500 * time.Millisecond)

	now := time.Now()
	stop, err := protocol.SignAnswer(protocol.Answer{WorkflowID: "clock-b", RunID: runID, HaltSeq: 0,
		Action: protocol.ActionHalt, By: "alice", KeyID: "alice", Reason: "look at it first",
		NotBefore: now.Add(-100 * time.Millisecond), NotAfter: now.Add(5 * time.Minute)}, alice)
	require.NoError(t, err)
	as := s.status(t, ctx, "clock-b").Names
	require.NoError(t, s.c.SignalWorkflow(ctx, "clock-b", runID, as.HaltSignal, stop))
	st := s.waitFor(t, ctx, "clock-b", func(st protocol.Status) bool { return st.Stopping || len(st.Refused) > 0 })
	require.Empty(t, st.Refused, "a signed halt, valid from when it was sent")
	require.NoError(t, s.c.SignalWorkflow(ctx, "clock-b", runID, "go", nil))
	st = s.waitFor(t, ctx, "clock-b", halted(1))
	assert.Equal(t, "user_stop", string(st.Halt.HaltReason))

	out, err := s.answer(ctx, "alice", "--workflow-id", "clock-b", "--status-query", s.statusQuery(), "--dry-run", "escalate", "--reason", "pasted")
	require.NoError(t, err, out)
	require.NoError(t, s.c.SignalWorkflow(ctx, "clock-b", runID, as.For(protocol.ActionEscalate, true), signedPayload(t, out)))
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "clock-b", "").Get(ctx, &res))
	assert.Equal(t, "escalated", res)
	assert.Empty(t, s.status(t, ctx, "clock-b").Refused)
}

// signer returns alice's answer to halt seq of run runID of workflow id,
// valid from the moment it is made: later than the halt's task by the
// time the test answers.
func (s *signedServer) signer(t *testing.T, id, runID string) func(seq int, action protocol.Action, guidance string) protocol.SignedAnswer {
	t.Helper()
	_, alice, err := readPrivateKey(filepath.Join(s.dir, "alice.key"))
	require.NoError(t, err)
	return func(seq int, action protocol.Action, guidance string) protocol.SignedAnswer {
		now := time.Now()
		a, err := protocol.SignAnswer(protocol.Answer{WorkflowID: id, RunID: runID, HaltSeq: seq,
			Action: action, By: "alice", KeyID: "alice", Guidance: guidance,
			NotBefore: now.Add(-100 * time.Millisecond), NotAfter: now.Add(5 * time.Minute)}, alice)
		require.NoError(t, err)
		return a
	}
}

// settled waits for halt seq of workflow id, and until its workflow task
// is over a second old.
func (s *signedServer) settled(t *testing.T, ctx context.Context, id string, seq int) {
	t.Helper()
	s.waitFor(t, ctx, id, halted(seq))
	time.Sleep(1500 * time.Millisecond)
}

// analysedDecisions are the decisions of the halts the analysis with
// opts reads in hist, each halt answered.
func analysedDecisions(t *testing.T, opts history.Options, hist *historypb.History) []protocol.Decision {
	t.Helper()
	a, err := history.NewAnalyzer(opts)
	require.NoError(t, err)
	ex := a.History(&historypb.History{Events: hist.GetEvents()}, "")
	require.NoError(t, ex.Err)
	var got []protocol.Decision
	for _, v := range ex.Verdicts {
		if v.Halt != nil {
			require.NotNil(t, v.Decision, "halt %d answered in the analysis", v.Halt.Seq)
			got = append(got, *v.Decision)
		}
	}
	return got
}
