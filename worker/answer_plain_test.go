package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap/zapcore"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// startPlain is the embedded server with a worker whose guard has no
// operator keys: it takes plain answers, as the temporal CLI sends them.
// Alice's key pair is made all the same, for the answer sent signed.
func startPlain(t *testing.T, ctx context.Context) *signedServer {
	t.Helper()
	dir := t.TempDir()
	var out strings.Builder
	require.NoError(t, run(ctx, []string{keygenCommand, "--id", "alice", "--out", filepath.Join(dir, "alice")}, &out, &out))
	cfg, err := parseFlags([]string{"--ephemeral", "--port", "0", "--ui-port", "0", "--no-ui"}, noEnv)
	require.NoError(t, err)
	opts, err := guardOptions(cfg)
	require.NoError(t, err)
	require.Empty(t, opts.OperatorKeys)
	opts.SearchAttribute = embeddedSearchAttribute(cfg) // as run does on the embedded server
	logger := testLogger(t, zapcore.ErrorLevel)
	srv, err := startEmbedded(ctx, cfg, logger)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := srv.NewClient(client.Options{Logger: newSDKLogger(logger)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	guard, err := interceptor.New(opts)
	require.NoError(t, err)
	w := sdkworker.New(c, signedQueue, sdkworker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{guard}})
	registerSigned(w)
	w.RegisterActivityWithOptions(func(context.Context) (string, error) { return "same thought", nil }, activity.RegisterOptions{Name: "Think"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return &signedServer{srv: srv, c: c, opts: opts, dir: dir}
}

// plainAnswer runs the answer subcommand without a key.
func (s *signedServer) plainAnswer(ctx context.Context, args ...string) (string, error) {
	var out, errOut strings.Builder
	full := append([]string{answerCommand, "--address", s.srv.FrontendHostPort(), "--namespace", s.srv.Namespace()}, args...)
	err := run(ctx, full, &out, &errOut)
	return out.String(), err
}

// TestPlainAnswersOnServer: against a worker whose guard has no operator
// keys, worker answer with no --key is the whole answer path without the
// temporal CLI: status prints the halt, resume (with guidance) lifts it,
// escalate ends the loop, and each refusal is one line that says what to
// do: a signed answer to this worker, an answer to a run that has
// closed, an unpause of a run that is not paused.
func TestPlainAnswersOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 3*time.Minute)
	s := startPlain(t, ctx)
	s.start(t, ctx, "plain-a", "ThinkingAgent")
	s.waitFor(t, ctx, "plain-a", halted(1))

	out, err := s.plainAnswer(ctx, "--workflow-id", "plain-a", "status")
	require.NoError(t, err)
	assert.Contains(t, out, `"state": "halted"`)
	assert.Contains(t, out, `"seq": 1`)

	_, err = s.answer(ctx, "alice", "--workflow-id", "plain-a", "resume")
	require.Error(t, err)
	assert.Equal(t, "resume refused: this worker's guard takes plain answers (it has no operator keys): send it again without --key", err.Error())

	out, err = s.plainAnswer(ctx, "--workflow-id", "plain-a", "--by", "ana", "resume", "--guidance", "read the failing test first")
	require.NoError(t, err, out)
	assert.Contains(t, out, "resume taken: halt 1 of workflow plain-a answered by ana\n")
	st := s.waitFor(t, ctx, "plain-a", halted(2))
	require.NotNil(t, st.LastDecision)
	assert.Equal(t, "read the failing test first", st.LastDecision.Guidance)

	out, err = s.plainAnswer(ctx, "--workflow-id", "plain-a", "--by", "ana", "escalate", "--reason", "stuck for good")
	require.NoError(t, err, out)
	assert.Contains(t, out, "escalate taken: halt 2 of workflow plain-a answered by ana\n")
	var result string
	require.NoError(t, s.c.GetWorkflow(ctx, "plain-a", "").Get(ctx, &result))
	assert.Equal(t, "escalated", result)

	_, err = s.plainAnswer(ctx, "--workflow-id", "plain-a", "resume")
	require.Error(t, err)
	assert.Regexp(t, `^workflow plain-a run \S+ has closed \(completed\): there is nothing to resume$`, err.Error())

	// A run the guard halted is listed, with its reason, and is not paused
	// by Temporal: nothing to unpause.
	s.start(t, ctx, "plain-b", "ThinkingAgent")
	s.waitFor(t, ctx, "plain-b", halted(1))
	listed := func(want string) {
		t.Helper()
		var out string
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			// Visibility follows the run a moment later.
			if out, err = s.plainAnswer(ctx, "list"); err == nil && regexp.MustCompile(want).MatchString(out) {
				break
			}
		}
		require.NoError(t, err)
		require.Regexp(t, want, out)
		assert.Contains(t, out, "WORKFLOW ID")
		assert.NotContains(t, out, "plain-a ", "an escalated run waits for nothing")
	}
	listed(`(?m)^plain-b\s+\S+\s+ThinkingAgent\s+halted:stalled$`)
	_, err = s.plainAnswer(ctx, "--workflow-id", "plain-b", "unpause")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workflow plain-b is not paused")

	// Paused by a person with Temporal's Workflow Pause: a paused run
	// takes no query, so status reports the pause, and that the guard
	// inside takes its answers after the unpause; a resume says so; unpause
	// lifts it.
	_, err = s.c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: s.srv.Namespace(), WorkflowId: "plain-b", Identity: "test", Reason: "looping", RequestId: "pause-plain-b",
	})
	require.NoError(t, err)
	listed(`(?m)^plain-b\s+\S+\s+ThinkingAgent\s+paused \(Workflow Pause\)$`)
	out, err = s.plainAnswer(ctx, "--workflow-id", "plain-b", "status")
	require.NoError(t, err)
	var ps PausedStatus
	require.NoError(t, json.Unmarshal([]byte(out), &ps), out)
	assert.Equal(t, PausedStatus{WorkflowID: "plain-b", RunID: ps.RunID, State: "paused", PausedBy: "test", PauseReason: "looping", PausedAt: ps.PausedAt,
		Guarded: true, Policy: defaultPolicy, Halts: 0, Answer: "lift the pause with " + progName + " answer --workflow-id plain-b unpause"}, ps)
	_, err = s.plainAnswer(ctx, "--workflow-id", "plain-b", "resume")
	require.Error(t, err)
	assert.Equal(t, "workflow plain-b is paused (Temporal's Workflow Pause, by test): lift the pause with "+progName+" answer --workflow-id plain-b unpause, then answer it", err.Error())
	out, err = s.plainAnswer(ctx, "--workflow-id", "plain-b", "--reason", "checked", "unpause")
	require.NoError(t, err)
	assert.Contains(t, out, "unpaused workflow plain-b run ")
	st = s.waitFor(t, ctx, "plain-b", halted(1)) // answerable again
	assert.Equal(t, protocol.StateHalted, st.State)
}

// TestAnswerActionsParse: status, unpause and list are not signed; list
// takes no workflow id, the others need one.
func TestAnswerActionsParse(t *testing.T) {
	for _, tc := range []struct {
		give []string
		want string // "" parses
	}{
		{give: []string{"--workflow-id", "w", "resume"}},
		{give: []string{"--workflow-id", "w", "status"}},
		{give: []string{"--workflow-id", "w", "unpause"}},
		{give: []string{"--workflow-id", "w", "--key", "k.key", "unpause"}, want: "answer: unpause is not signed: drop --key"},
		{give: []string{"--workflow-id", "w", "pause"}, want: `answer: "pause" is not resume, escalate, halt, status, unpause or list`},
		{give: []string{"list"}},
		{give: []string{"list", "--search-attribute", "none"}},
		{give: []string{"--workflow-id", "w", "list"}, want: "answer: list lists every run waiting for an answer: drop --workflow-id"},
		{give: []string{"resume"}, want: "answer: --workflow-id is required"},
	} {
		_, err := parseAnswerFlags(tc.give)
		if tc.want == "" {
			assert.NoError(t, err, tc.give)
			continue
		}
		if assert.Error(t, err, tc.give) {
			assert.Equal(t, tc.want, err.Error())
		}
	}
}
