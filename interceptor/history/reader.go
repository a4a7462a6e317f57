package history

import (
	"errors"
	"fmt"

	"github.com/loopguard/loopguard/interceptor/protocol"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// Reader reads the history of one workflow execution as it grows: a run,
// or a chain of runs continued as new, fed run after run. Feed it the
// events in history order with Add, as many at a time as come (the
// pages of a long poll with WaitNewEvent, or the whole history at once);
// Execution tells what is judged so far, Close ends the history.
//
// Each event is judged as soon as the events its judgement reads after it
// are in, so the verdicts are the same whatever the chunks the history
// came in, and the same as the analysis of the finished history
// (AnalyzeFile). Judged without Options.AsRecorded (what a watcher of
// running executions does), that look-ahead is the rest of a workflow
// task: an event waits at most until the next workflow task starts, and
// the Reader holds no more than those events. With AsRecorded, a halt the
// guard recorded is judged once its answer is in the history (the call
// it held goes on), and the events until then are held.
//
// Memory: the Judge's state (the guard's own), the events held, the
// scheduled calls without a result yet, the loop.halted signals not
// matched to a halt (AsRecorded), and the Execution so far (its Calls
// grow with the run: one string header a call, the node names shared).
// Under Options.Follow it holds no Calls and each verdict in full only
// until Execution handed it over; the run's halts stay, compact
// (Halted; BenchmarkFollowMemory weighs it against the guard's own
// state).
// It holds nothing the history cannot rebuild: a new Reader fed the same
// events reaches the same Execution.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	opts Options
	run  *runReader
	// final is the current run's analysis once the run closed.
	final *Execution
	// nextRun and carried are the run the current one continued as new
	// into and the state it hands over.
	nextRun string
	carried *openChain
	// closed is set by Close: no event comes any more.
	closed bool
	// cursor is the id of the last event added to the current run.
	cursor int64
}

// NewReader returns a Reader judging under opts, or an error naming the
// first invalid option.
func NewReader(opts Options) (*Reader, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Reader{opts: opts}, nil
}

// Add appends events to the history, in history order, and judges what
// it can. A run's events after its close event belong to the next run
// of the chain, which starts with its WorkflowExecutionStarted. It
// returns an error when the history cannot be judged (it does not start
// with its run, events out of any order a server writes); the Reader
// then judges no more and Execution's Err is that error.
func (r *Reader) Add(events ...*historypb.HistoryEvent) error {
	if r.closed && len(events) > 0 {
		return errors.New("history: events added after Close")
	}
	for len(events) > 0 {
		if err := r.err(); err != nil {
			return err
		}
		if r.final != nil {
			e := events[0]
			if e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
				return fmt.Errorf("event %d (%s) after the run closed: a continued run starts with %s",
					e.GetEventId(), eventName(e), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
			}
			r.final, r.run = nil, nil
		}
		if r.run == nil {
			r.run = newRunReader(&r.opts, r.take)
		}
		n := len(events)
		for k, e := range events {
			if closes(e) {
				n = k + 1
				break
			}
		}
		if n > 0 {
			r.cursor = events[n-1].GetEventId()
		}
		r.run.add(events[:n])
		events = events[n:]
		if r.run.ended != nil {
			r.finish()
		}
	}
	return r.err()
}

func (r *Reader) err() error {
	if r.final != nil {
		return r.final.Err
	}
	if r.run != nil {
		return r.run.ex.Err
	}
	return nil
}

// take hands the state of the run before over to the run runID, when
// that run is the one it continued into.
func (r *Reader) take(runID string) *openChain {
	if runID != r.nextRun {
		return nil
	}
	c := r.carried
	r.nextRun, r.carried = "", nil
	return c
}

// finish ends the current run.
func (r *Reader) finish() {
	ex := r.run.execution(true)
	r.final = &ex
	r.nextRun, r.carried = r.run.next()
}

// Cursor is the id of the last event added to the current run (0: none
// yet): a follower whose long poll ended reads the history again and adds
// the events after it. (Server v1.32.1 ends the long poll of a paused
// execution's history at once, as it ends a closed one's: it waits only
// while the execution is Running.)
func (r *Reader) Cursor() int64 { return r.cursor }

// Execution is the analysis of the current run so far: the verdicts of
// the events judged, up to LastEvent. Once the run closed, it is final
// (Closed), until the first event of the run it continued as new into
// comes: the Reader keeps the state that run carries over, not the
// analysis of the runs before it.
func (r *Reader) Execution() Execution {
	if r.final != nil {
		return *r.final
	}
	if r.run == nil {
		return Execution{}
	}
	return r.run.execution(false)
}

// Ahead is the halt the current run's next guarded call will raise,
// where the events judged so far decide it, whatever that call is
// (judge.Judge.Ahead): in a run whose halts the reader answers
// with Workflow Pauses (pausable: the interceptor does not guard it),
// while the run is open and no pause holds it. A watcher pauses with it
// before the call is scheduled; the pause's request id names the halt
// (PauseRequestID), so that the Paused event answers the halt once the
// call raises it, as a pause after the halt does.
func (r *Reader) Ahead() (protocol.HaltEvent, protocol.OnHalt, bool) {
	run := r.run
	if r.final != nil || run == nil || run.judge == nil || !run.set || !run.pausable() || run.pause() != nil {
		return protocol.HaltEvent{}, "", false
	}
	return run.judge.Ahead()
}

// Close ends the history: no event will come any more (the run closed, or
// the caller stops reading). The events held are judged as the end of the
// history leaves them, and the current run's final analysis returned.
func (r *Reader) Close() Execution {
	r.closed = true
	if r.final != nil {
		return *r.final
	}
	if r.run == nil {
		return Execution{Err: errors.New("no history events")}
	}
	r.run.close()
	r.finish()
	return *r.final
}
