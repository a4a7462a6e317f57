package watch

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The pause ahead. Where the results read already decide that the next
// guarded call trips (detect.State.Foreseen through the warning rung:
// history.Reader.Ahead), the watcher pauses while the workflow task
// that reads those results is in flight. The server leaves a started
// task alone, takes its completion while paused and dispatches nothing
// it scheduled: the tripping call is held, scheduled and not started,
// as the guard holds the call that trips. The pause's request id is the
// halt's (PauseRequestID with the foreseen seq); the server writes the
// Paused event after the task's commands (it buffers it while a task is
// in flight), so in the history the pause follows the halt and answers
// it as any watcher's pause does.
//
// Where the task schedules no guarded call (it waits on a timer, calls
// an exempt node, or failed), the halt does not come: the history holds
// a watcher's pause that answered nothing (HaltSeq 0) for a halt the
// run does not have. The watcher undoes it at once, and never pauses
// ahead for that halt again: its halt gets a pause of its own when it
// comes. The analysis reads such a pause as someone else's: it answers
// nothing and its unpause resumes nothing. A pause ahead that failed a
// task waiting to start (the race lost) is mended, as any of the
// watcher's pauses is (pausepoint.go), never undone.

// ahead is the halt the snapshot s of ex foresees, or nil: only at a
// workflow task's start, with no halt unanswered, no pause in force or
// unjudged, in a run the watcher pauses (not the interceptor's), for a
// halt whose pause the history does not hold yet and that the run's
// options do not merely observe.
func (r *reader) ahead(ex history.Execution, s *snapshot) *protocol.HaltEvent {
	if r.lastType != enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED || ex.Closed || s.Paused || !s.PausesJudged ||
		ex.Recorded.Version != 0 || ex.Pending() != nil {
		return nil
	}
	ev, policy, ok := r.r.Ahead()
	if !ok || policy == protocol.OnHaltObserve {
		return nil
	}
	id := PauseRequestID(ex.WorkflowID, ex.RunID, ev.Seq)
	for _, p := range ex.Pauses.All() {
		if p.RequestID == id {
			return nil // asked already (and undone, if it ended)
		}
	}
	return &ev
}

// pauseAhead pauses the run for the halt s foresees (s.Ahead), once.
func (f *follower) pauseAhead(ctx context.Context, log *zap.Logger, s snapshot) {
	w := f.w
	ev := *s.Ahead
	f.mu.Lock()
	done := f.acted.action(ev.Seq) != ""
	f.mu.Unlock()
	if done || w.refused() {
		// A refusal's fallback acts on the halt itself, once it comes.
		return
	}
	id := PauseRequestID(f.workflowID, f.runID, ev.Seq)
	_, err := w.opts.Service.PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: w.opts.Namespace, WorkflowId: f.workflowID, RunId: f.runID,
		Identity: w.opts.Identity, Reason: PauseReason(ev), RequestId: id,
	})
	var fp *serviceerror.FailedPrecondition
	switch {
	case err == nil:
		w.count(0, 0, 1)
		w.countAhead(1, 0)
		w.opts.Metrics.Counter(MetricPauses).Inc(1)
		log.Info("watch: paused ahead of the halt the results read decide", zap.Int("seq", ev.Seq),
			zap.String("detector", string(ev.Detector)), zap.String("requestId", id))
		f.setActed(ev.Seq, "pause")
		f.mu.Lock()
		f.aheadSeq, f.aheadAt = ev.Seq, time.Now()
		f.mu.Unlock()
	case errors.As(err, &fp):
		log.Info("watch: already paused by another; left alone", zap.Int("seq", ev.Seq), zap.Error(err))
	case isRefusal(err):
		w.refuse(err)
	case ctx.Err() != nil:
	default:
		// The halt gets its own pause when it comes.
		log.Info("watch: pause ahead failed", zap.Int("seq", ev.Seq), zap.Error(err))
	}
}

// aheadToUndo is the pause in force of run runID when it is the
// watcher's pause ahead whose halt did not come, with the seq of that
// halt, or nil. It reads the history alone, so a restarted watcher, or
// another one, undoes it as the one that made it would.
func (s snapshot) aheadToUndo(workflowID, runID string) (*history.Pause, int) {
	p, ok := s.Pauses.Last()
	if !s.PausesJudged || !ok || s.PauseFailedTask {
		// A pause that failed a task waiting to start is mended, not
		// undone: unpaused, a run of an sdk-core SDK could not replay
		// that failure (pausepoint.go). The reset run is followed and
		// paused again, ahead or after its halt.
		return nil, 0
	}
	seq := history.RequestedHalt(p.RequestID)
	if p.Ended != 0 || p.HaltSeq != 0 || seq == 0 || p.RequestID != PauseRequestID(workflowID, runID, seq) || s.haltIndex(seq) >= 0 {
		return nil, 0
	}
	return &p, seq
}

// undoneReason is the reason of the unpause that undoes a pause ahead.
const undoneReason = "loopguard-watch: the halt this pause foresaw did not come; pause ahead undone"

// undoAhead undoes the pause in force when it is this run's watcher's
// pause ahead whose halt did not come: it answered no halt, and the
// run has no halt of its seq. Every pause read is judged, and the
// server writes a pause asked while a task ran after that task's
// commands, so the call that would have raised it is read by then.
func (f *follower) undoAhead(ctx context.Context, log *zap.Logger, s snapshot) bool {
	p, seq := s.aheadToUndo(f.workflowID, f.runID)
	if p == nil {
		return false
	}
	w := f.w
	_, err := w.opts.Service.UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: w.opts.Namespace, WorkflowId: f.workflowID, RunId: f.runID,
		Identity: w.opts.Identity, Reason: undoneReason, RequestId: "loopguard-undo:" + p.RequestID,
	})
	var fp *serviceerror.FailedPrecondition
	switch {
	case err == nil:
		w.countAhead(0, 1)
		w.opts.Metrics.Counter(MetricPauseAheadUndone).Inc(1)
		log.Info("watch: the halt foreseen did not come; pause ahead undone", zap.Int("seq", seq))
	case errors.As(err, &fp):
		// "workflow is not paused": another watcher undid it first.
		log.Info("watch: pause ahead undone already", zap.Int("seq", seq), zap.Error(err))
	default:
		if ctx.Err() == nil {
			log.Warn("watch: undoing a pause ahead failed", zap.Int("seq", seq), zap.Error(err))
		}
		return false
	}
	// The halt, when it comes, gets a pause of its own.
	f.mu.Lock()
	f.acted.set(seq, "")
	f.mu.Unlock()
	return true
}

// aheadPoll is how often a follower reads a history whose run it paused
// ahead while the task in flight completes, and aheadWait how long at
// most: the task completes, fails or times out within its timeout, which
// server v1.32.1 caps at 120 s (maxWorkflowTaskStartToCloseTimeout), and
// the Paused event is written then. A follower that stopped waiting
// sooner would leave a pause ahead whose halt did not come in force.
const (
	aheadPoll = 100 * time.Millisecond
	aheadWait = 3 * time.Minute
)

// awaitingAhead reports whether this process paused the run ahead of a
// halt and the history read shows neither the pause nor the halt yet.
func (f *follower) awaitingAhead(s snapshot) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.aheadSeq == 0 {
		return false
	}
	if s.Paused || s.Closed || s.haltIndex(f.aheadSeq) >= 0 || time.Since(f.aheadAt) > aheadWait {
		f.aheadSeq = 0
		return false
	}
	return true
}

// takeUndid reports, once, that a pause ahead was undone.
func (f *follower) takeUndid() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.undid
	f.undid = false
	return u
}
