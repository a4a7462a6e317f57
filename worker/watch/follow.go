package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// retryWait is the wait after a failed history poll.
const retryWait = time.Second

// follower follows one run: one long poll of its history at a time, the
// events fed into one reader, each snapshot acted on. What it keeps
// besides the reader (what it already logged or asked for) only spares
// the server repeated requests: the requests are idempotent, so a
// restarted watcher that asks again does no harm.
type follower struct {
	w                 *Watcher
	workflowID, runID string

	wake chan struct{} // the listing saw the run running

	mu    sync.Mutex
	snap  snapshot
	seen  int        // verdicts already logged and counted
	acted actedHalts // what the watcher did for each halt, and whose lag it recorded
	// unstartedFailed are the workflow tasks a pause failed before they
	// started; resetTo is the first of them, where a reset of such a
	// run goes (it keeps every event before it).
	// problems are the history's problems already logged.
	problems        int
	lastType        enumspb.EventType // of the last event read
	unstartedFailed []int64
	resetTo         int64
	mender          mender // pausepoint.go
	mended          string // the run a mend reset this one to
	// aheadSeq is the halt this process paused ahead of (ahead.go) until
	// the history shows the pause or the halt, and aheadAt when; undid
	// is set when a pause ahead was undone, for the follower to read on.
	aheadSeq int
	aheadAt  time.Time
	undid    bool
	// full are the newest halts as the reader handed them over, whole
	// (message, evidence, suggested actions): the snapshot keeps every
	// halt without them (history.Halted), and /status shows an operator
	// the same halt analyze and the live guard's loop.halted do. At most
	// maxFullHalts, the newest last.
	full []protocol.HaltEvent
}

// maxFullHalts bounds the halts of a run /status shows whole: the one a
// pause answers is the newest, and a run halted more often than this
// lists its older halts by name only.
const maxFullHalts = 8

// keepFull keeps the halts of vs whole, replacing an older copy of the
// same halt.
func (f *follower) keepFull(vs []interceptor.Verdict) {
	for _, v := range vs {
		if v.Halt == nil {
			continue
		}
		f.full = slices.DeleteFunc(f.full, func(ev protocol.HaltEvent) bool { return ev.Seq == v.Halt.Seq && ev.RunID == v.Halt.RunID })
		f.full = append(f.full, *v.Halt)
		if len(f.full) > maxFullHalts {
			f.full = slices.Delete(f.full, 0, len(f.full)-maxFullHalts)
		}
	}
}

// fullHalt is halt ev whole, when it is kept.
func (f *follower) fullHalt(ev *protocol.HaltEvent) protocol.HaltEvent {
	for i := len(f.full) - 1; i >= 0; i-- {
		if f.full[i].Seq == ev.Seq && f.full[i].RunID == ev.RunID {
			return f.full[i]
		}
	}
	return *ev
}

// run follows the run until it ends (true) or ctx is done (false).
func (f *follower) run(ctx context.Context) bool {
	o := &f.w.opts
	log := o.Logger.With(zap.String("workflowId", f.workflowID), zap.String("runId", f.runID))
	r, err := newReader(o.Guard, o.DataConverter)
	if err != nil { // checked by New
		log.Error("watch: cannot judge", zap.Error(err))
		return false
	}
	if err := f.readChain(ctx, r); err != nil {
		if ctx.Err() != nil {
			return false
		}
		// The judgement goes on from this run alone, as the interceptor's
		// does for a run whose carried state it cannot read.
		log.Warn("watch: the runs this one continued from cannot be read; judging it alone", zap.Error(err))
	}
	var token []byte
	var last int64 // the cursor: the last event read
	for ctx.Err() == nil {
		resp, err := o.Service.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace:     o.Namespace,
			Execution:     &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
			NextPageToken: token,
			WaitNewEvent:  true,
		})
		if err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				log.Info("watch: the execution is gone", zap.Error(err))
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			log.Warn("watch: reading the history failed; trying again", zap.Error(err))
			select {
			case <-ctx.Done():
				return false
			case <-time.After(retryWait):
			}
			continue
		}
		events := resp.GetHistory().GetEvents()
		token = resp.GetNextPageToken()
		// After a pause the history is read again from its start: skip
		// what was read.
		for len(events) > 0 && events[0].GetEventId() <= last {
			events = events[1:]
		}
		if len(events) == 0 && len(token) > 0 {
			continue // the long poll timed out
		}
		f.noteUnstartedTaskFailures(log, events)
		if len(events) > 0 {
			f.mu.Lock()
			f.lastType = events[len(events)-1].GetEventType()
			f.mu.Unlock()
		}
		r.add(events...)
		s := r.snapshot()
		last = s.LastEventID
		f.act(ctx, log, s)
		f.mend(ctx, log, events)
		if s.Closed {
			return true
		}
		if len(token) == 0 {
			if f.awaitingAhead(s) {
				// Paused ahead: the server writes the Paused event once
				// the task in flight completes, and the watcher must read
				// it, with the task's commands, to know whether the halt
				// came (ahead.go). Read again shortly.
				token = nil
				select {
				case <-ctx.Done():
					return false
				case <-time.After(aheadPoll):
				}
				continue
			}
			if f.takeUndid() {
				token = nil // the run goes on: follow it
				continue
			}
			// The server ends the long polls of a paused run (it is not
			// running): its history is at rest. The reader may hold its
			// last workflow task (and the pause after it) for the next
			// task; what the status says meanwhile is the analysis of
			// the history as it stands, read again from the server.
			f.atRest(ctx, log)
			if f.takeUndid() {
				token = nil
				continue
			}
			// Wait until it runs again, then read on.
			if ended := f.awaitUnpaused(ctx, log); ended || ctx.Err() != nil {
				return ended
			}
		}
	}
	return false
}

// atRest acts on the analysis of the paused run's whole history so far,
// judged to its end (reader.rest): the halts the pause answered show as
// answered. A history that cannot be read leaves the snapshot as it is.
func (f *follower) atRest(ctx context.Context, log *zap.Logger) {
	r, err := newReader(f.w.opts.Guard, f.w.opts.DataConverter)
	if err != nil {
		return
	}
	if err := f.readChain(ctx, r); err != nil {
		return
	}
	var token []byte
	for {
		resp, err := f.w.opts.Service.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: f.w.opts.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
			NextPageToken: token,
		})
		if err != nil {
			return
		}
		r.add(resp.GetHistory().GetEvents()...)
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	s := r.rest()
	if s.Closed = false; !s.Paused {
		return // unpaused meanwhile: the live reading goes on
	}
	f.act(ctx, log, s)
}

// readChain reads the runs that the followed run continued as new from,
// first to last, into r: the judgement of a chain goes on across
// continue-as-new, as the interceptor's carried state does, so that a
// loop that continues as new before it trips is still halted. The chain
// is the server's: each run's start event names the run it continued
// from (ContinuedExecutionRunId), walked back from the followed run. A
// run reset anywhere in the chain has its base's start event, so it
// names the run its base continued from: the walk takes the reset run
// and never the runs the reset ended, which a walk forward from the
// chain's first run would meet (the first run id survives a reset). A
// run started by a retry or a cron schedule starts a chain of its own,
// as the interceptor's state does not carry across them: it is judged
// alone. Whole histories are read, nothing is kept that they cannot
// rebuild; a run that started the chain reads nothing.
func (f *follower) readChain(ctx context.Context, r *reader) error {
	o := &f.w.opts
	get := func(runID string, max int32, each func(*historypb.HistoryEvent) bool) error {
		var token []byte
		for {
			resp, err := o.Service.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
				Namespace: o.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: runID},
				NextPageToken: token, MaximumPageSize: max,
			})
			if err != nil {
				return err
			}
			for _, e := range resp.GetHistory().GetEvents() {
				if !each(e) {
					return nil
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				return nil
			}
		}
	}
	var back []string // the runs before the followed one, newest first
	for run := f.runID; ; {
		var a *historypb.WorkflowExecutionStartedEventAttributes
		if err := get(run, 1, func(e *historypb.HistoryEvent) bool {
			a = e.GetWorkflowExecutionStartedEventAttributes()
			return false
		}); err != nil {
			return err
		}
		prev := a.GetContinuedExecutionRunId()
		switch a.GetInitiator() {
		case enumspb.CONTINUE_AS_NEW_INITIATOR_RETRY, enumspb.CONTINUE_AS_NEW_INITIATOR_CRON_SCHEDULE:
			prev = "" // a chain of its own
		}
		if prev == "" {
			break
		}
		if len(back) == maxChainRuns {
			return fmt.Errorf("more than %d runs before run %s", maxChainRuns, f.runID)
		}
		back = append(back, prev)
		run = prev
	}
	for i := len(back) - 1; i >= 0; i-- {
		var events []*historypb.HistoryEvent
		if err := get(back[i], 0, func(e *historypb.HistoryEvent) bool {
			events = append(events, e)
			return true
		}); err != nil {
			return err
		}
		r.add(events...)
	}
	return nil
}

// maxChainRuns bounds the runs read before a followed run.
const maxChainRuns = 1000

// awaitUnpaused waits until the run is no longer paused; it reports
// whether the run is gone. The listing, which sees each execution's
// status every PollInterval, wakes it when the run runs again; it also
// describes the run every pausedCheck, for a run the listing no longer
// shows. Nothing is asked of the server per paused run and listing.
func (f *follower) awaitUnpaused(ctx context.Context, log *zap.Logger) bool {
	o := &f.w.opts
	for {
		d, err := o.Service.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
			Namespace: o.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
		})
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			return true
		case err != nil && ctx.Err() == nil:
			log.Warn("watch: describing the paused execution failed; trying again", zap.Error(err))
		case err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-f.wake:
		case <-time.After(pausedCheck):
		}
	}
}

// pausedCheck is how often a paused run is described when no listing
// wakes its follower.
const pausedCheck = time.Minute

// running tells the follower that the listing saw its run running, or
// no longer shows it.
func (f *follower) running() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// act logs and counts new verdicts and answers the pending halt.
func (f *follower) act(ctx context.Context, log *zap.Logger, s snapshot) {
	w := f.w
	f.mu.Lock()
	f.snap = s
	f.keepFull(s.Verdicts)
	// The newest verdicts are the last of s.Verdicts (the reader
	// follows the run: a snapshot holds those since the one before).
	newVerdicts := s.Verdicts[len(s.Verdicts)-min(max(s.VerdictsSeen-f.seen, 0), len(s.Verdicts)):]
	f.seen = s.VerdictsSeen
	f.mu.Unlock()
	if s.Err != nil {
		log.Warn("watch: the history cannot be judged", zap.Error(s.Err))
		return
	}
	f.logProblems(log, s.Problems)
	if s.GuardVersion > 0 {
		// The interceptor guards it: its own guard answers its halts.
		return
	}
	warnings, halts := 0, 0
	counted := countedBefore(s) // warnings up to this call an earlier process counted
	for _, v := range newVerdicts {
		switch {
		case v.Call <= s.CopiedThrough:
			// A reset (a mend, say) copied it from the base run, whose
			// reader counted it.
			log.Debug("watch: verdict copied by a reset, counted in its base run", zap.Int("call", v.Call))
		case v.Warning != nil:
			if v.Call <= counted {
				// An earlier process counted it (a restart).
				log.Debug("watch: loop warning counted before this process read it", zap.Int("call", v.Call))
			} else {
				warnings++
				log.Warn("watch: loop warning", zap.Int("call", v.Call), zap.String("detector", string(v.Warning.Detector)),
					zap.String("node", v.Warning.Node), zap.String("message", v.Warning.Message))
				w.opts.Metrics.WithTags(map[string]string{"detector": string(v.Warning.Detector)}).Counter(MetricWarnings).Inc(1)
			}
			if w.opts.SignalWarnings && !s.Closed && v.Call > s.Signalled {
				// The request id tells the reader it is the watcher's own
				// output, not outside input.
				f.signal(ctx, log, WarningSignal, history.WarningRequestID(f.runID, v.Call), v.Warning)
			}
		case v.Halt != nil && (f.answeredElsewhere(s, v.Halt.Seq) || v.Call <= s.PausedThrough):
			// A watcher's pause answered it before this process read it:
			// the process that saw it first counted it (a restart).
			log.Info("watch: loop halt answered before this process read it", zap.Int("call", v.Call), zap.Int("seq", v.Halt.Seq))
		case v.Halt != nil:
			halts++
			ev, _ := json.Marshal(v.Halt)
			log.Warn("watch: loop halt", zap.Int("call", v.Call), zap.Int("seq", v.Halt.Seq), zap.String("detector", string(v.Halt.Detector)),
				zap.String("node", v.Halt.Node), zap.String("message", v.Halt.Message), zap.ByteString("event", ev))
			w.opts.Metrics.WithTags(map[string]string{"detector": string(v.Halt.Detector)}).Counter(MetricHalts).Inc(1)
		}
	}
	w.count(warnings, halts, 0)
	for _, p := range s.Pauses.All() {
		// The lag of each of the watcher's pauses that answered its own
		// halt, once.
		if p.HaltSeq == 0 || p.RequestID != PauseRequestID(f.workflowID, f.runID, p.HaltSeq) {
			continue
		}
		if i := s.haltIndex(p.HaltSeq); i >= 0 && f.firstLag(p.HaltSeq) {
			if h := s.halt(i); h.Answered {
				w.opts.Metrics.Timer(MetricPauseLag).Record(h.PausedAt.Sub(h.Time))
			}
		}
	}
	if s.Closed {
		f.escaped(log, s)
		return
	}
	if s.Paused {
		// A pause (anyone's) holds the run: respected, but for this
		// run's pause ahead whose halt did not come (ahead.go).
		if f.undoAhead(ctx, log, s) {
			f.mu.Lock()
			f.undid = true
			f.mu.Unlock()
		}
		return
	}
	h := s.pending()
	if h == nil {
		if s.Ahead != nil {
			f.pauseAhead(ctx, log, s)
		}
		return
	}
	seq := h.Verdict.Halt.Seq
	f.mu.Lock()
	done := f.acted.action(seq) != ""
	f.mu.Unlock()
	if done {
		return
	}
	f.setActed(seq, f.answer(ctx, log, s, h))
}

// escaped marks the newest halt of a closed run that no pause answered
// and nothing else did: the loop ended before its pause landed. It is
// counted once and logged, so that the loops that ended the fastest are
// found like the others.
func (f *follower) escaped(log *zap.Logger, s snapshot) {
	if s.Halted.Len() == 0 || s.ResetAway {
		return
	}
	h := s.halt(s.Halted.Len() - 1)
	seq := h.Verdict.Halt.Seq
	f.mu.Lock()
	first := !h.Answered && f.acted.action(seq) == ""
	if first {
		f.acted.set(seq, ActionEscaped)
	}
	f.mu.Unlock()
	if !first {
		return
	}
	f.w.countEscaped()
	f.w.opts.Metrics.WithTags(map[string]string{"detector": string(h.Verdict.Halt.Detector)}).Counter(MetricEscapedHalts).Inc(1)
	log.Warn("watch: loop halt escaped: the run closed before its pause landed", zap.Int("call", h.Verdict.Call),
		zap.Int("seq", seq), zap.String("detector", string(h.Verdict.Halt.Detector)), zap.String("node", h.Verdict.Halt.Node))
}

// pausedItself reports whether this process made the watcher's pause of
// request id: the halts it answers that tripped after this process read
// the halt it paused (the workflow task in flight when it landed) are
// this process's to count.
func (f *follower) pausedItself(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acted.action(history.RequestedHalt(id)) == "pause"
}

// answeredElsewhere reports whether a watcher's pause that another
// process made answered halt seq before this process read it.
func (f *follower) answeredElsewhere(s snapshot, seq int) bool {
	p, ok := s.Pauses.Answering(seq)
	return ok && p.ByWatcher() && !f.pausedItself(p.RequestID)
}

func (f *follower) firstLag(seq int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acted.lag(seq)
}

func (f *follower) setActed(seq int, action string) {
	if action == "" {
		return
	}
	f.mu.Lock()
	f.acted.set(seq, action)
	f.mu.Unlock()
}

// answer pauses the run for halt h, or applies the fallback when the
// server refuses pause. It returns what it did, "" to try again at the
// next snapshot.
func (f *follower) answer(ctx context.Context, log *zap.Logger, s snapshot, h *halt) string {
	w := f.w
	ev := *h.Verdict.Halt
	id := PauseRequestID(f.workflowID, f.runID, ev.Seq)
	if !w.refused() {
		f.mu.Lock()
		last := f.lastType
		f.mu.Unlock()
		// A pause that finds a workflow task scheduled and not started
		// fails it, which sdk-core based SDKs (TypeScript, Python) cannot
		// replay: the run would stay stuck after the unpause. The safest
		// moment is while a task is in flight (the server leaves a
		// started task alone and takes its completion while paused): the
		// last event read says so without a round trip, and a task just
		// scheduled is waited for (its start is the next event). Else a
		// describe says whether a task waits.
		switch {
		case last == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			return ""
		case last == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		case f.taskWaitsToStart(ctx, log):
			return ""
		}
		_, err := w.opts.Service.PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
			Namespace: w.opts.Namespace, WorkflowId: f.workflowID, RunId: f.runID,
			Identity: w.opts.Identity, Reason: PauseReason(ev), RequestId: id,
		})
		var fp *serviceerror.FailedPrecondition
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			// The run closed before the pause landed (server: "workflow
			// execution already completed"): the loop escaped; its close
			// event, read next, lists it as such.
			log.Info("watch: the run closed before its pause landed", zap.Int("seq", ev.Seq), zap.Error(err))
			return ""
		case err == nil:
			w.count(0, 0, 1)
			w.opts.Metrics.Counter(MetricPauses).Inc(1)
			log.Warn("watch: paused", zap.Int("seq", ev.Seq), zap.String("reason", PauseReason(ev)), zap.String("requestId", id))
			return "pause"
		case errors.As(err, &fp):
			// Paused by someone else since the snapshot: respected.
			log.Info("watch: already paused by another; left alone", zap.Int("seq", ev.Seq), zap.Error(err))
			return "paused by another"
		case isRefusal(err):
			w.refuse(err)
		case ctx.Err() != nil:
			return ""
		default:
			log.Warn("watch: pause failed; trying again at the next event", zap.Int("seq", ev.Seq), zap.Error(err))
			return ""
		}
	}
	switch w.opts.OnPauseRefused {
	case FallbackSignal:
		f.signal(ctx, log, HaltedSignal, id, ev)
	case FallbackCancel:
		_, err := w.opts.Service.RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
			Namespace:         w.opts.Namespace,
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
			Identity:          w.opts.Identity, RequestId: id, Reason: PauseReason(ev),
		})
		if err != nil {
			log.Warn("watch: cancel request failed", zap.Int("seq", ev.Seq), zap.Error(err))
		}
	}
	return w.opts.OnPauseRefused.String()
}

// signal sends name with payload as JSON; requestID makes a repeat a
// no-op on the server.
func (f *follower) signal(ctx context.Context, log *zap.Logger, name, requestID string, payload any) {
	w := f.w
	p, err := converter.GetDefaultDataConverter().ToPayloads(payload)
	if err == nil {
		_, err = w.opts.Service.SignalWorkflowExecution(ctx, &workflowservice.SignalWorkflowExecutionRequest{
			Namespace:         w.opts.Namespace,
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
			SignalName:        name, Input: p, Identity: w.opts.Identity, RequestId: requestID,
		})
	}
	if err != nil {
		log.Warn("watch: signal failed", zap.String("signal", name), zap.Error(err))
	}
}

// isRefusal reports whether err is the server refusing Workflow Pause:
// the flag off (Unimplemented "workflow pause is not enabled"), or a
// server without the method.
func isRefusal(err error) bool {
	var u *serviceerror.Unimplemented
	return errors.As(err, &u) || status.Code(err) == codes.Unimplemented
}

// refused reports whether the server refused Workflow Pause within
// refusalRetry.
func (w *Watcher) refused() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refusal != nil && (w.refusal.Permanent || time.Since(w.refusal.Time) < refusalRetry)
}

// refuse records a refusal; the first is logged and counted, later ones
// only renew it.
func (w *Watcher) refuse(err error) {
	w.mu.Lock()
	first := w.refusal == nil
	if w.refusal != nil && w.refusal.Permanent {
		w.mu.Unlock()
		return
	}
	w.refusal = &Refusal{Error: err.Error(), Time: time.Now(), Fallback: w.opts.OnPauseRefused.String()}
	w.mu.Unlock()
	if first {
		w.opts.Logger.Error("watch: the server refuses Workflow Pause (turn on the dynamic config frontend.WorkflowPauseEnabled for the namespace; server v1.30 or later); halts are answered by the fallback instead",
			zap.String("namespace", w.opts.Namespace), zap.String("fallback", w.opts.OnPauseRefused.String()), zap.Error(err))
		w.opts.Metrics.Counter(MetricPauseRefused).Inc(1)
	}
}

// maxLoggedProblems bounds the problems logged for one run: the first say
// what is wrong (a missing codec makes one per result), the count in
// Status says how many.
const maxLoggedProblems = 3

// logProblems logs the events the judgement could not read, the first
// maxLoggedProblems of a run: an event it cannot read (a result a codec
// encoded, without Options.DataConverter) is one the detectors do not
// see, and a watcher that sees no results halts nothing, so it says so.
func (f *follower) logProblems(log *zap.Logger, problems []string) {
	f.mu.Lock()
	from := f.problems
	f.problems = max(f.problems, len(problems))
	f.mu.Unlock()
	for i := from; i < min(len(problems), maxLoggedProblems); i++ {
		log.Warn("watch: an event of the history cannot be judged (a payload codec needs --codec-endpoint or Options.DataConverter)",
			zap.String("problem", problems[i]))
	}
}

// taskWaitsToStart reports whether the run has a workflow task scheduled
// and not yet started. Server v1.32.1 fails such a task when a pause
// lands (cause WorkflowPauseRequestedBeforeTaskStarted), and the
// TypeScript SDK 1.24.0 cannot replay the history that leaves: every
// workflow task of the run fails after the unpause until the run is reset
// (worker/e2e/typescript, TestPauseBeforeWorkflowTaskStarted). A task
// already started is safe: the server accepts its completion while
// paused. The check narrows the window to the describe's round trip; it
// does not close it (noteUnstartedTaskFailures reports what slips through).
// A describe that fails says nothing: the pause goes ahead.
func (f *follower) taskWaitsToStart(ctx context.Context, log *zap.Logger) bool {
	o := &f.w.opts
	d, err := o.Service.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: o.Namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: f.workflowID, RunId: f.runID},
	})
	if err != nil {
		return false
	}
	if d.GetPendingWorkflowTask().GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED {
		log.Debug("watch: a workflow task waits to start; pausing once it has")
		return true
	}
	return false
}

// noteUnstartedTaskFailures reports each workflow task a pause failed
// before it started (see taskWaitsToStart): a run of an sdk-core based
// SDK stays stuck after its unpause until it is reset to that failure
// (the watcher mends its own pauses so: pausepoint.go). The follower logs
// the reset command and lists the event in Status.
func (f *follower) noteUnstartedTaskFailures(log *zap.Logger, events []*historypb.HistoryEvent) {
	for _, e := range events {
		if e.GetWorkflowTaskFailedEventAttributes().GetCause() != enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED {
			continue
		}
		f.mu.Lock()
		f.unstartedFailed = append(f.unstartedFailed, e.GetEventId())
		if f.resetTo == 0 { // the first such failure is where the replay breaks
			// A reset to the failure itself keeps every event before it
			// (pausepoint.go).
			f.resetTo = e.GetEventId()
		}
		f.mu.Unlock()
		f.w.opts.Metrics.Counter(MetricUnstartedTaskFailed).Inc(1)
		log.Warn("watch: a pause failed a workflow task before it started; a TypeScript or Python run then fails every workflow task after the unpause until it is reset",
			zap.Int64("eventId", e.GetEventId()),
			zap.String("reset", resetCommand(f.workflowID, f.runID, e.GetEventId())))
	}
}

// status is the follower's line of Status, and whether it has one.
func (f *follower) status() (ExecutionStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.snap
	es := ExecutionStatus{
		WorkflowID: f.workflowID, RunID: f.runID, WorkflowType: s.WorkflowType,
		Interceptor: s.GuardVersion, Paused: s.Paused, PausedBy: s.PauseRequestID,
		UnstartedTaskFailed: slices.Clone(f.unstartedFailed), ResetTo: f.resetTo, Mended: f.mended,
	}
	if s.GuardVersion > 0 {
		return es, false
	}
	es.Warnings = s.WarningsSeen
	pending := s.Pending
	if s.pending() == nil {
		pending = 0
	}
	for _, h := range s.halts() {
		ev := h.Verdict.Halt
		hs := HaltStatus{
			Call: h.Verdict.Call, Seq: ev.Seq, Detector: string(ev.Detector), Node: ev.Node,
			Answered: h.Answered, PausedBy: h.PausedBy, Action: f.acted.action(ev.Seq),
			TrippedAt: h.Time, PausedAt: h.PausedAt, CallsBefore: h.CallsBefore, Event: f.fullHalt(ev),
		}
		// The request id names the halt; its run is the run paused, which
		// for a halt a reset copied is the base run.
		own := history.RequestedHalt(h.PausedBy) == ev.Seq
		if h.Answered && own && hs.Action == "" {
			hs.Action = "pause" // by an earlier process: the request id is derived from the halt
		}
		if h.Answered && !own && hs.Action == "" {
			hs.Action = "paused by another"
			if (&history.Pause{RequestID: h.PausedBy}).ByWatcher() {
				hs.Action = "superseded"
			}
		}
		if !h.Answered && ev.Seq != pending && hs.Action == "" {
			hs.Action = "superseded"
		}
		es.Halts = append(es.Halts, hs)
	}
	es.Problems = len(s.Problems)
	es.Closed = s.Closed
	return es, es.Warnings > 0 || len(es.Halts) > 0 || es.Problems > 0
}
