package watch

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// A looping agent on a worker without the interceptor is paused with
// the watcher's reason; a progressing one is left alone; the analysis of
// the history afterwards finds the same halt.
func TestWatchPausesLoop(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	guard := workflows.ParallelGuardOptions()
	ts.worker(t, guardedQueue, &guard)
	// The watcher sees both queues: the interceptor's run is left alone.
	w, _ := ts.watcher(t, Options{Query: fmt.Sprintf("TaskQueue=%q OR TaskQueue=%q", plainQueue, guardedQueue)})
	guarded := ts.agent(t, ctx, "guarded", guardedQueue, activities.ParallelStuck)
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
	// The docs' listing of paused executions finds it.
	eventually(t, ctx, `ExecutionStatus="Paused" to list it`, func() bool {
		l, err := ts.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: `ExecutionStatus="Paused"`})
		return err == nil && len(l.GetExecutions()) == 1 && l.GetExecutions()[0].GetExecution().GetWorkflowId() == "stuck"
	})
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
	if len(hs) == 0 || !sameHalts(hs, after.halts()) {
		t.Fatalf("the watcher's halts %+v, the analysis afterwards %+v", hs, after.halts())
	}
	last := after.halts()[len(after.halts())-1]
	t.Logf("halt at call %d, paused %s later, %d calls scheduled in between", last.Verdict.Call, last.PausedAt.Sub(last.Time), last.CallsBefore)
	// /status shows each halt as analyze reports it for the same history:
	// its message, evidence and suggested actions, not only its names.
	analyzed := judgedHalts(t, events)
	for _, h := range hs {
		want, ok := analyzed[h.Seq]
		if !ok {
			t.Fatalf("analyze reports no halt %d", h.Seq)
		}
		if h.Event.Message == "" || len(h.Event.SuggestedActions) == 0 {
			t.Errorf("/status halt %d has no message or suggested actions: %+v", h.Seq, h.Event)
		}
		if h.Event.Message != want.Message || !reflect.DeepEqual(h.Event.Evidence, want.Evidence) || !slices.Equal(h.Event.SuggestedActions, want.SuggestedActions) {
			t.Errorf("/status halt %d:\n%+v\nanalyze:\n%+v", h.Seq, h.Event, want)
		}
	}
	if n := count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 1 {
		t.Errorf("%d Paused events, want 1", n)
	}

	// The interceptor halts the same calls at the same call, and the
	// watcher never pauses its run.
	var recorded []*historypb.HistoryEvent
	eventually(t, ctx, "the interceptor's halt", func() bool {
		recorded = ts.history(t, ctx, "guarded", guarded.GetRunID())
		ex := recordedAnalysis(t, recorded)
		return len(ex.Halts()) > 0
	})
	ex := recordedAnalysis(t, recorded)
	if ex.Recorded.Version == 0 {
		t.Fatal("the guarded run has no guard version marker")
	}
	ih := ex.Verdicts[slices.IndexFunc(ex.Verdicts, func(v interceptor.Verdict) bool { return v.Halt != nil })]
	first := after.halts()[0].Verdict
	if ih.Call != first.Call || ih.Halt.Detector != first.Halt.Detector || ih.Halt.Node != first.Halt.Node {
		t.Errorf("interceptor halts at call %d (%s at %s), watcher at call %d (%s at %s)",
			ih.Call, ih.Halt.Detector, ih.Halt.Node, first.Call, first.Halt.Detector, first.Halt.Node)
	}
	time.Sleep(500 * time.Millisecond) // a few listings
	if n := count(ts.history(t, ctx, "guarded", guarded.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 0 {
		t.Errorf("the watcher paused the interceptor's run %d times", n)
	}
	if st := w.Status(); st.Interceptor != 1 {
		t.Errorf("status counts %d runs left to the interceptor, want 1", st.Interceptor)
	}
}

// judgedHalts are the halts the analysis of the history (as worker
// analyze runs it, under the watcher's options) raises, by seq.
func judgedHalts(t *testing.T, events []*historypb.HistoryEvent) map[int]protocol.HaltEvent {
	t.Helper()
	a, err := history.NewAnalyzer(history.Options{Guard: workflows.ParallelGuardOptions()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]protocol.HaltEvent{}
	for _, v := range a.History(&historypb.History{Events: events}, "").Verdicts {
		if v.Halt != nil {
			out[v.Halt.Seq] = *v.Halt
		}
	}
	return out
}

// recordedAnalysis is the analysis of a history recorded with the guard,
// as it was recorded.
func recordedAnalysis(t *testing.T, events []*historypb.HistoryEvent) history.Execution {
	t.Helper()
	a, err := history.NewAnalyzer(history.Options{Guard: workflows.ParallelGuardOptions(), AsRecorded: true})
	if err != nil {
		t.Fatal(err)
	}
	return a.History(&historypb.History{Events: events}, "")
}

// An unpause is a resume: the judgement starts over and the next halt
// needs the loop's full count again; a terminate ends the following.
func TestWatchUnpauseResumesTerminateEnds(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, true)
	w, _ := ts.watcher(t, Options{})
	run := ts.agent(t, ctx, "stuck", plainQueue, activities.ParallelStuck)
	// Counted by the watcher, and the current run paused: a pause that
	// failed a task before it started is mended by a reset, which pauses
	// a run of another id (pausepoint.go).
	paused := func(n int) func() bool {
		return func() bool {
			return w.Status().Pauses >= n &&
				ts.describe(t, ctx, "stuck", "").GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
		}
	}
	eventually(t, ctx, "the first pause", paused(1))
	if _, err := ts.c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "stuck", Identity: "operator", Reason: "try again",
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the second pause", paused(2))
	if cur := ts.describe(t, ctx, "stuck", "").GetWorkflowExecutionInfo().GetExecution().GetRunId(); cur != run.GetRunID() {
		// A mended pause: the halts and their pauses are spread over the
		// base run and its reset; the resume's count is checked on runs
		// no mend touched (TestWatchMendsItsPauseOnAnUnstartedTask covers
		// the mend).
		t.Logf("a pause was mended (run %s reset into %s): the count after the resume is not checked", run.GetRunID(), cur)
		return
	}
	s := analyse(t, ts.history(t, ctx, "stuck", run.GetRunID()))
	var ours []halt
	for _, h := range s.halts() {
		if h.PausedBy == PauseRequestID("stuck", run.GetRunID(), h.Verdict.Halt.Seq) {
			ours = append(ours, h)
		}
	}
	if len(ours) != 2 {
		t.Fatalf("%d halts answered by their own pause, want 2: %+v", len(ours), s.halts())
	}
	first, second := ours[0], ours[1]
	resumedAt := first.Verdict.Call + first.CallsBefore // the last call before the pause
	t.Logf("first halt at call %d (%d calls in the lag), second at call %d: %d calls after the resume",
		first.Verdict.Call, first.CallsBefore, second.Verdict.Call, second.Verdict.Call-resumedAt)
	if gap := second.Verdict.Call - resumedAt; gap < first.Verdict.Call/2 {
		t.Errorf("the second halt came %d calls after the resume; the first needed %d", gap, first.Verdict.Call)
	}

	if err := ts.c.TerminateWorkflow(ctx, "stuck", "", "done"); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the watcher to stop following", func() bool { return w.Status().Followed == 0 })
}
