package watch

import (
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/loopguard/loopguard/activities"
)

// A looping agent on a worker without the interceptor is paused with
// the watcher's reason; a progressing one is left alone; the analysis of
// the history afterwards finds the same halt.
func TestWatchPausesLoop(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	w, _ := ts.watcher(t, Options{})
	stuck := ts.agent(t, ctx, "stuck", plainQueue, activities.ParallelStuck)
	prog := ts.agent(t, ctx, "progressing", plainQueue, activities.ParallelProgressing)

	eventually(t, ctx, "the stuck agent paused", func() bool {
		return ts.describe(t, ctx, "stuck", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
	})
	d := ts.describe(t, ctx, "stuck", "")
	reason := d.GetWorkflowExtendedInfo().GetPauseInfo().GetReason()
	if !strings.HasPrefix(reason, "loopguard: ") {
		t.Errorf("pause reason %q", reason)
	}
	if err := prog.Get(ctx, nil); err != nil {
		t.Fatalf("progressing agent: %v", err)
	}
	if n := count(ts.history(t, ctx, "progressing", prog.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 0 {
		t.Errorf("progressing agent paused %d times", n)
	}

	events := ts.history(t, ctx, "stuck", stuck.GetRunID())
	after := analyse(t, events)
	st := w.Status()
	t.Logf("status: %+v", st)
	var hs []HaltStatus
	for _, e := range st.Executions {
		if e.WorkflowID == "stuck" {
			hs = e.Halts
		}
	}
	if len(hs) == 0 || len(after.Halts) != len(hs) {
		t.Fatalf("watcher halts %d, analysis afterwards %d", len(hs), len(after.Halts))
	}
	for i, h := range after.Halts {
		ev := h.Verdict.Halt
		if h.Verdict.Call != hs[i].Call || string(ev.Detector) != hs[i].Detector || ev.Node != hs[i].Node {
			t.Errorf("halt %d: watcher call %d %s at %s, analysis call %d %s at %s", i+1,
				hs[i].Call, hs[i].Detector, hs[i].Node, h.Verdict.Call, ev.Detector, ev.Node)
		}
	}
	last := after.Halts[len(after.Halts)-1]
	t.Logf("halt at call %d, paused %s later, %d calls scheduled in between", last.Verdict.Call, last.PausedAt.Sub(last.Time), last.CallsBefore)
	if n := count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
		t.Errorf("%d Paused events, want 1", n)
	}
}
