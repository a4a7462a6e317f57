package typescript_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/loopguard/loopguard/worker/e2e/typescript"
)

// TestPauseRaceRate measures how often a pause at a random moment of a
// busy TypeScript loop lands on a workflow task scheduled but not started
// (the case that wedges TypeScript runs: TestPauseBeforeWorkflowTaskStarted).
// Long: it runs only with LOOPGUARD_TS_PAUSE_RACE=<pauses>, e.g. 20.
func TestPauseRaceRate(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOOPGUARD_TS_PAUSE_RACE"))
	if n <= 0 {
		t.Skip("set LOOPGUARD_TS_PAUSE_RACE=<pauses> to measure")
	}
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*30*time.Second+2*time.Minute)
	defer cancel()
	srv, c := pauseServer(t)
	for _, tt := range []struct {
		latency time.Duration
		// quiet: pause only once DescribeWorkflowExecution shows no
		// workflow task waiting to start (it may start one in between).
		quiet bool
	}{{0, false}, {50 * time.Millisecond, false}, {0, true}, {50 * time.Millisecond, true}} {
		latency := tt.latency
		queue := fmt.Sprintf("race-%d-%v", latency.Milliseconds(), tt.quiet)
		_, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
			TaskQueue: queue, ModelLatency: latency})
		require.NoError(t, err)
		hit := 0
		for i := range n {
			id := fmt.Sprintf("%s-%d", queue, i)
			run := startLoop(ctx, t, c, id, queue, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 4)
			time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
			for tt.quiet {
				d, err := c.DescribeWorkflowExecution(ctx, id, run.GetRunID())
				require.NoError(t, err)
				if d.GetPendingWorkflowTask().GetState() != enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED {
					break
				}
			}
			pause(ctx, t, c, srv.Namespace(), id, "", id)
			for _, e := range export(ctx, t, c, id).GetEvents() {
				if e.GetWorkflowTaskFailedEventAttributes().GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
					hit++
				}
			}
			require.NoError(t, c.TerminateWorkflow(ctx, id, run.GetRunID(), "measured"))
		}
		t.Logf("model latency %v, pause when no task waits %v: %d of %d pauses landed on a workflow task scheduled but not started", latency, tt.quiet, hit, n)
	}
}
