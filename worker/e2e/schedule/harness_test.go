package schedule_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// By is who the driver says it is: an escalation by anyone else (but the
// guard's own fail policy or pause timeout) is one nobody asked for.
const By = "schedule-driver"

// failure is one broken invariant of one run.
type failure struct {
	Invariant string
	Detail    string
}

// result is the outcome of one run.
type result struct {
	failures []failure
	halts    int
	answers  int
	// handlerDecisions counts the halts loop.status showed decided by a
	// halt handler; guided, the guidances it showed in force that a call
	// carried; windowed, the halts reset-window checked against a reset
	// of their loop; runtimeHalts, the halts on a runtime budget
	// handler-time checked; slowResumes, the halts a halt handler resumed
	// after taking longer than every runtime budget.
	handlerDecisions, guided, windowed, runtimeHalts, slowResumes int
	// runtimeSlack is, per runtime halt handler-time read, how far the
	// runtime it charged stayed below its bound.
	runtimeSlack []time.Duration
	// pausedHalts counts the runtime halts paused-time checked;
	// pausesTakenOff, the pauses it took off their loops, by how each
	// ended.
	pausedHalts    int
	pausesTakenOff map[pauseEnd]int
	// stuck is what stuck-halts found of the plan's stuck loop.
	stuck stuckOutcome
}

func (r *result) fail(inv, format string, args ...any) {
	r.failures = append(r.failures, failure{Invariant: inv, Detail: fmt.Sprintf(format, args...)})
}

// harness holds the server's clients and workers: one worker per guard
// profile and codec, each on its own task queue.
type harness struct {
	t       testing.TB
	clients map[bool]client.Client
	bound   time.Duration
	drift   bool
	dump    string // directory for the histories of failing runs
	// namespace is the server's, for visibility queries.
	namespace string

	mu      sync.Mutex
	workers map[string]bool
}

func newHarness(t testing.TB, srv *devserver.Server, bound time.Duration, drift bool) *harness {
	h := &harness{t: t, bound: bound, drift: drift, clients: map[bool]client.Client{}, workers: map[string]bool{}, namespace: srv.Namespace()}
	for _, codec := range []bool{false, true} {
		opts := client.Options{Logger: quiet()}
		if codec {
			opts.DataConverter = schedule.DataConverter()
		}
		c, err := srv.NewClient(opts)
		if err != nil {
			t.Fatalf("dial the embedded server: %v", err)
		}
		t.Cleanup(c.Close)
		h.clients[codec] = c
	}
	return h
}

func queue(p schedule.Plan) string {
	q := "schedule-" + p.Profile
	if p.Codec {
		q += "-codec"
	}
	if p.Runtime {
		q += "-runtime"
	}
	if p.Liveness != nil {
		q += fmt.Sprintf("-w%d", p.Liveness.Warnings)
	}
	if p.LongPause == schedule.LongPauseTimeout {
		q += "-pausetimeout"
	}
	return q
}

// worker starts the plan's worker once.
func (h *harness) worker(p schedule.Plan) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := queue(p)
	if h.workers[q] {
		return
	}
	h.workers[q] = true
	opts := p.Options()
	testsuite.StartWorker(h.t, h.clients[p.Codec], q, testsuite.WorkerOptions{Guard: &opts, Register: schedule.Register})
}

// run runs one plan and checks every invariant on it.
func (h *harness) run(p schedule.Plan) result {
	r := result{pausesTakenOff: map[pauseEnd]int{}}
	h.worker(p)
	c := h.clients[p.Codec]
	id := fmt.Sprintf("schedule-%d", p.Seed)
	// The bound is on standing still (nothing in the workflow's or its
	// children's guard status or progress changes), so a loaded machine
	// does not pass for a stuck workflow; the whole run gets ten times it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*h.bound)
	defer cancel()

	so := client.StartWorkflowOptions{
		ID: id, TaskQueue: queue(p), WorkflowExecutionTimeout: 10 * time.Minute,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING,
	}
	var run client.WorkflowRun
	var err error
	if p.StartHalt {
		run, err = c.SignalWithStartWorkflow(ctx, id, "halt", map[string]string{"reason": "stop at start", "by": By}, so, schedule.WorkflowName, p, schedule.RunState{})
	} else {
		run, err = c.ExecuteWorkflow(ctx, so, schedule.WorkflowName, p, schedule.RunState{})
	}
	if err != nil {
		r.fail("start", "%v", err)
		return r
	}
	d := &driver{h: h, c: c, p: p, id: id, r: &r, answered: map[string]time.Time{}, sent: make([]bool, len(p.Inputs)), waitSent: map[string]bool{}, lad: newLadder()}
	out, closeErr, closed := d.drive(ctx)
	if !closed {
		// Stuck: say where, then end it so the histories can be checked.
		r.fail("stuck", "not closed, standing still for %s; %s; the server: %s", h.bound, d.describe(), d.serverView())
		tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = c.TerminateWorkflow(tctx, id, "", "schedule test: stuck")
		for _, ch := range d.children {
			_ = c.TerminateWorkflow(tctx, ch, "", "schedule test: parent stuck")
		}
		tcancel()
	} else {
		var canceled *temporal.CanceledError
		var terminated *temporal.TerminatedError
		switch {
		case closeErr == nil:
		case d.canceled && errors.As(closeErr, &canceled):
		case d.terminated && errors.As(closeErr, &terminated):
		default:
			r.fail("close", "the workflow ended with %v", closeErr)
		}
		d.checkDecision()
		d.checkNotPaused()
		if closeErr == nil {
			d.checkWaits(out)
		}
	}
	hs := h.checkHistories(d, run.GetRunID())
	d.checkNotices(hs)
	d.checkOneLoop(hs)
	d.checkResetWindow(hs)
	d.checkHandlerTime(hs)
	d.checkStuckHalts(hs)
	if len(r.failures) > 0 && h.dump != "" {
		for _, x := range hs {
			name := fmt.Sprintf("seed-%d-%s.json", p.Seed, strings.ReplaceAll(x.name, " ", "-"))
			if err := testsuite.WriteHistoryFile(filepath.Join(h.dump, name), x.h); err != nil {
				r.fail("dump", "%v", err)
			}
		}
	}
	return r
}

// checkNotPaused: a closed workflow (terminated while paused included) is
// not counted as paused by the query the worker's gauges use.
func (d *driver) checkNotPaused() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	q := interceptor.PausedQuery(schedule.StateAttribute) + fmt.Sprintf(` AND WorkflowId = %q`, d.id)
	var n int64
	for {
		resp, err := d.c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: d.h.namespace, Query: q})
		if err == nil {
			if n = resp.GetCount(); n == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			d.r.fail("closed-counted-paused", "the closed workflow still counts as paused (%d, %v): %s", n, err, q)
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkWaits: every signal of the workflow's own that the driver sent
// reached it.
func (d *driver) checkWaits(out schedule.Outcome) {
	waits := d.p.Waits()
	var lost []string
	for _, tag := range out.Missed {
		if d.waitSent[tag] {
			lost = append(lost, fmt.Sprintf("%s (%q)", tag, waits[tag].Signal))
		}
	}
	if len(lost) > 0 {
		d.r.fail("own-signal-lost", "the workflow never received its own signal(s) the driver sent: %s", strings.Join(lost, ", "))
	}
}

// driver is the human: it answers every halt it sees, of the workflow and
// of its children, and sends the planned input.
type driver struct {
	h        *harness
	c        client.Client
	p        schedule.Plan
	id       string
	r        *result
	answered map[string]time.Time // run id/halt seq → when answered
	nth      map[string]int       // workflow id → halts answered
	sent     []bool
	waitSent map[string]bool // wait tag → its signal was sent
	// seen is a fingerprint of the last progress and statuses; moved is
	// when it last changed.
	seen       string
	moved      time.Time
	canceled   bool
	terminated bool
	children   []string
	last       map[string]protocol.Status
	lad        ladder
	// extends counts the resume-extend answers sent to the root: each
	// lengthens what its stuck loop may take (stuck-halts).
	extends int
	// long is the plan's long pause: the halt it holds and when it ends.
	long longPause
}

// longPause is the driver's record of the plan's long pause.
type longPause struct {
	key        string // the halt it holds ("" until it starts)
	until      time.Time
	done, sent bool
}

func (d *driver) drive(ctx context.Context) (schedule.Outcome, error, bool) {
	type closed struct {
		out schedule.Outcome
		err error
	}
	done := make(chan closed, 1)
	go func() {
		for {
			var out schedule.Outcome
			err := d.c.GetWorkflow(ctx, d.id, "").Get(ctx, &out)
			if err == nil || closeError(err) || ctx.Err() != nil {
				done <- closed{out, err}
				return
			}
			// A long poll that ended without the workflow closing (a
			// transport deadline or reset): ask again.
			time.Sleep(100 * time.Millisecond)
		}
	}()
	d.nth, d.last = map[string]int{}, map[string]protocol.Status{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	d.moved = time.Now()
	for {
		if time.Since(d.moved) > d.h.bound {
			return schedule.Outcome{}, nil, false
		}
		select {
		case c := <-done:
			if ctx.Err() != nil {
				return schedule.Outcome{}, nil, false
			}
			return c.out, c.err, true
		case <-ctx.Done():
			return schedule.Outcome{}, nil, false
		case <-tick.C:
			d.step(ctx)
		}
	}
}

func (d *driver) step(ctx context.Context) {
	var prog schedule.Progress
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	v, err := d.c.QueryWorkflow(qctx, d.id, "", schedule.ProgressQuery)
	cancel()
	if err != nil || v.Get(&prog) != nil {
		return
	}
	for i, in := range d.p.Inputs {
		if !d.sent[i] && !in.OnHalt && prog.Calls >= in.AtCall {
			d.sent[i] = true
			d.send(ctx, in)
		}
	}
	waits := d.p.Waits()
	for _, tag := range prog.Waiting {
		if !d.waitSent[tag] {
			d.waitSent[tag] = true
			_ = d.c.SignalWorkflow(ctx, d.id, "", waits[tag].Signal, map[string]string{"tag": tag})
		}
	}
	for _, ch := range prog.Children {
		if !contains(d.children, ch) {
			d.children = append(d.children, ch)
		}
		d.childHandled(ctx, ch)
	}
	d.progressHandled(d.id, prog.Handled)
	fp := fmt.Sprintf("%d/%d/%v/%v;", prog.Run, prog.Calls, prog.Children, prog.Waiting)
	defer func() {
		if fp != d.seen {
			d.seen, d.moved = fp, time.Now()
		}
	}()
	for _, id := range append([]string{d.id}, prog.Children...) {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := d.status(qctx, id)
		cancel()
		if err != nil {
			continue
		}
		d.last[id] = st
		d.observe(id, st)
		fp += fmt.Sprintf("%s:%s/%d/%d;", id, st.State, st.Halts, st.TotalCalls)
		if st.State != protocol.StateHalted || st.Halt == nil {
			continue
		}
		key := fmt.Sprintf("%s/%d", st.Halt.RunID, st.Halt.Seq)
		at, seen := d.answered[key]
		switch {
		case !seen && d.leaveToHandler(id, key, st.Halt.Seq):
			// The workflow's halt handler decides first.
		case !seen && id == d.id && d.cancelOnHalt(prog.Calls):
			d.r.halts++
			d.answered[key] = time.Now()
		case !seen && id == d.id && d.p.LongPause != "" && !d.long.done:
			// The first halt the driver answers: late. Answered again,
			// plainly, 5 s after it is due if it is still in force.
			d.r.halts++
			d.long = longPause{key: key, until: time.Now().Add(schedule.LongPauseDelay), done: true}
			d.answered[key] = d.long.until
		case key == d.long.key && !d.long.sent:
			if time.Now().After(d.long.until) {
				d.long.sent = true
				d.endLongPause(ctx)
			}
		case !seen && id == d.id && prog.Stuck:
			// A stuck loop halted: the human stops it.
			d.r.halts++
			d.answered[key] = time.Now()
			d.answer(ctx, id, schedule.AnswerEscalate)
		case !seen:
			d.r.halts++
			a := d.p.Answers[d.nth[id]%len(d.p.Answers)]
			d.nth[id]++
			d.answered[key] = time.Now()
			d.answer(ctx, id, a)
		case time.Since(at) > 5*time.Second:
			// Answered, and still halted on it: answer again, plainly.
			d.answered[key] = time.Now()
			d.answer(ctx, id, schedule.AnswerResume)
		}
	}
}

// endLongPause ends the plan's long pause as it says: a resume, an
// escalation, a cancellation, or nothing (the pause timeout escalates).
func (d *driver) endLongPause(ctx context.Context) {
	switch d.p.LongPause {
	case schedule.LongPauseResume:
		d.answer(ctx, d.id, schedule.AnswerResume)
	case schedule.LongPauseEscalate:
		d.answer(ctx, d.id, schedule.AnswerEscalate)
	case schedule.LongPauseCancel:
		d.send(ctx, schedule.Input{Kind: schedule.InputCancel})
	}
}

// cancelOnHalt sends a planned cancellation due at a halt, instead of an
// answer, and reports whether it did.
func (d *driver) cancelOnHalt(calls int) bool {
	for i, in := range d.p.Inputs {
		if !d.sent[i] && in.OnHalt && calls >= in.AtCall {
			d.sent[i] = true
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			d.send(ctx, in)
			return true
		}
	}
	return false
}

func (d *driver) status(ctx context.Context, id string) (protocol.Status, error) {
	v, err := d.c.QueryWorkflow(ctx, id, "", protocol.DefaultStatusQuery)
	if err != nil {
		return protocol.Status{}, err
	}
	var s protocol.Status
	return s, v.Get(&s)
}

// answer sends one answer to a halted workflow; refusals are fine (a
// pause timeout or a race may have decided first).
func (d *driver) answer(ctx context.Context, id string, a schedule.Answer) {
	d.r.answers++
	d.lad.lastSent[id] = time.Now()
	req := map[string]any{"reason": "schedule test", "by": By}
	switch a {
	case schedule.AnswerResume:
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req)
	case schedule.AnswerResumeExtend:
		req["extend"] = resumeExtension
		if id == d.id {
			d.extends++
		}
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req)
	case schedule.AnswerEscalate:
		_ = d.c.SignalWorkflow(ctx, id, "", "escalate", req)
	case schedule.AnswerResumeUpdate:
		d.update(ctx, id, "resume", req)
	case schedule.AnswerEscalateUpdate:
		d.update(ctx, id, "escalate", req)
	case schedule.AnswerBadThenResume:
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", badPayload("broken-json"))
		_ = d.c.SignalWorkflow(ctx, id, "", "resume", req)
	default:
		d.answerGuidance(ctx, id, a)
	}
}

func (d *driver) update(ctx context.Context, id, name string, arg any) {
	_ = d.tryUpdate(ctx, id, name, arg)
}

// send sends one planned input to the root workflow.
func (d *driver) send(ctx context.Context, in schedule.Input) {
	if in.Name == "resume" || in.Name == "escalate" {
		// A bad payload the guard can still take (extend on a resume)
		// answers a halt in force like any answer.
		d.lad.lastSent[d.id] = time.Now()
	}
	switch in.Kind {
	case schedule.InputHalt:
		_ = d.c.SignalWorkflow(ctx, d.id, "", "halt", map[string]string{"reason": "planned stop", "by": By})
	case schedule.InputBadSignal:
		_ = d.c.SignalWorkflow(ctx, d.id, "", in.Name, badPayload(in.Bad))
	case schedule.InputBadUpdate:
		d.update(ctx, d.id, in.Name, badPayload(in.Bad))
	case schedule.InputCancel:
		d.canceled = true
		_ = d.c.CancelWorkflow(ctx, d.id, "")
	case schedule.InputTerminate:
		d.terminated = true
		_ = d.c.TerminateWorkflow(ctx, d.id, "", "schedule test: an operator terminates a paused workflow")
	}
}

// closeError reports whether err is how a workflow closed (failed,
// canceled, terminated, timed out) rather than a failure to learn it.
func closeError(err error) bool {
	var (
		wee        *temporal.WorkflowExecutionError
		canceled   *temporal.CanceledError
		terminated *temporal.TerminatedError
		timeout    *temporal.TimeoutError
		app        *temporal.ApplicationError
	)
	return errors.As(err, &wee) || errors.As(err, &canceled) || errors.As(err, &terminated) ||
		errors.As(err, &timeout) || errors.As(err, &app)
}

// resumeExtension is the extend of the driver's resume-extend answers. It
// raises no runtime budget: a resumed runtime halt resets what it counts,
// which handler-time relies on.
var resumeExtension = map[string]int{"maxCallsPerNode": 4, "maxCycleIterations": 4, "maxEdgeWithoutProgress": 4}

// badPayload builds the named malformed payload.
func badPayload(name string) any {
	raw := func(enc, data string) converter.RawValue {
		return converter.NewRawValue(&commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(enc)},
			Data:     []byte(data),
		})
	}
	switch name {
	case "broken-json":
		return raw(converter.MetadataEncodingJSON, `{"reason":`)
	case "binary":
		return raw(converter.MetadataEncodingBinary, "\xff\x00\x01")
	case "unknown-field":
		return map[string]any{"bogus": 1}
	case "wrong-type":
		return map[string]any{"reason": 42}
	case "oversize":
		return map[string]string{"reason": strings.Repeat("x", 20<<10)}
	case "extend-on-escalate":
		return map[string]any{"extend": map[string]int{"maxCallsPerNode": 1}}
	}
	panic("unknown bad payload " + name)
}

// describe says where a stuck run stands: the last status of the workflow
// and of each child the driver saw.
func (d *driver) describe() string {
	var b strings.Builder
	for _, id := range append([]string{d.id}, d.children...) {
		st, ok := d.last[id]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "[%s: state %s, halts %d, calls %d", id, st.State, st.Halts, st.TotalCalls)
		if st.Halt != nil {
			fmt.Fprintf(&b, ", halt #%d %s at %s", st.Halt.Seq, st.Halt.HaltReason, st.Halt.Node)
		}
		if st.LastRejected != nil {
			fmt.Fprintf(&b, ", last rejected %s: %s", st.LastRejected.Name, st.LastRejected.Reason)
		}
		b.WriteString("] ")
	}
	fmt.Fprintf(&b, "answers sent %d", d.r.answers)
	return b.String()
}

// serverView says what the server holds for a stuck run and its children:
// the pending workflow task (a task no worker took, or one that keeps
// failing), pending activities and children, and the last events. A run
// stuck before its first status query was answered shows nothing else.
func (d *driver) serverView() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	for _, id := range append([]string{d.id}, d.children...) {
		desc, err := d.c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			fmt.Fprintf(&b, "[%s: describe: %v] ", id, err)
			continue
		}
		info := desc.GetWorkflowExecutionInfo()
		fmt.Fprintf(&b, "[%s: %s, %d events", id, info.GetStatus(), info.GetHistoryLength())
		if wt := desc.GetPendingWorkflowTask(); wt != nil {
			fmt.Fprintf(&b, ", workflow task %s attempt %d scheduled %s", wt.GetState(), wt.GetAttempt(), wt.GetScheduledTime().AsTime().Format(time.TimeOnly))
			if wt.GetStartedTime() != nil {
				fmt.Fprintf(&b, " started %s", wt.GetStartedTime().AsTime().Format(time.TimeOnly))
			}
		}
		for _, a := range desc.GetPendingActivities() {
			fmt.Fprintf(&b, ", activity %s %s attempt %d", a.GetActivityType().GetName(), a.GetState(), a.GetAttempt())
			if f := a.GetLastFailure(); f != nil {
				fmt.Fprintf(&b, " (%s)", f.GetMessage())
			}
		}
		for _, ch := range desc.GetPendingChildren() {
			fmt.Fprintf(&b, ", child %s", ch.GetWorkflowId())
		}
		var last []string
		it := d.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				break
			}
			last = append(last, fmt.Sprintf("%d %s", e.GetEventId(), e.GetEventType()))
			if len(last) > 4 {
				last = last[1:]
			}
		}
		fmt.Fprintf(&b, ", last events: %s] ", strings.Join(last, ", "))
	}
	// The task queue's pollers: a workflow task that no worker took.
	tq, err := d.c.DescribeTaskQueue(ctx, queue(d.p), enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		fmt.Fprintf(&b, "[task queue %s: %v]", queue(d.p), err)
		return b.String()
	}
	fmt.Fprintf(&b, "[task queue %s: %d pollers", queue(d.p), len(tq.GetPollers()))
	for _, p := range tq.GetPollers() {
		fmt.Fprintf(&b, ", %s last %s", p.GetIdentity(), p.GetLastAccessTime().AsTime().Format(time.TimeOnly))
	}
	b.WriteString("]")
	return b.String()
}

// checkDecision: the guard's last decision, if an escalation, was the
// driver's or the guard's own policy (fail, pause timeout), never made up.
func (d *driver) checkDecision() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := d.status(ctx, d.id)
	if err != nil {
		return // a closed run's query can fail (canceled before the first task)
	}
	dec := st.LastDecision
	if dec == nil || dec.Action != "escalate" || dec.By == By {
		return
	}
	if dec.By == interceptor.HandlerBy && schedule.HandlerFor(d.p.Handlers, dec.HaltSeq).Action() == protocol.ActionEscalate {
		return
	}
	if dec.By == "loopguard" && (strings.HasPrefix(dec.Reason, "policy:") || strings.Contains(dec.Reason, "pause timeout")) {
		return
	}
	d.r.fail("unasked-escalation", "the guard reports an escalation nobody sent: %+v", *dec)
}

// checkHistories exports every run of the workflow (following
// continue-as-new) and every child, and checks each history: closed, no
// workflow task failed, and it replays with its recorded options, each
// drifted one, and its codec.
func (h *harness) checkHistories(d *driver, firstRun string) []hist {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var hs []hist
	runID := firstRun
	for i := 0; runID != "" && i < 10; i++ {
		hi, err := testsuite.ExportHistory(ctx, d.c, d.id, runID)
		if err != nil {
			d.r.fail("export", "run %s: %v", runID, err)
			break
		}
		hs = append(hs, hist{fmt.Sprintf("run %d", i), hi})
		runID = ""
		if last := hi.GetEvents(); len(last) > 0 {
			if a := last[len(last)-1].GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				runID = a.GetNewExecutionRunId()
			}
		}
	}
	if d.p.StartHalt {
		d.checkStartHalt(hs[0].h)
	}
	for _, tag := range d.p.ChildTags() {
		id := d.id + "-" + tag
		if !h.waitClosed(ctx, d, id) {
			continue
		}
		hi, err := testsuite.ExportHistory(ctx, d.c, id, "")
		if err != nil {
			d.r.fail("export", "child %s: %v", id, err)
			continue
		}
		hs = append(hs, hist{"child " + tag, hi})
	}

	opts := d.p.Options()
	var drifts []schedule.Drift
	if h.drift {
		var err error
		if drifts, err = schedule.Drifts(opts); err != nil {
			d.r.fail("drift", "%v", err)
		}
	}
	for _, x := range hs {
		info := testsuite.Inspect(x.h)
		if !info.Closed {
			d.r.fail("not-closed", "%s: the history does not end with a close event", x.name)
		}
		if fails := taskFailures(x.h); len(fails) > 0 {
			d.r.fail("wft-failed", "%s: %d WorkflowTaskFailed event(s), first: %s", x.name, len(fails), fails[0])
		}
		if err := replay(x.h, opts, d.p.Codec); err != nil {
			d.r.fail("replay-recorded", "%s: %v", x.name, short(err))
		}
		for _, dr := range drifts {
			if err := replay(x.h, dr.Options, d.p.Codec); err != nil {
				d.r.fail("replay-drift:"+dr.Field, "%s: %v", x.name, short(err))
			}
		}
	}
	return hs
}

// checkStartHalt: a halt sent with SignalWithStart halts the first guarded
// call (reason user_stop), seen as a loop.halted signal in the first run.
func (d *driver) checkStartHalt(h *historypb.History) {
	dc := converter.GetDefaultDataConverter()
	if d.p.Codec {
		dc = schedule.DataConverter()
	}
	scheduled := false
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			scheduled = true
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				scheduled = true
			}
		}
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal || len(a.GetInput().GetPayloads()) == 0 {
			continue
		}
		var ev protocol.HaltEvent
		if err := dc.FromPayload(a.GetInput().GetPayloads()[0], &ev); err == nil && ev.HaltReason == protocol.ReasonUserStop {
			return
		}
	}
	if scheduled {
		d.r.fail("start-halt-lost", "a halt sent with SignalWithStart never halted the workflow (no user_stop loop.halted in its first run)")
	}
}

// hist is one exported history of a run.
type hist struct {
	name string // "run 0", "child t5"
	h    *historypb.History
}

// waitClosed waits for a child to close; false when it never started.
func (h *harness) waitClosed(ctx context.Context, d *driver, id string) bool {
	for {
		desc, err := d.c.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			return false
		case err != nil:
			d.r.fail("export", "describe child %s: %v", id, err)
			return false
		case desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return true
		}
		select {
		case <-ctx.Done():
			d.r.fail("stuck", "child %s still running after its parent closed", id)
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = d.c.TerminateWorkflow(tctx, id, "", "schedule test: child stuck")
			cancel()
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// replay replays a history on a fresh replayer with the guard configured
// by opts and, for a codec plan, the codec. The SDK's deadlock detector
// (TMPRL1101: a workflow coroutine did not yield for a second) fires on a
// machine busy with other work; such a replay is tried again, up to twice.
func replay(h *historypb.History, opts interceptor.Options, codec bool) error {
	var err error
	for range 3 {
		if err = replayOnce(h, opts, codec); err == nil || !strings.Contains(err.Error(), "TMPRL1101") {
			return err
		}
	}
	return err
}

func replayOnce(h *historypb.History, opts interceptor.Options, codec bool) error {
	g, err := interceptor.New(opts)
	if err != nil {
		return fmt.Errorf("guard options: %w", err)
	}
	ro := worker.WorkflowReplayerOptions{Interceptors: []sdkinterceptor.WorkerInterceptor{g}, DisableDeadlockDetection: true}
	if codec {
		ro.DataConverter = schedule.DataConverter()
	}
	r, err := worker.NewWorkflowReplayerWithOptions(ro)
	if err != nil {
		return err
	}
	schedule.RegisterWorkflows(r)
	info := testsuite.Inspect(h)
	return r.ReplayWorkflowHistoryWithOptions(quiet(), h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: info.WorkflowID},
	})
}

// taskFailures lists the workflow task failures of a history as "cause:
// message", leaving out one kind that is no failure of workflow code: the
// server refusing to complete the workflow because a human's signal arrived
// during the task (UnhandledCommand), which it retries at once (the same
// refusal caused by the guard's own loop.halted signal does count), and a
// terminated child's task cut short (ForceCloseCommand).
func taskFailures(h *historypb.History) []string {
	var out []string
	events := h.GetEvents()
	terminated := len(events) > 0 && events[len(events)-1].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED
	for i, e := range events {
		a := e.GetWorkflowTaskFailedEventAttributes()
		if a == nil {
			continue
		}
		if a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND && !haltedSignalNext(events[i+1:]) {
			continue
		}
		if a.GetCause() == enumspb.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND && terminated {
			// The parent closed and its close policy terminated this child
			// while one of its tasks was in flight.
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s", a.GetCause(), firstLine(a.GetFailure().GetMessage())))
	}
	return out
}

// haltedSignalNext reports whether a loop.halted signal is among the events
// up to the next workflow task start.
func haltedSignalNext(events []*historypb.HistoryEvent) bool {
	for _, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED {
			return false
		}
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == protocol.DefaultHaltedSignal {
			return true
		}
	}
	return false
}

func short(err error) string { return firstLine(err.Error()) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func quiet() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }
