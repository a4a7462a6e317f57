package watch

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/loopguard/loopguard/activities"
)

// Nothing lost, nothing twice: a watcher killed before the halt and one
// started after it reach the same halt, and two watchers at once pause
// once per halt; a watcher started after an unpause does not pause the
// answered halt again.
func TestWatchRestartAndTwoWatchers(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	run := ts.agent(t, ctx, "stuck", plainQueue, activities.ParallelStuck)

	// Killed mid-run, before the halt (the agent trips near call 26).
	_, stop := ts.watcher(t, Options{})
	eventually(t, ctx, "a few calls", func() bool {
		return count(ts.history(t, ctx, "stuck", run.GetRunID()), enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) >= 5
	})
	stop()
	// Two watchers at once.
	a, stopA := ts.watcher(t, Options{Identity: "watcher-a"})
	b, stopB := ts.watcher(t, Options{Identity: "watcher-b"})
	pausedEvents := func() int {
		return count(ts.history(t, ctx, "stuck", run.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED)
	}
	eventually(t, ctx, "a pause", func() bool { return pausedEvents() > 0 })
	time.Sleep(time.Second) // both have seen the halt
	if n := pausedEvents(); n != 1 {
		t.Errorf("two watchers: %d Paused events, want 1", n)
	}
	stA, stB := a.Status(), b.Status()
	if len(stA.Executions) != 1 || len(stB.Executions) != 1 {
		t.Fatalf("status: %+v / %+v", stA, stB)
	}
	ha, hb := stA.Executions[0].Halts, stB.Executions[0].Halts
	if len(ha) != len(hb) || ha[0].Call != hb[0].Call || ha[0].Detector != hb[0].Detector || ha[0].Node != hb[0].Node {
		t.Errorf("the watchers' verdicts differ: %+v / %+v", ha, hb)
	}
	after := analyse(t, ts.history(t, ctx, "stuck", run.GetRunID()))
	if after.Halts[0].Verdict.Call != ha[0].Call {
		t.Errorf("analysis afterwards halts at call %d, the watchers at %d", after.Halts[0].Verdict.Call, ha[0].Call)
	}
	stopA()
	stopB()

	// Unpaused with no watcher running, then a new watcher: the answered
	// halt is not paused again; the next one is, once.
	if _, err := ts.c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "stuck", Identity: "operator",
	}); err != nil {
		t.Fatal(err)
	}
	c, _ := ts.watcher(t, Options{})
	eventually(t, ctx, "the second pause", func() bool { return pausedEvents() == 2 })
	time.Sleep(time.Second)
	s := analyse(t, ts.history(t, ctx, "stuck", run.GetRunID()))
	ids := map[string]int{}
	for _, h := range s.Halts {
		if h.Answered {
			ids[h.PausedBy]++
		}
	}
	if n := pausedEvents(); n != 2 || len(ids) != 2 {
		t.Errorf("after the restart: %d Paused events for %d pause requests (%v), want 2 and 2; halts %+v", n, len(ids), ids, s.Halts)
	}
	// Counted once: the restarted watcher counts only the halts the first
	// pause did not answer, and shows the first pause's action.
	first := s.Halts[0].PausedBy
	fresh := 0
	for _, h := range s.Halts {
		if h.PausedBy != first {
			fresh++
		}
	}
	stC := c.Status()
	// Warnings too: those up to the halt the first pause answered were
	// counted by the watcher that paused it, the others after the restart.
	if stA.Warnings == 0 || stA.Warnings+stC.Warnings != s.WarningsSeen {
		t.Errorf("warnings: %d before the restart and %d after it, want %d in all, some before", stA.Warnings, stC.Warnings, s.WarningsSeen)
	}
	if stC.Halts != fresh || len(stC.Executions) != 1 {
		t.Fatalf("the restarted watcher counts %d halts, want %d (those after the first pause); status %+v", stC.Halts, fresh, stC)
	}
	if h := stC.Executions[0].Halts[0]; h.Action != "pause" || !h.Answered {
		t.Errorf("the halt an earlier process paused: action %q, answered %v; want pause", h.Action, h.Answered)
	}
}
