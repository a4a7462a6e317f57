package history

import (
	"errors"
	"fmt"
	"slices"

	"github.com/loopguard/loopguard/interceptor/internal/judge"

	"github.com/loopguard/loopguard/interceptor/protocol"
	updatepb "go.temporal.io/api/update/v1"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// Names of the guard's own local activity and the SDK's markers.
const (
	raiseHaltedActivity = "raiseHaltedSignal"
	markerLocalActivity = "LocalActivity"
	// markerCoreLocalActivity is the local activity marker of the SDKs
	// built on sdk-core.
	markerCoreLocalActivity = "core_local_activity"
	markerVersion           = "Version"
	markerSideEffect        = "SideEffect"
	carryHeader             = "loopguard-carry"
)

// runReader reads one run's events into a Judge as they come. It judges
// an event once what it needs of the events after it is in (ahead.go):
// the rest of its workflow task, or, following a recorded halt, the end
// of that halt. It holds the events not judged yet and nothing judged,
// but the loop.halted signals a later halt may still be matched to.
type runReader struct {
	opts *Options
	dc   converter.DataConverter
	fc   converter.FailureConverter
	// chain returns the state of the run this one continued from, when
	// it was read (nil: none).
	chain func(runID string) *openChain
	judge judge.Judge
	ex    Execution
	// set is true once the run's start is judged: the guard's marker is
	// decided and the Judge started.
	set bool
	// evs are the events received and not judged yet; evs[0] is the
	// run's event number off (from 0).
	evs []*historypb.HistoryEvent
	off int
	// closed is set when no event of the run will come any more: what
	// the look-ahead did not find is not in the run.
	closed bool
	// halted are the loop.halted signals judged and not matched to a
	// halt, in order, for a halt whose echo came before it.
	halted []*historypb.HistoryEvent
	// logs are the guard's logged problems so far.
	logs []string
	// calls maps a call's scheduling event to its Judge id.
	calls map[int64]int
	// attempted are the loop.halted events already used for an Attempt.
	attempted map[int64]bool
	// held is the scheduling event of the call the last recorded halt
	// held (0: none found).
	held int64
	// decided is the halt in force when the guard took a signal or update
	// (0: none since the guard's last memo): the next memo may publish its
	// decision.
	decided int
	// pauseTimers are the started events of the guard's pause timers.
	pauseTimers map[int64]bool
	// admittedRequests are the requests of updates admitted and not yet
	// accepted, by their admitted event (admitted.go).
	admittedRequests map[int64]*updatepb.Request
	// last is the last event judged (its id).
	last int64
	// ended is the run's close event, once judged.
	ended *historypb.HistoryEvent
	// Under Options.Follow: kept are the verdicts taken from the Judge
	// and not yet handed over by execution (which hands each over in
	// full once), handed the halts handed over, kept compact with the
	// decisions noted on them (halted.go); seen and warned count every
	// verdict and warning.
	kept         []interceptor.Verdict
	handed       haltKeeper
	seen, warned int
	// pauses are the run's Workflow Pauses (pauses.go), and names the
	// strings its kept halts and pauses repeat.
	pauses pauseKeeper
	names  names
}

// called notes a guarded call of node.
func (r *runReader) called(node string) {
	r.ex.Called++
	if !r.opts.Follow {
		r.ex.Calls = append(r.ex.Calls, node)
	}
}

// verdicts are the run's verdicts so far (under Options.Follow, the
// halts handed over stripped, and no warning handed over).
func (r *runReader) verdicts() []interceptor.Verdict {
	if !r.opts.Follow {
		return r.judge.Judged()
	}
	judged := r.judge.Judged()
	return append(append(r.handed.verdicts(len(r.kept)+len(judged)), r.kept...), judged...)
}

// take moves the Judge's verdicts to kept (Options.Follow): the Judge
// would hold them all.
func (r *runReader) take() {
	if !r.opts.Follow || r.judge == nil {
		return
	}
	for _, v := range r.judge.Verdicts() {
		r.seen++
		if v.Warning != nil {
			r.warned++
		}
		r.kept = append(r.kept, v)
	}
}

// hand returns the verdicts for execution under Options.Follow, those
// taken from the Judge since the last call, in full, and keeps of them
// only their halts, compact (Execution.Halted): what a follower acted on
// once, it needs no more but a halt's call, seq, detector and node.
func (r *runReader) hand() []interceptor.Verdict {
	out := r.kept
	for _, v := range r.kept {
		if v.Halt == nil {
			continue
		}
		if d, ok := r.pauses.all().resumed(v.Halt.Seq); ok && v.Decision != nil && *v.Decision == d {
			// The pause keeps the resume its unpause noted (Pause.Resumed),
			// for Halted to read: not a second record.
			v.Decision = nil
		}
		r.handed.keep(v)
	}
	r.kept = nil
	return out
}

func newRunReader(opts *Options, chain func(runID string) *openChain) *runReader {
	r := &runReader{opts: opts, dc: opts.DataConverter, fc: opts.FailureConverter, chain: chain,
		calls: map[int64]int{}, attempted: map[int64]bool{}, pauseTimers: map[int64]bool{}}
	r.handed.tab, r.pauses.tab = &r.names, &r.names
	return r
}

func (r *runReader) problem(e *historypb.HistoryEvent, format string, args ...any) {
	r.ex.Problems = append(r.ex.Problems, fmt.Sprintf("event %d (%s): %s", e.GetEventId(), eventName(e), fmt.Sprintf(format, args...)))
}

func eventName(e *historypb.HistoryEvent) string {
	return e.GetEventType().String()
}

// end is the number of the run's events received.
func (r *runReader) end() int { return r.off + len(r.evs) }

// at is the run's event number k, received and not judged yet.
func (r *runReader) at(k int) *historypb.HistoryEvent { return r.evs[k-r.off] }

// add takes the run's next events and judges what it can.
func (r *runReader) add(events []*historypb.HistoryEvent) {
	if r.ex.Err != nil {
		return
	}
	r.evs = append(r.evs, events...)
	for _, e := range events {
		// Nothing comes after a close event: the look-ahead of the
		// events before it ends there.
		r.closed = r.closed || closes(e)
	}
	if r.off == 0 && len(r.evs) == 0 {
		return
	}
	r.judgeReady()
}

// close judges the events held: the run has no more.
func (r *runReader) close() {
	r.closed = true
	if r.ex.Err == nil {
		if r.off == 0 && len(r.evs) == 0 {
			r.ex.Err = errors.New("no history events")
			return
		}
		r.judgeReady()
	}
}

// judgeReady judges the events held, in order, up to the first whose
// look-ahead is not in yet. A history the reader or the guard's code
// cannot make sense of (events out of any order a server writes) gives
// an error naming the event, never a panic that would stop a batch.
func (r *runReader) judgeReady() {
	var at *historypb.HistoryEvent
	defer func() {
		if p := recover(); p != nil {
			r.ex.Err = fmt.Errorf("event %d (%s): cannot be judged: %v", at.GetEventId(), eventName(at), p)
		}
	}()
	if !r.set {
		if !r.start() || r.ex.Err != nil {
			return
		}
	}
	for len(r.evs) > 0 {
		i, e := r.off, r.evs[0]
		if !r.ready(i, e) {
			break
		}
		at = e
		r.event(i, e)
		r.judged(e)
		r.evs[0] = nil
		r.evs = r.evs[1:]
		r.off++
	}
	r.take()
	if cap(r.evs) > 2*len(r.evs)+16 {
		// A long chunk judged: do not keep its backing array.
		r.evs = append([]*historypb.HistoryEvent(nil), r.evs...)
	}
	r.logs = append(r.logs, r.judge.Logs()...)
}

// judged notes what the look-ahead of later events needs of e.
func (r *runReader) judged(e *historypb.HistoryEvent) {
	r.last = e.GetEventId()
	if closes(e) {
		r.ended = e
		r.closed = true
		if p := r.pause(); p != nil {
			p.Ended, p.Called = e.GetEventId(), r.ex.Called // terminated, canceled or timed out while paused
			r.pauses.end()
		}
	}
	if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == protocol.DefaultHaltedSignal &&
		r.opts.AsRecorded && !r.attempted[e.GetEventId()] {
		r.halted = append(r.halted, e)
	}
}

// closes reports whether e ends its run.
func closes(e *historypb.HistoryEvent) bool {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

// start judges the run's start once the guard's marker is decided (the
// first workflow task's commands are in): it reports false until then.
func (r *runReader) start() bool {
	ex := &r.ex
	first := r.evs[0]
	start := first.GetWorkflowExecutionStartedEventAttributes()
	if start == nil {
		ex.Err = fmt.Errorf("event %d (%s): %w", first.GetEventId(), eventName(first), errNoStart)
		return true
	}
	version, marker, pinned, decided := r.recordedGuard()
	if !decided {
		return false
	}
	r.set = true
	runID := r.serverRunID(start)
	info := workflowInfo(start, runID)
	ex.WorkflowType, ex.WorkflowID, ex.RunID = info.WorkflowType.Name, info.WorkflowExecution.ID, runID
	ex.ContinuedFrom = start.GetContinuedExecutionRunId()
	ex.FirstCall = 1
	dc := r.dc
	ex.Recorded.Guarded, ex.Recorded.Version = version > 0, version
	now := first.GetEventTime().AsTime()

	var j judge.Judge
	// A chain is keyed by the id the run before continued as new into,
	// which a reset of this run keeps as its original id.
	if c := r.chain(start.GetOriginalExecutionRunId()); c != nil {
		j = c.judge
		ex.FirstCall = c.calls + 1
		j.NextRun(info, now)
	} else {
		guard := r.opts.Guard
		if r.opts.AsRecorded && version == 0 {
			// Recorded without the guard, the run was not guarded, whatever
			// the options say (the demo's supervisor was listed as guarded).
			guard.Retire = true
		}
		var err error
		if j, err = judge.New(guard); err != nil {
			ex.Err = err
			return true
		}
		j.OnRefused(r.refusedAnswer)
		if r.opts.AsRecorded && version > 0 {
			if pinned == nil {
				ex.Err = fmt.Errorf("event %d (%s): the guard's version marker has no pinned options after it (truncated?)", marker.GetEventId(), eventName(marker))
				return true
			}
			if err := j.Pin(version, func(ptr any) error { return dc.FromPayloads(pinned, ptr) }); err != nil {
				ex.Err = fmt.Errorf("event %d (%s): %w", marker.GetEventId(), eventName(marker), err)
				return true
			}
		}
		if !j.Start(info, now) {
			ex.NotGuarded = fmt.Sprintf("workflow type %q is out of scope: Options.Workflows, GuardWorkflow or Retire leave it out", ex.WorkflowType)
			if r.opts.AsRecorded && version == 0 {
				ex.NotGuarded = "recorded without the guard"
			}
		} else if p := start.GetHeader().GetFields()[carryHeader]; p != nil && ex.ContinuedFrom != "" && r.opts.AsRecorded && version > 0 {
			// The run before is not in the batch: start from what it carried.
			if err := j.Restore(func(ptr any) error { return dc.FromPayload(p, ptr) }); err != nil {
				ex.Problems = append(ex.Problems, fmt.Sprintf("event %d (%s): %v", first.GetEventId(), eventName(first), err))
			}
		}
	}
	r.judge = j
	ex.Guarded = j.Guarded()
	return true
}

// execution is the run's analysis so far; final, once the run is closed,
// hands the verdicts over (the Judge forgets them, so that the next run
// of a chain starts with none) and is called once.
func (r *runReader) execution(final bool) Execution {
	ex := r.ex
	ex.Closed = r.ended != nil
	ex.LastEvent = r.last
	ex.Pausable = r.set && r.pausable()
	ex.Pauses = r.pauses.view()
	if ex.Err != nil || r.judge == nil {
		return ex
	}
	switch {
	case r.opts.Follow:
		r.take()
		ex.Verdicts = r.hand()
		ex.Halted = r.handed.Halted
		ex.Halted.pauses = ex.Pauses
		ex.VerdictsSeen, ex.WarningsSeen = r.seen, r.warned
	case final:
		ex.Verdicts = r.judge.Verdicts()
	default:
		ex.Calls = slices.Clip(ex.Calls)
		ex.Verdicts = r.judge.Judged()
		ex.Recorded.Answers = slices.Clip(ex.Recorded.Answers)
		ex.Recorded.Halts = slices.Clip(ex.Recorded.Halts)
	}
	if !r.opts.Follow {
		ex.VerdictsSeen = len(ex.Verdicts)
		for _, v := range ex.Verdicts {
			if v.Warning != nil {
				ex.WarningsSeen++
			}
		}
	}
	ex.Problems = slices.Clip(ex.Problems)
	for _, l := range r.logs {
		ex.Problems = append(ex.Problems, "guard: "+l)
	}
	if r.opts.AsRecorded {
		ex.Recorded.guardAnswers(ex.Verdicts)
	}
	for i := range ex.Halted.Len() {
		if !ex.Halted.observed(i) {
			ex.Saved = ex.FirstCall + ex.Called - ex.Halted.Call(i)
			break
		}
	}
	for _, v := range ex.Verdicts {
		if v.Halt != nil && v.OnHalt != protocol.OnHaltObserve && ex.Halted.Len() == 0 {
			ex.Saved = ex.FirstCall + ex.Called - v.Call
			break
		}
	}
	return ex
}

// next is the state the run hands to the run it continued as new into,
// by that run's id ("" when it did not, or is not guarded).
func (r *runReader) next() (string, *openChain) {
	can := r.ended.GetWorkflowExecutionContinuedAsNewEventAttributes()
	if can == nil || r.ex.Err != nil || !r.ex.Guarded {
		return "", nil
	}
	return can.GetNewExecutionRunId(), &openChain{judge: r.judge, calls: r.judge.Calls()}
}

// serverRunID is the run's id as the server names it, the id the live
// guard's workflow.GetInfo gave it (what a signed answer is verified
// against): the run a reset last made, named by the reset's
// WorkflowTaskFailed (cause ResetWorkflow, NewRunId) among the events
// received, else the start event's OriginalExecutionRunId. A reset keeps
// the base run's start event, original id included, so that id alone
// names the base run. A history read in chunks holds the reset's event
// by then: the server writes a reset run's history up to it at once.
func (r *runReader) serverRunID(start *historypb.WorkflowExecutionStartedEventAttributes) string {
	for k := r.end() - 1; k >= r.off; k-- {
		a := r.at(k).GetWorkflowTaskFailedEventAttributes()
		if a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW && a.GetNewRunId() != "" {
			return a.GetNewRunId()
		}
	}
	return start.GetOriginalExecutionRunId()
}

// workflowInfo is what the guard's scope sees of the run.
func workflowInfo(a *historypb.WorkflowExecutionStartedEventAttributes, runID string) *workflow.Info {
	return &workflow.Info{
		WorkflowExecution:       workflow.Execution{ID: a.GetWorkflowId(), RunID: runID},
		OriginalRunID:           a.GetOriginalExecutionRunId(),
		FirstRunID:              a.GetFirstExecutionRunId(),
		WorkflowType:            workflow.Type{Name: a.GetWorkflowType().GetName()},
		TaskQueueName:           a.GetTaskQueue().GetName(),
		Attempt:                 a.GetAttempt(),
		ContinuedExecutionRunID: a.GetContinuedExecutionRunId(),
	}
}

// errNoStart is the error of a history that does not start with its run.
var errNoStart = errors.New("the history does not start with WorkflowExecutionStarted (truncated at the front?)")
