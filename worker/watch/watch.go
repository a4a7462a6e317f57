package watch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"
)

// Metric names of the watcher.
const (
	MetricFollowed     = "loopguard_watch_followed"
	MetricWarnings     = "loopguard_watch_warnings"
	MetricHalts        = "loopguard_watch_halts"
	MetricPauses       = "loopguard_watch_pauses"
	MetricPauseRefused = "loopguard_watch_pause_refused"
	MetricPauseLag     = "loopguard_watch_pause_lag"
	// MetricEscapedHalts counts the halts whose run closed before their
	// pause landed (HaltStatus.Action ActionEscaped).
	MetricEscapedHalts = "loopguard_watch_escaped_halts"
	// MetricUnstartedTaskFailed counts the workflow tasks a pause failed
	// before they started (see ExecutionStatus.UnstartedTaskFailed).
	MetricUnstartedTaskFailed = "loopguard_watch_unstarted_task_failed"
	// MetricPauseMended counts the runs the watcher reset because its own
	// pause failed a workflow task before the task started (pausepoint.go).
	MetricPauseMended = "loopguard_watch_pause_mended"
	// MetricPauseAheadUndone counts the watcher's pauses ahead of a halt
	// that it undid because the halt did not come (ahead.go).
	MetricPauseAheadUndone = "loopguard_watch_pause_ahead_undone"
)

// ActionEscaped is the action of a halt whose run closed before its pause
// landed: a loop that ended (completed, failed, continued as new) first.
const ActionEscaped = "escaped"

// maxClosedListed bounds the closed runs with a halt Status still lists
// (the oldest go first): a loop that ended before its pause landed is
// the one an operator most needs to find, and the listing, which shows
// only running executions, no longer does.
const maxClosedListed = 1000

// refusalRetry is how long after the server refused Workflow Pause the
// watcher goes straight to the fallback before it asks again: a namespace
// whose flag is turned on later gets pauses within it, and one whose flag
// stays off is not asked at every halt.
const refusalRetry = time.Minute

// Watcher follows the running executions a query selects, judges each
// one's history as it grows, and pauses the executions the judgement
// halts.
type Watcher struct {
	opts Options

	mu       sync.Mutex
	followed map[string]*follower // by run id
	ended    map[string]bool      // runs followed to their end, still listed
	closed   []closedRun          // runs followed to their close with a halt, oldest first
	refusal  *Refusal
	warnings int
	halts    int
	pauses   int
	escaped  int
	ahead    int
	undone   int
	// followers counts the followers' goroutines of Run, for a follower
	// that starts another (the run its mend made).
	followers *sync.WaitGroup
}

// New returns a Watcher, or an error naming the first invalid option.
func New(opts Options) (*Watcher, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Watcher{opts: o, followed: map[string]*follower{}, ended: map[string]bool{}}, nil
}

// Query is the visibility query the watcher lists: Options.Query and
// that the execution runs (Running or Paused).
func (w *Watcher) Query() string {
	const running = `(ExecutionStatus="Running" OR ExecutionStatus="Paused")`
	if w.opts.Query == "" {
		return running
	}
	return "(" + w.opts.Query + ") AND " + running
}

// Run follows the executions until ctx is done, then waits for its
// followers and returns nil. It returns an error at once when the server
// rejects the query.
func (w *Watcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	w.mu.Lock()
	w.followers = &wg
	w.mu.Unlock()
	w.checkPause(ctx)
	tick := time.NewTicker(w.opts.PollInterval)
	defer tick.Stop()
	first := true
	for {
		err := w.list(ctx, &wg)
		var invalid *serviceerror.InvalidArgument
		switch {
		case ctx.Err() != nil:
			return nil
		case first && errors.As(err, &invalid):
			return fmt.Errorf("watch: list %s: %w", w.Query(), err)
		case err != nil:
			w.opts.Logger.Warn("watch: listing the executions failed; trying again", zap.String("query", w.Query()), zap.Error(err))
		}
		first = false
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// list lists the query's executions and follows those of the shard not
// followed yet.
func (w *Watcher) list(ctx context.Context, wg *sync.WaitGroup) error {
	var token []byte
	listed := map[string]bool{}
	defer func() {
		// Forget the ended runs the listing no longer shows.
		w.mu.Lock()
		for id := range w.ended {
			if !listed[id] {
				delete(w.ended, id)
			}
		}
		w.mu.Unlock()
	}()
	for {
		page, err := w.opts.Service.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: w.opts.Namespace, Query: w.Query(), NextPageToken: token, PageSize: 1000,
		})
		if err != nil {
			return err
		}
		for _, info := range page.GetExecutions() {
			ex := info.GetExecution()
			listed[ex.GetRunId()] = true
			if !w.inShard(ex.GetWorkflowId()) {
				continue
			}
			w.start(ctx, wg, ex, info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			// A followed run the listing no longer shows has ended (or
			// left the query): its follower, if it waits out a pause,
			// looks again now.
			w.mu.Lock()
			for id, f := range w.followed {
				if !listed[id] {
					f.running()
				}
			}
			w.mu.Unlock()
			return nil
		}
	}
}

func (w *Watcher) inShard(workflowID string) bool {
	if w.opts.Shard.Count <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(workflowID))
	return int(h.Sum32()%uint32(w.opts.Shard.Count)) == w.opts.Shard.Index
}

// start follows ex unless it is followed, ended or one too many; it
// wakes the follower of a paused run that runs again.
func (w *Watcher) start(ctx context.Context, wg *sync.WaitGroup, ex *commonpb.WorkflowExecution, running bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := ex.GetRunId()
	if f := w.followed[id]; f != nil {
		if running {
			f.running()
		}
		return
	}
	if w.ended[id] || len(w.followed) >= w.opts.MaxFollowed {
		return
	}
	f := &follower{w: w, workflowID: ex.GetWorkflowId(), runID: id, wake: make(chan struct{}, 1)}
	w.followed[id] = f
	w.opts.Metrics.Gauge(MetricFollowed).Update(float64(len(w.followed)))
	wg.Add(1)
	go func() {
		defer wg.Done()
		ended := f.run(ctx)
		es, listed := f.status()
		w.mu.Lock()
		delete(w.followed, id)
		if ended {
			w.ended[id] = true
		}
		if ended && listed && len(es.Halts) > 0 {
			es.Closed = true
			if len(w.closed) == maxClosedListed {
				w.closed = slices.Delete(w.closed, 0, 1)
			}
			w.closed = append(w.closed, closedLine(es))
		}
		w.opts.Metrics.Gauge(MetricFollowed).Update(float64(len(w.followed)))
		w.mu.Unlock()
	}()
}

// Status is what the watcher follows and what it did.
type Status struct {
	Namespace string `json:"namespace"`
	Query     string `json:"query"`
	// Followed counts the executions followed; Interceptor those of them
	// left to the interceptor's own guard (its version marker is in
	// their history).
	Followed    int `json:"followed"`
	Interceptor int `json:"interceptor"`
	// Warnings, Halts and Pauses count what this process saw and did. A
	// warning an earlier process signalled, one before a halt a watcher's
	// pause answered or before a watcher's pause ended, and a verdict a
	// reset copied from its base run, are not counted again.
	Warnings int `json:"warnings"`
	// A halt is counted by the first process that reads it before
	// another process's pause answered it: across a restart, once. Escaped counts
	// the halts whose run closed before their pause landed.
	Halts   int `json:"halts"`
	Pauses  int `json:"pauses"`
	Escaped int `json:"escaped"`
	// Ahead counts the pauses asked ahead of their halt, while the
	// workflow task that reads the results that decide it ran (counted
	// in Pauses too), and Undone those of them undone because the halt
	// did not come (the task scheduled no guarded call).
	Ahead  int `json:"ahead"`
	Undone int `json:"undone"`
	// Executions are the followed executions with a warning or a halt,
	// and the last maxClosedListed runs followed to their close with a
	// halt (Closed), by workflow id.
	Executions []ExecutionStatus `json:"executions,omitempty"`
	// Refusal is set once the server refused Workflow Pause.
	Refusal *Refusal `json:"refusal,omitempty"`
}

// Refusal is the server's refusal of Workflow Pause and what the watcher
// does instead.
type Refusal struct {
	Error    string    `json:"error"`
	Time     time.Time `json:"time"`
	Fallback string    `json:"fallback"`
	// Permanent is set when pause is never asked again (a server with
	// the known pause race); else it is asked again refusalRetry later.
	Permanent bool `json:"permanent,omitempty"`
}

// ExecutionStatus is one followed execution.
type ExecutionStatus struct {
	WorkflowID   string `json:"workflowId"`
	RunID        string `json:"runId"`
	WorkflowType string `json:"workflowType"`
	// Interceptor is the interceptor's guard version when it guards the
	// execution itself (the watcher leaves it alone), else 0.
	Interceptor int `json:"interceptor,omitempty"`
	Warnings    int `json:"warnings"`
	// Paused is set while the execution is paused; PausedBy is the
	// pause's request id (PauseRequestID for the watcher's).
	Paused   bool         `json:"paused"`
	PausedBy string       `json:"pausedBy,omitempty"`
	Halts    []HaltStatus `json:"halts,omitempty"`
	// UnstartedTaskFailed are the event ids of workflow tasks a pause
	// failed before they started (cause
	// WorkflowPauseRequestedBeforeTaskStarted). A run of the TypeScript
	// SDK 1.24.0 fails every workflow task after such a pause is lifted,
	// until it is reset to ResetTo, the first such failure: a reset there
	// keeps every event before it (docs/watch.md, "When the watcher
	// pauses"). The watcher avoids pausing while a task waits to start,
	// and mends a run its own pause harmed anyway (Mended: the reset run).
	UnstartedTaskFailed []int64 `json:"unstartedTaskFailed,omitempty"`
	// Problems counts the events the judgement could not read (a
	// payload a codec encoded, without Options.DataConverter): their
	// results are not seen by the detectors. The first are logged.
	Problems int    `json:"problems,omitempty"`
	ResetTo  int64  `json:"resetTo,omitempty"`
	Mended   string `json:"mended,omitempty"`
	// Closed is set once the run closed; its halts stay listed.
	Closed bool `json:"closed,omitempty"`
}

// HaltStatus is one halt and how it was answered: the full evidence is
// in Event.
type HaltStatus struct {
	Call     int    `json:"call"`
	Seq      int    `json:"seq"`
	Detector string `json:"detector"`
	Node     string `json:"node"`
	// Answered is set once a Workflow Pause followed the halt; PausedBy
	// is the pause's request id.
	Answered bool   `json:"answered"`
	PausedBy string `json:"pausedBy,omitempty"`
	// Action is what the watcher did: "pause", "paused by another",
	// "superseded" (a halt met while the pause of an earlier one landed),
	// ActionEscaped (the run closed before the pause landed), or the
	// fallback ("signal", "cancel", "observe").
	Action string `json:"action,omitempty"`
	// TrippedAt is the time of the tripping call's event, PausedAt the
	// pause's, CallsBefore the calls scheduled between them.
	TrippedAt   time.Time          `json:"trippedAt"`
	PausedAt    time.Time          `json:"pausedAt,omitzero"`
	CallsBefore int                `json:"callsBefore,omitempty"`
	Event       protocol.HaltEvent `json:"event"`
}

// Status says what the watcher follows and did.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := Status{
		Namespace: w.opts.Namespace, Query: w.Query(), Followed: len(w.followed),
		Warnings: w.warnings, Halts: w.halts, Pauses: w.pauses, Escaped: w.escaped, Ahead: w.ahead, Undone: w.undone, Refusal: w.refusal,
	}
	for i := range w.closed {
		s.Executions = append(s.Executions, w.closed[i].status())
	}
	for _, f := range w.followed {
		es, ok := f.status()
		if es.Interceptor > 0 {
			s.Interceptor++
		}
		if ok {
			s.Executions = append(s.Executions, es)
		}
	}
	sort.Slice(s.Executions, func(a, b int) bool {
		x, y := &s.Executions[a], &s.Executions[b]
		if x.WorkflowID != y.WorkflowID {
			return x.WorkflowID < y.WorkflowID
		}
		return x.RunID < y.RunID
	})
	return s
}

func (w *Watcher) count(warnings, halts, pauses int) {
	w.mu.Lock()
	w.warnings += warnings
	w.halts += halts
	w.pauses += pauses
	w.mu.Unlock()
}

func (w *Watcher) countAhead(ahead, undone int) {
	w.mu.Lock()
	w.ahead += ahead
	w.undone += undone
	w.mu.Unlock()
}

func (w *Watcher) countEscaped() {
	w.mu.Lock()
	w.escaped++
	w.mu.Unlock()
}
