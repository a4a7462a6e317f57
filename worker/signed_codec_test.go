package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/testsuite"
)

// TestSignedAnswersUnderCodec: with a codec that encrypts every payload
// (the client's and the worker's data converter), signed answers sent by
// signal and by update, each a while after its halt, are taken at the
// task that delivers them: the guard verifies the signature on the
// payload its converter decodes. Nothing of them is plain text in the
// history, and the analysis, given the codec, takes the same answers.
func TestSignedAnswersUnderCodec(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 3*time.Minute)
	dc := scripted.EncryptingDataConverter()
	s := startSignedConv(t, ctx, func(*interceptor.Options) {}, dc)
	runID := s.start(t, ctx, "codec-a", "ThinkingAgent")
	signed := s.signer(t, "codec-a", runID)
	settled := func(seq int) { s.settled(t, ctx, "codec-a", seq) }

	settled(1)
	require.NoError(t, s.c.SignalWorkflow(ctx, "codec-a", runID, protocol.DefaultResumeSignal, signed(1, protocol.ActionResume, "by signal")))
	settled(2)
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "codec-a", RunID: runID, UpdateName: protocol.DefaultResumeUpdate,
		Args: []any{signed(2, protocol.ActionResume, "by update")}, WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	require.NoError(t, h.Get(ctx, nil))
	settled(3)
	require.NoError(t, s.c.SignalWorkflow(ctx, "codec-a", runID, protocol.DefaultEscalateSignal, signed(3, protocol.ActionEscalate, "")))
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "codec-a", "").Get(ctx, &res))
	assert.Equal(t, "escalated", res)
	assert.Empty(t, s.status(t, ctx, "codec-a").Refused)

	hist, err := testsuite.ExportHistory(ctx, s.c, "codec-a", "")
	require.NoError(t, err)
	raw, err := testsuite.MarshalHistory(hist)
	require.NoError(t, err)
	for _, plain := range []string{"by signal", "by update", `"keyId"`} {
		assert.NotContains(t, string(raw), plain, "plain text in the history")
	}
	got := analysedDecisions(t, history.Options{Guard: s.opts, AsRecorded: true, DataConverter: dc}, hist)
	want := []protocol.Decision{
		{Action: protocol.ActionResume, By: "alice", HaltSeq: 1, Guidance: "by signal", KeyID: "alice"},
		{Action: protocol.ActionResume, By: "alice", HaltSeq: 2, Guidance: "by update", KeyID: "alice"},
		{Action: protocol.ActionEscalate, By: "alice", HaltSeq: 3, KeyID: "alice"},
	}
	assert.Equal(t, want, got)
}
