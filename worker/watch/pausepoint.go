package watch

import (
	"context"
	"strconv"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor/history"
)

// mendReason starts the reason of a mending reset; the history keeps it in
// the reset run's WorkflowTaskFailed (cause ResetWorkflow), which is how a
// follower counts the mends of a run, across restarts.
const mendReason = "loopguard-watch: mend a pause that failed a workflow task before it started"

// maxMends bounds the mends of one run: each reset run is paused again
// at its first safe point, and a pause that fails a task again is mended
// again, at most this many times.
const maxMends = 3

// mender follows, from the history alone, whether the watcher's own pause
// failed a workflow task before it started, and whether that run can be
// made whole by a reset that runs no completed call again.
//
// Server v1.32.1 fails such a task in the pause's own transaction
// (WorkflowTaskFailed, cause WorkflowPauseRequestedBeforeTaskStarted,
// right before WorkflowExecutionPaused), and sdk-core based SDKs cannot
// replay that history after the unpause. A reset whose
// WorkflowTaskFinishEventId is that failure rebuilds the run through the
// event before it, where the task is still scheduled: the server starts
// and fails it in the new run (cause ResetWorkflow), a pair every SDK
// replays, and keeps every event before the pause, so every call that had
// completed. Only calls that close after the failure would be dropped
// (and run again): while the run is paused no task is dispatched, so the
// mend waits for none and is refused when any call is still running.
type mender struct {
	failed      int64 // the last task failure a pause made before its start
	mendable    int64 // failed, once the pause that made it is the watcher's
	closedAfter bool  // a call closed after failed: a reset would drop it
	mends       int   // resets this run's history shows the watcher made
	asked       int64 // the failure a mend was tried for
	pausedAt    int64 // the last pause by the watcher
}

// note reads one event.
func (m *mender) note(e *historypb.HistoryEvent) {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
		a := e.GetWorkflowTaskFailedEventAttributes()
		switch a.GetCause() {
		case enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED:
			m.failed, m.mendable, m.closedAfter = e.GetEventId(), 0, false
			if m.pausedAt == e.GetEventId()-1 {
				m.mendable = m.failed
			}
		case enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW:
			if strings.HasPrefix(a.GetFailure().GetMessage(), mendReason) {
				m.mends++
			}
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_PAUSED:
		p := history.Pause{RequestID: e.GetWorkflowExecutionPausedEventAttributes().GetRequestId()}
		// The failure is written in the pause's transaction, next to it
		// (v1.32.1 writes it first).
		m.pausedAt = 0
		if p.ByWatcher() {
			m.pausedAt = e.GetEventId()
		}
		if m.failed > 0 && m.failed == e.GetEventId()-1 && p.ByWatcher() {
			m.mendable = m.failed
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UNPAUSED:
		// Unpaused, the run dispatches its calls again: a reset could drop
		// their results. What is left is the log line's reset command.
		m.mendable = 0
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED,
		enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
		enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
		enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
		enumspb.EVENT_TYPE_NEXUS_OPERATION_COMPLETED, enumspb.EVENT_TYPE_NEXUS_OPERATION_FAILED,
		enumspb.EVENT_TYPE_NEXUS_OPERATION_CANCELED, enumspb.EVENT_TYPE_NEXUS_OPERATION_TIMED_OUT:
		if m.failed > 0 {
			m.closedAfter = true
		}
	}
}

// due returns the failure to reset to, if a mend is due now.
func (m *mender) due() (int64, bool) {
	if m.mendable == 0 || m.closedAfter || m.mends >= maxMends || m.asked == m.mendable {
		return 0, false
	}
	return m.mendable, true
}

// mend makes whole a paused run whose task the watcher's pause failed
// before it started (see mender): it resets the run to that failure, and
// the reset run, whose history holds the same pending halt, is paused
// again by its own follower at its first safe point. A call still running
// (its result would land on the old run) leaves the run as it is, with the
// reset command in the log.
func (f *follower) mend(ctx context.Context, log *zap.Logger, events []*historypb.HistoryEvent) {
	f.mu.Lock()
	for _, e := range events {
		f.mender.note(e)
	}
	to, ok := f.mender.due()
	if ok {
		f.mender.asked = to
	}
	f.mu.Unlock()
	if !ok {
		return
	}
	o := &f.w.opts
	exec := &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID}
	d, err := o.Service.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{Namespace: o.Namespace, Execution: exec})
	if err != nil {
		log.Warn("watch: cannot describe the run to mend", zap.Error(err))
		return
	}
	if running := callsRunning(d); d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED || running > 0 {
		log.Warn("watch: the run cannot be mended without dropping a call's result; reset it once its calls are done",
			zap.Int("running", running), zap.String("status", d.GetWorkflowExecutionInfo().GetStatus().String()),
			zap.String("reset", resetCommand(f.workflowID, f.runID, to)))
		return
	}
	resp, err := o.Service.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace: o.Namespace, WorkflowExecution: exec, WorkflowTaskFinishEventId: to,
		Reason:    mendReason + " (event " + strconv.FormatInt(to, 10) + ")",
		RequestId: "loopguard-mend:" + f.runID + ":" + strconv.FormatInt(to, 10),
	})
	if err != nil {
		log.Warn("watch: mending reset failed", zap.Int64("eventId", to), zap.Error(err),
			zap.String("reset", resetCommand(f.workflowID, f.runID, to)))
		return
	}
	f.mu.Lock()
	f.mended = resp.GetRunId()
	f.mu.Unlock()
	// Followed at once, not at the next listing: with fast tools the
	// reset run may close before it, and its halt, which escaped, would
	// not be found.
	w := f.w
	w.mu.Lock()
	wg := w.followers
	w.mu.Unlock()
	if wg != nil {
		w.start(ctx, wg, &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: resp.GetRunId()}, true)
	}
	o.Metrics.Counter(MetricPauseMended).Inc(1)
	log.Warn("watch: the pause failed a workflow task before it started; reset the run to that task, every completed call kept, and pausing the new run",
		zap.Int64("eventId", to), zap.String("newRunId", resp.GetRunId()))
	// The reset run is running: the listing finds it at its next poll.
}

// callsRunning counts the calls of a described run whose result a reset
// would drop: activities a worker started, children and Nexus operations.
func callsRunning(d *workflowservice.DescribeWorkflowExecutionResponse) int {
	n := len(d.GetPendingChildren()) + len(d.GetPendingNexusOperations())
	for _, a := range d.GetPendingActivities() {
		if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED || a.GetState() == enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED {
			n++
		}
	}
	return n
}

// resetCommand is the CLI command that resets a run to event id to.
func resetCommand(workflowID, runID string, to int64) string {
	return "temporal workflow reset --workflow-id " + workflowID + " --run-id " + runID +
		" --event-id " + strconv.FormatInt(to, 10) + " --reason 'pause before task start'"
}
