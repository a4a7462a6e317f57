package e2e_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/workflows"
)

// TestFailPolicyHaltCompletesCleanly is the regression test of a bug this
// package found in package interceptor (fixed in guard version 2, commit
// 4ead3c0): with OnHalt: fail, a halt that ends the workflow made the
// server fail a workflow task. The guard raises loop.halted into the
// workflow's own history through a local activity, which signalled the
// workflow while the very task that escalated (and so completed the
// workflow) was still running; the server refused that completion with
// UnhandledCommand, and on the retried task the guard's local activity
// signalled again and blocked until its deadline (about 8s, logging
// "loopguard: could not raise loop.halted ... context deadline exceeded").
// Every such halt cost a WorkflowTaskFailed event, a task retry and an
// 8-second stall. testdata/histories/v1-fail-oscillating.json is such a
// history, recorded by the first release.
func TestFailPolicyHaltCompletesCleanly(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	queue := queueFor(t)
	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{OnHalt: protocol.OnHaltFail}))

	id := queue + "-wf"
	began := time.Now()
	run := start(t, ctx, c, queue, id, fixtures.WorkflowScripted, fixtures.Stalling("Code", 6, 1))
	res := result(t, ctx, run)
	elapsed := time.Since(began)
	require.True(t, res.Escalated, "the fail policy escalates the stall")
	// The bug's 8-second stall followed a failed workflow task, which the
	// history check below catches on any machine; the time is only logged,
	// not asserted: a loaded machine is slow, not wrong.
	t.Logf("escalated and completed in %v", elapsed.Round(time.Millisecond))
	assert.Equal(t, 5, res.Calls, "four calls made, the fifth escalated")

	h := exportHistory(t, ctx, c, id, "")
	var failures []string
	var failedAt time.Time
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			failures = append(failures, a.GetCause().String()+": "+a.GetFailure().GetMessage())
			failedAt = e.GetEventTime().AsTime()
		}
	}
	if len(failures) > 0 {
		end := h.GetEvents()[len(h.GetEvents())-1].GetEventTime().AsTime()
		t.Logf("the workflow completed %s after the failed task", end.Sub(failedAt).Round(time.Millisecond))
	}
	assert.Equal(t, 1, testsuite.Inspect(h).HaltedSignals)
	assert.Empty(t, failures, "workflow task failures in a healthy OnHalt: fail history:\n%s", strings.Join(failures, "\n"))
	assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, h.GetEvents()[len(h.GetEvents())-1].GetEventType())
}

// TestSDKReplayerReplaysEchoWait is the regression test of a second bug
// found here: a guard-version-2 halt under OnHalt fail or observe waits for
// its loop.halted echo, and the guard recognised the echo by workflow id;
// the SDK's file replayer runs every history as workflow "ReplayId", so the
// echo went unrecognised and replay reported non-determinism. The guard now
// recognises its echo by run id, which the replayer keeps.
func TestSDKReplayerReplaysEchoWait(t *testing.T) {
	for _, name := range []string{"fail-oscillating.json", "observe-identical-patch.json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(historiesDir, name)
			h, err := testsuite.ReadHistoryFile(path)
			require.NoError(t, err)
			require.GreaterOrEqual(t, testsuite.Inspect(h).GuardVersion, 2, "recorded by guard version 2 or later")
			require.NoError(t, testsuite.ReplayFile(path, testsuite.ReplayOptions{Workflows: []any{workflows.CoderVerifierLoop}}),
				"the history itself is fine: it replays under its recorded workflow id")

			g, err := interceptor.New(interceptor.Options{})
			require.NoError(t, err)
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []sdkinterceptor.WorkerInterceptor{g}, DisableDeadlockDetection: true})
			require.NoError(t, err)
			r.RegisterWorkflow(workflows.CoderVerifierLoop)
			assert.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(log.NewStructuredLogger(slog.New(slog.DiscardHandler)), path),
				"the SDK's file replayer (workflow id ReplayId) must replay a guarded history")
		})
	}
}
