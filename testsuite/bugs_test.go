package testsuite_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/testsuite/internal/fixtures"
)

// skipKnownBugs lets CI stay green while a reported bug in another package
// is being fixed: set LOOPGUARD_SKIP_KNOWN_BUGS=1.
func skipKnownBugs(t *testing.T) {
	if os.Getenv("LOOPGUARD_SKIP_KNOWN_BUGS") != "" {
		t.Skip("known bug in package interceptor, skipped by LOOPGUARD_SKIP_KNOWN_BUGS")
	}
}

// TestBugFailPolicyTaskFailure shows a bug of package interceptor: with
// OnHalt: fail, a halt that ends the workflow makes the server fail a
// workflow task. The guard raises loop.halted into the workflow's own
// history through a local activity, which signals the workflow while the
// very workflow task that escalates (and so completes the workflow) is
// still running; the server refuses that task's completion with
// UnhandledCommand (a new event arrived). On the retried task the guard
// halts again and its local activity signals again, but that signal blocks
// until the local activity's deadline (about 8s, the worker then logs
// "loopguard: could not raise loop.halted ... context deadline exceeded"
// and "[TMPRL1104] Workflow task duration exceeded 5 seconds"), and only
// then does the workflow complete. The outcome is right, but every such halt
// costs a WorkflowTaskFailed event, a task retry that hits the
// workflow-task-failure metrics and alerts operators watch, and an 8-second
// stall. (Recorded in testdata/histories/fail-oscillating.json.)
//
// A fix in the guard: with OnHalt: fail (and any policy that does not
// pause), wait for the loop.halted echo to arrive (workflow.Await on
// isOwnHalt having seen it, bounded by HaltSignalTimeout) before returning
// the escalation, or do not signal the workflow itself when it does not
// pause.
func TestBugFailPolicyTaskFailure(t *testing.T) {
	skipKnownBugs(t)
	t.Parallel()
	srv := sharedServer(t)
	c := testsuite.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	queue := queueFor(t)
	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{OnHalt: interceptor.OnHaltFail}))

	id := queue + "-wf"
	began := time.Now()
	run := start(t, ctx, c, queue, id, fixtures.WorkflowScripted, fixtures.Stalling("Code", 6, 1))
	res := result(t, ctx, run)
	elapsed := time.Since(began)
	require.True(t, res.Escalated, "the fail policy escalates the stall")
	assert.Less(t, elapsed, 5*time.Second, "a scripted loop escalated at once completes promptly")
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
