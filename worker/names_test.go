package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
)

// renamedProtocol are protocol names an agent that uses "resume" itself
// would set (docs/guarantees.md).
func renamedProtocol(o *interceptor.Options) {
	o.ResumeSignal, o.EscalateSignal, o.HaltSignal = "lg.resume", "lg.escalate", "lg.halt"
	o.ResumeUpdate, o.EscalateUpdate = "lg.resume-now", "lg.escalate-now"
	o.StatusQuery = "lg.status"
}

// printedCommands are the resume and escalate commands the current
// details of workflow id show, as argument lists.
func (s *signedServer) printedCommands(t *testing.T, ctx context.Context, id string) (resume, escalate []string) {
	t.Helper()
	v, err := s.c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	m := regexp.MustCompile("(?s)Resume:\n```\n(.*?)\n```\nEscalate:\n```\n(.*?)\n```").FindStringSubmatch(md.GetCurrentDetails())
	require.NotNil(t, m, md.GetCurrentDetails())
	return s.asRun(t, m[1]), s.asRun(t, m[2])
}

// asRun turns a printed `go run ./worker answer ...` command into the
// arguments of run, against the test's server and with alice's key file
// for the placeholder.
func (s *signedServer) asRun(t *testing.T, cmd string) []string {
	t.Helper()
	words := shellWords(cmd)
	require.Equal(t, []string{"go", "run", "./worker", answerCommand}, words[:4], cmd)
	args := []string{answerCommand, "--address", s.srv.FrontendHostPort(), "--namespace", s.srv.Namespace()}
	for _, w := range words[4:] {
		if w == "your-name.key" {
			w = filepath.Join(s.dir, "alice.key")
		}
		args = append(args, w)
	}
	return args
}

// shellWords splits a command line as a POSIX shell does the quoting the
// printed commands use (single and double quotes, no escapes inside).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
			}
			in = false
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestRenamedNamesAnswerAsPrinted: with the protocol's names renamed and
// alice's key pinned, the commands the halted workflow's current details
// print lift its halts as they stand: the resume as an update, then with
// --signal added as a signal, and the escalate ends it; without name flags
// answer sends under the names loop.status reports. Sent under the default
// name, as answer did before, the resume is refused and the halt stays.
func TestRenamedNamesAnswerAsPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 2*time.Minute)
	s := startSignedWith(t, ctx, renamedProtocol)
	s.start(t, ctx, "agent-renamed", "ThinkingAgent")
	s.waitFor(t, ctx, "agent-renamed", halted(1))
	resume, escalate := s.printedCommands(t, ctx, "agent-renamed")
	assert.Contains(t, resume, "--update-name")
	assert.Contains(t, resume, "--status-query")

	st := s.status(t, ctx, "agent-renamed")
	assert.Equal(t, protocol.AnswerNames{ResumeSignal: "lg.resume", EscalateSignal: "lg.escalate", HaltSignal: "lg.halt",
		ResumeUpdate: "lg.resume-now", EscalateUpdate: "lg.escalate-now"}, st.Names, "the status reports the names")

	// Named with the default names, the guard has no update "resume".
	base := []string{answerCommand, "--address", s.srv.FrontendHostPort(), "--namespace", s.srv.Namespace(),
		"--key", filepath.Join(s.dir, "alice.key"), "--workflow-id", "agent-renamed", "--status-query", "lg.status"}
	var out, errOut strings.Builder
	require.Error(t, run(ctx, append(base, "--update-name", "resume", "resume"), &out, &errOut))
	assert.Equal(t, protocol.StateHalted, s.status(t, ctx, "agent-renamed").State)

	out.Reset()
	require.NoError(t, run(ctx, resume, &out, &errOut), "%q: %s", resume, errOut.String())
	assert.Contains(t, out.String(), "resume taken: halt 1 of workflow agent-renamed answered by alice (key alice)")

	// Without name flags, answer sends under the names the status reports.
	s.waitFor(t, ctx, "agent-renamed", halted(2))
	out.Reset()
	require.NoError(t, run(ctx, append(base, "resume"), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "resume taken: halt 2")

	// The printed command with --signal added (signals under renamed
	// names judged at their own task's time, a halt already seconds old:
	// TestSignedSignalJudgedAtItsTask/renamed).
	s.waitFor(t, ctx, "agent-renamed", halted(3))
	resume, _ = s.printedCommands(t, ctx, "agent-renamed")
	out.Reset()
	require.NoError(t, run(ctx, append(resume, "--signal"), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "sent the lg.resume signal")
	st = s.waitFor(t, ctx, "agent-renamed", halted(4))
	assert.Empty(t, st.Refused, "the signed signal was taken")

	_, escalate = s.printedCommands(t, ctx, "agent-renamed")
	out.Reset()
	require.NoError(t, run(ctx, escalate, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "escalate taken: halt 4")
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "agent-renamed", "").Get(ctx, &res))
	assert.Equal(t, "escalated", res)
}

// resetFixture is the reset run's history TestResetRunAnsweredSigned
// writes with LOOPGUARD_WRITE_FIXTURES=1, for the history and watch
// packages' tests, which need no server.
const resetFixture = "../interceptor/history/testdata/reset-signed.json"

// TestResetRunAnsweredSigned: a run reset from a halted run halts again
// and takes alice's signed resume (the live guard names it by the reset
// run's id); the analysis as recorded names the run so too and takes the
// same resume, with its key and guidance, instead of refusing it as
// signed for another execution.
func TestResetRunAnsweredSigned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	ctx := testContext(t, 2*time.Minute)
	s := startSigned(t, ctx)
	base := s.start(t, ctx, "agent-reset", "ThinkingAgent")
	s.waitFor(t, ctx, "agent-reset", halted(1))

	h, err := testsuite.ExportHistory(ctx, s.c, "agent-reset", base)
	require.NoError(t, err)
	var firstTask int64
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			firstTask = e.GetEventId()
			break
		}
	}
	runID := s.reset(t, ctx, "agent-reset", base, firstTask, "test: the loop again from the start")
	s.waitFor(t, ctx, "agent-reset", halted(1)) // the latest run: the reset one
	out, err := s.answer(ctx, "alice", "--workflow-id", "agent-reset", "--run-id", runID, "resume", "--guidance", "check the API version")
	require.NoError(t, err)
	assert.Contains(t, out, "resume taken: halt 1")
	s.waitFor(t, ctx, "agent-reset", halted(2))
	_, err = s.answer(ctx, "alice", "--workflow-id", "agent-reset", "--run-id", runID, "escalate", "--reason", "enough")
	require.NoError(t, err)
	var res string
	require.NoError(t, s.c.GetWorkflow(ctx, "agent-reset", runID).Get(ctx, &res))
	require.Equal(t, "escalated", res)

	h, err = testsuite.ExportHistory(ctx, s.c, "agent-reset", runID)
	require.NoError(t, err)
	a, err := history.NewAnalyzer(history.Options{Guard: s.opts, AsRecorded: true})
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	assertResetRunJudged(t, ex, runID)
	if os.Getenv("LOOPGUARD_WRITE_FIXTURES") != "" {
		require.NoError(t, testsuite.ExportHistoryFile(ctx, s.c, "agent-reset", runID, resetFixture))
	}
}

// assertResetRunJudged: the analysis names the reset run by its own id,
// and halt 1 ends with alice's signed resume and its guidance.
func assertResetRunJudged(t *testing.T, ex history.Execution, runID string) {
	t.Helper()
	assert.Equal(t, runID, ex.RunID)
	var halts []*interceptor.Verdict
	for i := range ex.Verdicts {
		if v := &ex.Verdicts[i]; v.Halt != nil {
			assert.Equal(t, runID, v.Halt.RunID, "halt %d", v.Halt.Seq)
			halts = append(halts, v)
		}
	}
	require.Len(t, halts, 2)
	require.NotNil(t, halts[0].Decision)
	assert.Equal(t, protocol.ActionResume, halts[0].Decision.Action)
	assert.Equal(t, "alice", halts[0].Decision.KeyID)
	assert.Equal(t, "check the API version", halts[0].Decision.Guidance)
	for _, an := range ex.Recorded.Answers {
		assert.False(t, an.Handler, "answer at event %d read as the halt handler's", an.Event)
	}
}
