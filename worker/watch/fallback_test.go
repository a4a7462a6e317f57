package watch

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Where the server refuses Workflow Pause, the refusal is reported once
// and each halt gets the fallback: a loop.halted signal, a cancellation
// request, or nothing.
func TestWatchPauseRefused(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	ts := startServer(t, false)

	t.Run("bad query", func(t *testing.T) {
		w, err := New(Options{Client: ts.c, Query: "WorkflowType = = 1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(ctx); err == nil || !strings.Contains(err.Error(), "WorkflowType = = 1") {
			t.Errorf("Run: %v, want the query's error", err)
		}
	})

	t.Run("signal", func(t *testing.T) {
		logger, logs := observed()
		var pauses atomic.Int32
		svc := slowPause{WorkflowServiceClient: ts.c.WorkflowService(), calls: &pauses}
		w, stop := ts.watcher(t, Options{Query: `WorkflowId STARTS_WITH "signal-"`, Logger: logger, Service: svc})
		// The fallback is chosen at start, before any halt.
		eventually(t, ctx, "the fallback chosen", func() bool { return w.Status().Refusal != nil })
		runs := []string{ts.agent(t, ctx, "signal-1", plainQueue, activities.ParallelStuck).GetRunID(),
			ts.agent(t, ctx, "signal-2", plainQueue, activities.ParallelStuck).GetRunID()}
		for i, run := range runs {
			id := fmt.Sprintf("signal-%d", i+1)
			eventually(t, ctx, id+" signalled", func() bool { return len(halted(t, ts.history(t, ctx, id, run))) > 0 })
		}
		stop()
		for i, run := range runs {
			id := fmt.Sprintf("signal-%d", i+1)
			seqs := map[int]bool{}
			for _, ev := range halted(t, ts.history(t, ctx, id, run)) {
				if seqs[ev.Seq] {
					t.Errorf("%s: halt %d signalled twice", id, ev.Seq)
				}
				seqs[ev.Seq] = true
				if ev.WorkflowID != id || ev.Node == "" || ev.Detector == "" {
					t.Errorf("%s: signalled %+v", id, ev)
				}
			}
			_ = ts.c.TerminateWorkflow(ctx, id, run, "done")
		}
		if n := logs.FilterMessage("watch: halts will fall back to signal, not pause").Len(); n != 1 {
			t.Errorf("the fallback was logged %d times at start, want once", n)
		}
		if n := pauses.Load(); n != 0 {
			t.Errorf("%d pauses asked of a namespace without pause, want 0", n)
		}
		if r := w.Status().Refusal; r == nil || r.Fallback != "signal" {
			t.Errorf("status refusal %+v", r)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		w, stop := ts.watcher(t, Options{Query: `WorkflowId="cancel"`, OnPauseRefused: FallbackCancel})
		run := ts.agent(t, ctx, "cancel", plainQueue, activities.ParallelStuck)
		eventually(t, ctx, "a cancellation request", func() bool {
			return count(ts.history(t, ctx, "cancel", run.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED) > 0
		})
		stop()
		if n := count(ts.history(t, ctx, "cancel", run.GetRunID()), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED); n != 1 {
			t.Errorf("%d cancellation requests, want 1", n)
		}
		if w.Status().Refusal == nil {
			t.Error("no refusal in the status")
		}
	})

	t.Run("observe", func(t *testing.T) {
		w, stop := ts.watcher(t, Options{Query: `WorkflowId="observe"`, OnPauseRefused: FallbackObserve, SignalWarnings: true})
		run := ts.agent(t, ctx, "observe", plainQueue, activities.ParallelStuck)
		eventually(t, ctx, "an observed halt", func() bool {
			for _, e := range w.Status().Executions {
				for _, h := range e.Halts {
					if h.Action == "observe" {
						return true
					}
				}
			}
			return false
		})
		stop()
		events := ts.history(t, ctx, "observe", run.GetRunID())
		if n := len(halted(t, events)) + count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED) +
			count(events, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED); n != 0 {
			t.Errorf("observe acted %d times on the run", n)
		}
		// The warning before the halt was signalled, once.
		var warnings []protocol.Warning
		for _, e := range events {
			if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == WarningSignal {
				var w protocol.Warning
				if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &w); err != nil {
					t.Fatalf("loop.warning payload: %v", err)
				}
				warnings = append(warnings, w)
			}
		}
		if st := w.Status(); len(warnings) == 0 || len(warnings) > st.Warnings || warnings[0].Node == "" {
			t.Errorf("%d loop.warning signals (%+v), %d warnings in the status", len(warnings), warnings, st.Warnings)
		}
		_ = ts.c.TerminateWorkflow(ctx, "observe", run.GetRunID(), "done")
	})
}

// halted decodes the loop.halted signals of a history.
func halted(t *testing.T, events []*historypb.HistoryEvent) []protocol.HaltEvent {
	t.Helper()
	var out []protocol.HaltEvent
	for _, e := range events {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != HaltedSignal {
			continue
		}
		var ev protocol.HaltEvent
		if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &ev); err != nil {
			t.Fatalf("loop.halted payload: %v", err)
		}
		out = append(out, ev)
	}
	return out
}
