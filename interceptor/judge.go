package interceptor

import (
	"fmt"
	"time"

	"github.com/loopguard/loopguard/interceptor/internal/judgehook"
	"github.com/loopguard/loopguard/interceptor/protocol"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// judge is the guard's judgement of one execution fed from outside a
// workflow, from its history: package interceptor/internal/judge documents
// it (Judge) and hands it to the analysis of histories. It drives the
// guard's own core in the order the guard does.
type judge struct {
	g       guard
	guarded bool
	// recorded is set when the Judge follows the options and decisions
	// recorded in the history (Pin): a halt then waits for the decision
	// the history holds. Otherwise every halt is answered as OnHalt
	// observe answers it, so that the rest of the history is judged too.
	recorded bool
	now      time.Time
	calls    int
	verdicts []Verdict
	// blocked is the call a recorded pause holds until its decision.
	blocked *blockedCall
	// refused hears each answer the guard refused (OnRefused).
	refused func(name string, p *commonpb.Payload, err error)
	// admitted are calls a recorded halt let through, waiting for their
	// scheduled event.
	admitted []admittedCall
	results  map[int]*recordedResult
	nextID   int
	logs     judgeLog
	// canceled is set once the history shows the workflow's cancellation
	// requested: a recorded halt then ends as the paused call does when
	// its wait returns the cancellation.
	canceled bool
}

// Verdict is a warning or a halt the guard raises at a call.
type Verdict struct {
	// Call is the guarded call (from 1, counted over the runs of a
	// continue-as-new chain) the trip met.
	Call int `json:"call"`
	// Warning is set for a warning, with the trip's Evidence; Halt for a
	// halt, whose evidence it holds.
	Warning  *protocol.Warning   `json:"warning,omitempty"`
	Evidence *detect.Evidence    `json:"evidence,omitempty"`
	Halt     *protocol.HaltEvent `json:"halt,omitempty"`
	// Period is the length in steps of one round of the loop the trip
	// measured (detect.Trip.Period; 0 for a human's stop): the C of the
	// liveness bound, for calls made one at a time.
	Period int `json:"period,omitempty"`
	// OnHalt is what the halt does under the options judged (pause, fail
	// or observe); the Judge itself goes on as observe does unless it
	// follows recorded decisions.
	OnHalt protocol.OnHalt `json:"onHalt,omitempty"`
	// Decision is how a halt was answered, when the Judge followed the
	// decisions recorded in the history.
	Decision *protocol.Decision `json:"decision,omitempty"`
}

type blockedCall struct {
	node string
	trip *detect.Trip
	ev   protocol.HaltEvent
}

type admittedCall struct {
	node string
	ref  detect.StepRef
}

func init() {
	judgehook.New = func(opts any) (any, error) { return newJudge(opts.(Options)) }
}

// newJudge returns a Judge under opts, for executions started with the
// guard as it is now (guardVersion).
func newJudge(opts Options) (*judge, error) {
	cfg, h, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	j := &judge{g: guard{core: core{cfg: cfg, hooks: h, version: guardVersion}}}
	return j, nil
}

// Start begins the judgement of the first run of an execution described
// by info, at workflow time now. It reports whether the options guard it
// (Options.Workflows, GuardWorkflow, Retire); an execution they leave out
// is judged no further.
func (j *judge) Start(info *workflow.Info, now time.Time) bool {
	j.g.info = info
	j.now = now
	j.guarded = j.recorded || !j.g.hooks.retire && (j.g.hooks.guardWorkflow == nil || j.g.hooks.guardWorkflow(info))
	if !j.guarded {
		return false
	}
	j.g.active = true
	j.g.pause = newPause()
	if j.g.state == nil {
		j.g.state = detect.NewState(j.g.cfg.Policy)
	}
	return true
}

// Pin makes the Judge follow a history recorded with the guard: the
// guard version of its marker, the options it pinned (decode fills the
// guard's pinned config from the SideEffect payload) and, at each halt,
// the decision the history holds. Call it before Start. A history
// recorded by a pre-release build (another guard version) is refused, as
// the guard refuses to replay it.
func (j *judge) Pin(version int, decode func(ptr any) error) error {
	if v := workflow.Version(version); v != guardVersion {
		return prereleaseError{Version: v}
	}
	var cfg config
	if err := decode(&cfg); err != nil {
		return fmt.Errorf("read the pinned options: %w", err)
	}
	j.g.cfg, j.g.version, j.recorded = cfg, workflow.Version(version), true
	return nil
}

// Restore starts the Judge from the state a guarded run carried over from
// the run before it (the loopguard-carry header), when that run is not
// judged itself. Call it after Start.
func (j *judge) Restore(decode func(ptr any) error) error {
	var c carried
	if err := decode(&c); err != nil {
		return fmt.Errorf("read the carried state: %w", err)
	}
	if err := j.g.restore(&c); err != nil {
		return fmt.Errorf("read the carried state: %w", err)
	}
	return nil
}

// Guarded reports whether the execution is guarded.
func (j *judge) Guarded() bool { return j.guarded }

// Version is the guard version the Judge judges with.
func (j *judge) Version() int { return int(j.g.version) }

// Calls counts the guarded calls judged.
func (j *judge) Calls() int { return j.calls }

// Verdicts returns the warnings and halts so far and forgets them.
func (j *judge) Verdicts() []Verdict {
	v := j.verdicts
	j.verdicts = nil
	return v
}

// Logs returns what the guard would have logged as a problem (a
// ResultHook or a NodeName hook that panicked), each line once over the
// Judge's life, and forgets it.
func (j *judge) Logs() []string {
	l := j.logs.lines
	j.logs.lines = nil
	return l
}

// Now sets the workflow clock: the start of a workflow task, or the time
// a local activity's result came in.
func (j *judge) Now(now time.Time) { j.now = now }

// Blocked reports whether a recorded halt holds the workflow: calls made
// now are the halt handler's, which the guard does not guard.
func (j *judge) Blocked() bool { return j.blocked != nil }

// Held is the Seq of the recorded halt that holds the workflow (0: none).
func (j *judge) Held() int {
	if j.blocked == nil {
		return 0
	}
	return j.blocked.ev.Seq
}

// Node names a call of kind and type, with args as the node namer sees
// them, as the guard names it: by the NodeName hook, or by its type when
// the hook is unset, returns "" or panics (a panic is logged, Logs).
func (j *judge) Node(kind CallKind, typ string, args []any) string {
	return j.g.nodeName(j.driver(), kind, typ, args)
}

// Call judges a guarded call about to be scheduled: kind and type, with
// args as the node namer sees them. It returns an id for Result, or -1
// when the call is not guarded (or the guard refused it).
func (j *judge) Call(kind CallKind, typ string, args []any) int {
	j.Wake()
	if !j.guarded || j.blocked != nil {
		return -1
	}
	g := &j.g
	node := g.nodeName(j.driver(), kind, typ, args)
	ref, ok := j.takeAdmitted(node)
	if !ok {
		if ref, ok = j.admit(node); !ok {
			return -1
		}
	}
	j.calls++
	g.called(node, ref.Seq)
	j.nextID++
	res := &recordedResult{node: node}
	if j.results == nil {
		j.results = map[int]*recordedResult{}
	}
	j.results[j.nextID] = res
	g.track(ref, node, res)
	return j.nextID
}

// Attempt judges a call of node the history shows refused or held by a
// halt the guard raised (its loop.halted): the guard met a trip there
// before the call was scheduled. When the decision lets the call through,
// its scheduled event (a later Call of node) is the same call.
func (j *judge) Attempt(node string) {
	j.Wake()
	if !j.guarded || j.blocked != nil {
		return
	}
	if ref, ok := j.admit(node); ok {
		j.admitted = append(j.admitted, admittedCall{node: node, ref: ref})
	}
}

// again lets the call of node a halt held ask again once the halt ended,
// in the same admit rounds as the guard's held call: the outside input
// and the results that came during the halt are told at the next call,
// not before this one (core.admitRounds).
func (j *judge) again(node string) {
	if !j.guarded || j.blocked != nil {
		return
	}
	if ref, ok, _ := j.g.admitRounds(node, j.now, j.onTrip(node)); ok {
		j.admitted = append(j.admitted, admittedCall{node: node, ref: ref})
	}
}

func (j *judge) takeAdmitted(node string) (detect.StepRef, bool) {
	for i, a := range j.admitted {
		if a.node == node {
			j.admitted = append(j.admitted[:i], j.admitted[i+1:]...)
			return a.ref, true
		}
	}
	return detect.StepRef{}, false
}

// admit is the guard's admit on the Judge's clock: results in, outside
// input, then the detectors (core.begin), each trip warned or halted.
func (j *judge) admit(node string) (detect.StepRef, bool) {
	ref, ok, _ := j.g.enter(j.driver(), node, j.now, j.onTrip(node))
	return ref, ok
}

// onTrip is admit's answer to a trip of a call of node: warned or halted
// on the Judge's clock.
func (j *judge) onTrip(node string) func(*detect.Trip) (time.Time, bool, error) {
	return func(t *detect.Trip) (time.Time, bool, error) {
		return j.now, j.trip(node, t), nil
	}
}

// trip warns or halts as the core decides; it reports whether the call
// may go on now.
func (j *judge) trip(node string, trip *detect.Trip) bool {
	g := &j.g
	call := j.calls + 1
	e := trip.Evidence // as the trip found it, before a warning starts its detector over
	w, ev, policy := g.trip(node, trip, j.now)
	if w != nil {
		j.verdicts = append(j.verdicts, Verdict{Call: call, Warning: w, Evidence: &e, Period: trip.Period})
		return true
	}
	j.verdicts = append(j.verdicts, Verdict{Call: call, Halt: &ev, OnHalt: policy, Period: trip.Period})
	if !j.recorded {
		// Not following a recorded history: every halt is answered as
		// observe answers it, so that the rest of the history is judged.
		policy = protocol.OnHaltObserve
	}
	esc, held := g.raised(trip, policy)
	switch {
	case esc != nil:
		j.answer(trip, *esc, detect.Extension{})
		return false
	case !held:
		return true
	}
	g.hold()
	j.blocked = &blockedCall{node: node, trip: trip, ev: ev}
	// The guard waits for the decision in workflow.Await, through its
	// own outbound interceptor, which reads the results that are in as
	// the wait begins, and nothing more until the call asks again (Idle
	// reads nothing while a halt holds the workflow).
	g.observeReady(j.driver(), j.now)
	return false
}

// answer ends the halt of trip with decision d, as the guard's halt does
// once decided, and notes the decision on the halt's verdict.
func (j *judge) answer(trip *detect.Trip, d protocol.Decision, ext detect.Extension) {
	j.note(d)
	j.g.decided(trip, d, ext, j.now)
}

// note notes decision d on the verdict of the halt it ends.
func (j *judge) note(d protocol.Decision) {
	for i := len(j.verdicts) - 1; i >= 0; i-- {
		if h := j.verdicts[i].Halt; h != nil && h.Seq == d.HaltSeq {
			j.verdicts[i].Decision = &d
			return
		}
	}
}

// OnRefused sets fn to hear each resume, escalate or halt signal the
// guard refuses, with its payload and why, as the guard lists it in
// loop.status (Status.Refused): at once, or, for a signed answer held
// for its task, when Deliver takes it.
func (j *judge) OnRefused(fn func(name string, p *commonpb.Payload, err error)) {
	j.refused = fn
}

// Deliver takes the signed answers that came as signals since the last
// workflow task, at the time of the task that delivers them (set by Now),
// as the guard does when the task's code first runs (answerclock.go). The reader calls it at each WorkflowTaskStarted,
// before Wake.
func (j *judge) Deliver() {
	g := &j.g
	if !j.guarded || len(g.held) == 0 {
		return
	}
	g.core.deliver(j.now, j.refused)
	// While a halt holds the workflow no other code of the guard runs
	// first: its answer coroutine (guard.awaitAnswers) takes them, then
	// waits again in workflow.Await, whose entry through the guard's own
	// outbound interceptor reads the results that are in (guard.waits).
	if j.blocked != nil && len(g.pending) > 0 {
		g.observeReady(j.driver(), j.now)
	}
}

// Wake lets a held call go on once the history decided its halt, as the
// guard's paused call does in the workflow task that saw the decision. A
// cancellation with no decision ends the halt as the guard's wait does
// when it returns the cancellation.
func (j *judge) Wake() {
	b := j.blocked
	p := &j.g.pause
	if b == nil {
		return
	}
	if p.decision == nil && j.canceled {
		// The held call returns the cancellation: it is never scheduled.
		j.blocked = nil
		j.answer(b.trip, j.g.canceled(), detect.Extension{})
		return
	}
	if p.decision == nil {
		return
	}
	j.blocked = nil
	d, ext := *p.decision, p.extend
	j.answer(b.trip, d, ext)
	if d.Action == protocol.ActionResume {
		j.again(b.node)
	}
}

// Handled ends the recorded halt that holds a call with the decision of
// the workflow's halt handler: action ActionResume, with the guidance the
// history shows it gave ("" for none), or ActionEscalate. The history
// holds no event of its own for a handler's decision: the reader calls
// Handled where the halt is seen to end (the guard publishing running or
// escalated, or the held call scheduled) with nothing else to end it. A
// human's decision, the pause timeout or the cancellation the history
// holds before that point ends the halt instead, as the live guard drops
// a handler's decision that comes after those. It reports whether the
// handler's decision ended the halt.
func (j *judge) Handled(action protocol.Action, guidance string) bool {
	j.Wake()
	b := j.blocked
	if b == nil || action != protocol.ActionResume && action != protocol.ActionEscalate {
		return false
	}
	// The handler's reason is in the worker's log and the workflow's
	// current details, not in its history: the decision has none.
	d, ok := j.g.handled(b.trip, HandlerDecision{Action: action, Guidance: guidance}, j.now)
	if !ok {
		return false
	}
	j.blocked = nil
	if action != protocol.ActionResume {
		j.answer(b.trip, d, detect.Extension{})
		return true
	}
	j.note(d)
	j.Attempt(b.node)
	return true
}

// Cancel notes that the history shows the workflow's cancellation
// requested: a recorded halt that holds a call, or holds one later, ends
// as the guard's paused call does once its wait returns the
// cancellation, in the next workflow task (Wake).
func (j *judge) Cancel() { j.canceled = j.recorded }

// PauseTimer reports whether a durable timer of d, started now, is the
// guard's pause timer: started while a recorded halt holds a call, to end
// when the pause timeout does. The guard sets it for PauseTimeout when the
// pause (or the halt handler's race) begins, and, once a handler handed
// the halt over, for what is left of
// PauseTimeout since the handler began, right after loop.halted was
// raised (within HaltSignalTimeout of the halt). A timer of the handler
// or of another branch ends at another time, and does not decide the
// halt when it fires.
func (j *judge) PauseTimer(d time.Duration) bool {
	cfg := &j.g.cfg
	if j.blocked == nil || cfg.PauseTimeout <= 0 {
		return false
	}
	if d == cfg.PauseTimeout {
		return true
	}
	began := j.now.Add(d - cfg.PauseTimeout)
	since := j.g.pause.since
	raising := pick(cfg.HaltSignalTimeout, defaultHaltTimeout)
	return d < cfg.PauseTimeout && !began.Before(since) && !began.After(since.Add(raising))
}

// PauseTimedOut decides a held call's halt as the pause timeout does, when
// the history shows the guard's pause timer (PauseTimer) fired before any
// decision.
func (j *judge) PauseTimedOut() {
	if j.blocked != nil && j.g.pause.decision == nil && j.g.cfg.PauseTimeout > 0 {
		j.g.pauseTimedOut()
	}
}

// MemoKey is the memo entry the guard publishes its state in.
func (j *judge) MemoKey() string { return pick(j.g.cfg.MemoKey, defaultMemoKey) }

// Result records the result (or error) of call id: the guard reads it at
// the next call or wait, as it reads a ready future. A canceled call
// (err a *temporal.CanceledError) is abandoned, as the guard abandons it.
func (j *judge) Result(id int, result *commonpb.Payloads, err error, dc converter.DataConverter) {
	r := j.results[id]
	if r == nil {
		return
	}
	delete(j.results, id)
	r.ready, r.result, r.err, r.dc = true, result, err, dc
	// Read it now, as the guard will at the next call (the reading depends
	// only on the node, the bytes and the pinned policy), and let go of
	// the payload: a watcher follows many executions, each waiting for
	// its next call, and a framework's model result can be the whole
	// conversation.
	r.obs, r.canceled, r.bad = j.g.readResult(r.node, r.decode)
	r.result, r.err, r.dc = nil, nil, nil
}

// Signal judges a signal the workflow received, with its plain payload
// (codecs undone), as the guard takes it (core.signal): its resume,
// escalate and halt are taken as the guard takes them, its own
// loop.halted echo (or a stale one a reset re-applied) is its own, and any
// other signal, another execution's loop.halted among them, is outside
// input. It reports whether the guard took it.
func (j *judge) Signal(name string, p *commonpb.Payload) bool {
	g := &j.g
	if !j.guarded {
		return false
	}
	take := func() bool {
		err := g.takeInput(name, p, j.now)
		if err != nil && j.refused != nil {
			j.refused(name, p, err)
		}
		return err == nil
	}
	own := func() bool {
		var ev protocol.HaltEvent
		if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &ev) != nil {
			return false
		}
		return g.echo(ev) != echoForeign
	}
	return g.signal(name, take, own)
}

// Update judges an update the workflow accepted, as Signal judges a
// signal.
func (j *judge) Update(name string, p *commonpb.Payload) bool {
	g := &j.g
	if !j.guarded {
		return false
	}
	if !g.update(name) {
		return false
	}
	action := protocol.ActionResume
	if name == g.cfg.EscalateUpdate {
		action = protocol.ActionEscalate
	}
	if _, err := g.answerUpdate(name, action, p, j.now); err == nil {
		j.Wake() // in the workflow task that took the update
	}
	return true
}

// Idle reads the results that are in when the workflow waits without a
// call or a timer (workflow.Await), as the guard's Await does, once every
// call in flight has its result. A history does not say how the workflow
// waits: in workflow.Await the guard reads what is in, but in a future's
// Get (a turn's parallel tool calls, awaited one by one) it reads nothing
// until the next call, and then in the order the calls were made. Reading
// a turn's results as they arrive would put its steps in the sequence in
// arrival order, and the analysis of a loop whose tools' results arrive
// in a different order each turn would disagree with the live guard. With
// a call still in flight, the workflow more likely waits on it. While a
// halt holds the workflow it waits in the guard's own Await, which read
// what was in when the halt began (trip): nothing is read.
func (j *judge) Idle() {
	if !j.guarded || len(j.g.pending) == 0 || j.blocked != nil {
		return
	}
	for _, p := range j.g.pending {
		if !p.fut.IsReady() {
			return
		}
	}
	j.g.observeReady(j.driver(), j.now)
}

// Timer judges a durable timer the workflow started: results in are read,
// and the detectors hear that the workflow waits.
func (j *judge) Timer() {
	if j.guarded {
		j.g.waits(j.driver(), j.now, true)
	}
}

// EndRun closes a run that continued as new, as the guard does when it
// carries its state to the next run.
func (j *judge) EndRun() {
	g := &j.g
	if j.guarded {
		g.closeRun(j.driver(), j.now)
	}
}

// NextRun goes on with the run continued from the last one, keeping what
// the guard carries across continue-as-new.
func (j *judge) NextRun(info *workflow.Info, now time.Time) {
	g := &j.g
	g.info, j.now = info, now
	if !j.guarded {
		return
	}
	// What the guard carries across continue-as-new, encoded and read
	// back as the next run reads it.
	c, err := g.carry()
	g.pending, g.input, j.blocked, j.admitted = nil, false, nil, nil
	g.pause, g.guidance = newPause(), nil
	if err == nil {
		err = g.restore(&c)
	}
	if err != nil {
		j.logs.Error("loopguard: state not carried to the next run", "error", err)
	}
}

// recordedResult is a call's result read from history, as the future the
// guard reads it from: ready once the history holds it.
type recordedResult struct {
	ready  bool
	node   string
	result *commonpb.Payloads
	err    error
	dc     converter.DataConverter
	// obs, canceled and bad are the result as the guard reads it, read
	// when it was set (Result).
	obs      detect.Observation
	canceled bool
	bad      string
}

func (r *recordedResult) IsReady() bool { return r.ready }

func (r *recordedResult) read() (detect.Observation, bool, string) { return r.obs, r.canceled, r.bad }

// Get is decode: a recorded result needs no workflow to wait in.
func (r *recordedResult) Get(_ workflow.Context, ptr any) error { return r.decode(ptr) }

// decode decodes as the SDK's future does: the call's error, else the
// result into ptr with the workflow's data converter.
func (r *recordedResult) decode(ptr any) error {
	if r.err != nil || r.result == nil || ptr == nil {
		return r.err
	}
	dc := r.dc
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return dc.FromPayloads(r.result, ptr)
}

// driver is the Judge as the guard's shared paths see it: no workflow,
// its results read when they were recorded (readFuture), its own log.
func (j *judge) driver() driver { return driver{log: &j.logs} }

// judgeLog keeps the guard's warnings and errors, each line once: a hook
// that panics at every call of a node says so once, however the history
// is fed (at once, or as it grows).
type judgeLog struct {
	lines []string
	seen  map[string]bool
}

func (l *judgeLog) Debug(string, ...any) {}
func (l *judgeLog) Info(string, ...any)  {}
func (l *judgeLog) Warn(msg string, kv ...any) {
	line := fmt.Sprint(append([]any{msg, " "}, kv...)...)
	if l.seen[line] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[line] = true
	l.lines = append(l.lines, line)
}
func (l *judgeLog) Error(msg string, kv ...any) { l.Warn(msg, kv...) }
