package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
	"github.com/loopguard/loopguard/worker/watch"
	"github.com/loopguard/loopguard/workflows"
)

// TestAnswerWatchedTypeScriptRun: TypeScript loops that worker watch
// paused (no guard inside them) are answered with worker answer alone:
// list lists them; status prints the pause and the halt it answered with the message and
// evidence the watcher's /status holds; escalate and a resume with
// guidance say what to do instead; resume unpauses, signed (with a note
// that nothing checks the key) and plain; an answer to a run that has
// closed says so.
func TestAnswerWatchedTypeScriptRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and a TypeScript worker")
	}
	typescript.Require(t)
	ctx := testContext(t, 6*time.Minute)
	srv := devtest.StartServer(t, devserver.Options{Ephemeral: true, FreePorts: true, UIDisabled: true, StartTimeout: 60 * time.Second})
	c := devtest.NewClient(t, srv)
	const queue = "ts-answered"
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
		TaskQueue: queue, ModelLatency: 100 * time.Millisecond})
	require.NoError(t, err)

	// The watcher as `worker watch` runs it: the default policy.
	opts, err := analyzeOptions(defaultPolicy, "")
	require.NoError(t, err)
	watcher, err := watch.New(watch.Options{Client: c, Namespace: srv.Namespace(), Query: `TaskQueue="` + queue + `"`,
		Guard: opts, PollInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() { watched <- watcher.Run(watchCtx) }()
	t.Cleanup(func() { stopWatch(); <-watched })

	dir := t.TempDir()
	var keyOut strings.Builder
	require.NoError(t, run(ctx, []string{keygenCommand, "--id", "alice", "--out", filepath.Join(dir, "alice")}, &keyOut, &keyOut))
	answer := func(args ...string) (string, error) {
		var out, errOut strings.Builder
		err := run(ctx, append([]string{answerCommand, "--address", srv.FrontendHostPort(), "--namespace", srv.Namespace()}, args...), &out, &errOut)
		return out.String(), err
	}

	ids := []string{"ts-signed", "ts-plain"}
	for _, id := range ids {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
			workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3, MaxTurns: 200})
		require.NoError(t, err)
	}
	status := func(id string) enumspb.WorkflowExecutionStatus {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		require.NoError(t, err)
		return d.GetWorkflowExecutionInfo().GetStatus()
	}
	for _, id := range ids {
		require.Eventually(t, func() bool { return status(id) == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED },
			3*time.Minute, 100*time.Millisecond, "the watcher does not pause %s\n%s", id, w.Output())
	}

	// Both are listed as waiting, with the command that shows each.
	var list string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if list, err = answer("list"); err == nil && strings.Count(list, "paused (Workflow Pause)") == 2 {
			break
		}
	}
	require.NoError(t, err)
	for _, id := range ids {
		assert.Regexp(t, `(?m)^`+id+`\s+\S+\s+`+workflows.WorkflowParallelTool+`\s+paused \(Workflow Pause\)$`, list)
	}
	assert.Contains(t, list, "answer --workflow-id ID status")
	// This server has no LoopGuardState: list says it lists pauses only.
	assert.Contains(t, list, "(the search attribute LoopGuardState is not registered here: listing the runs Temporal's Workflow Pause holds only")

	for _, id := range ids {
		out, err := answer("--workflow-id", id, "status")
		require.NoError(t, err)
		var ps PausedStatus
		require.NoError(t, json.Unmarshal([]byte(out), &ps), out)
		assert.True(t, ps.Watched && !ps.Guarded, "%+v", ps)
		assert.True(t, strings.HasPrefix(ps.PauseReason, "loopguard: "), ps.PauseReason)
		require.NotNil(t, ps.Halt, out)
		assert.NotEmpty(t, ps.Halt.Message)
		assert.NotEmpty(t, ps.Halt.SuggestedActions)
		assert.Contains(t, ps.Answer, "answer --workflow-id "+id+" unpause")
		// The halt is the one the watcher paused for, as its /status shows it.
		var shown *watch.ExecutionStatus
		require.Eventually(t, func() bool {
			for _, e := range watcher.Status().Executions {
				if e.WorkflowID == id && len(e.Halts) > 0 {
					shown = &e
					return true
				}
			}
			return false
		}, time.Minute, 50*time.Millisecond)
		got := shown.Halts[len(shown.Halts)-1].Event
		assert.Equal(t, got.Seq, ps.Halt.Seq)
		assert.Equal(t, got.Message, ps.Halt.Message)
		assert.True(t, reflect.DeepEqual(got.Evidence, ps.Halt.Evidence), "status %+v, watcher %+v", ps.Halt.Evidence, got.Evidence)
	}

	_, err = answer("--workflow-id", "ts-plain", "escalate")
	require.Error(t, err)
	assert.Equal(t, "workflow ts-plain is paused by worker watch and has no guard inside to escalate: "+
		"resume (or unpause) lets it go on; end it from the UI or with `temporal workflow terminate`", err.Error())
	_, err = answer("--workflow-id", "ts-plain", "resume", "--guidance", "read the docs")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no guard inside to take --guidance or --extend: resume without them")

	out, err := answer("--workflow-id", "ts-signed", "--key", filepath.Join(dir, "alice.key"), "resume", "--reason", "checked")
	require.NoError(t, err)
	assert.Contains(t, out, "unpaused workflow ts-signed run ")
	assert.Contains(t, out, "(not signed: a watched run has no guard to check key alice)")
	out, err = answer("--workflow-id", "ts-plain", "--by", "ana", "resume")
	require.NoError(t, err)
	assert.Contains(t, out, "unpaused workflow ts-plain run ")
	for _, id := range ids {
		require.NotEqual(t, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED, status(id), id)
	}

	// An answer to a run that has closed says so.
	require.NoError(t, c.TerminateWorkflow(ctx, "ts-plain", "", "the test ends the loop"))
	_, err = answer("--workflow-id", "ts-plain", "unpause")
	require.Error(t, err)
	assert.Regexp(t, `^workflow ts-plain run \S+ has closed \(terminated\): there is nothing to unpause$`, err.Error())
	require.NoError(t, c.TerminateWorkflow(ctx, "ts-signed", "", "the test ends the loop"))
}
