package testsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	sdktestsuite "go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// ActionNone, returned by an AnswerFunc, leaves the halt unanswered: the
// workflow stays paused until Options.PauseTimeout (if any) decides, or
// Run times out. The other actions are the guard's: protocol.ActionResume
// and protocol.ActionEscalate, which Run sends as the guard's resume or
// escalate signal (or update, with RunOptions.UseUpdates) under the names
// configured in RunOptions.Guard. Any other action is sent verbatim as a
// signal or update name, which lets a test send input the guard must
// refuse.
const ActionNone protocol.Action = ""

// Defaults of RunOptions.
const (
	DefaultDecideAfter     = time.Minute
	DefaultMaxHalts        = 10
	DefaultRunTimeout      = 30 * time.Second
	DefaultMaxWorkflowTime = 30 * 24 * time.Hour
	// maxPollInterval caps the backoff of the status polls while nothing
	// changes (a workflow sleeping for days is polled hourly).
	maxPollInterval = time.Hour
)

// AnswerFunc decides what the human does when the workflow is halted: it
// receives the guard's status (State "halted", Halt the halt in force) and
// returns the action (protocol.ActionResume, protocol.ActionEscalate,
// ActionNone, or any signal or update name) and its payload (an
// protocol.ResumeRequest, a protocol.EscalateRequest, a map, or nil).
type AnswerFunc func(s protocol.Status) (action protocol.Action, payload any)

// Escalate answers every halt with an escalation for reason.
func Escalate(reason string) AnswerFunc {
	return func(protocol.Status) (protocol.Action, any) {
		return protocol.ActionEscalate, protocol.EscalateRequest{Reason: reason, By: "testsuite"}
	}
}

// Resume answers every halt by resuming it (until RunOptions.MaxHalts).
func Resume(reason string) AnswerFunc {
	return func(protocol.Status) (protocol.Action, any) {
		return protocol.ActionResume, protocol.ResumeRequest{Reason: reason, By: "testsuite"}
	}
}

// ResumeWithGuidance answers every halt by resuming it with guidance for
// the agent, so that a test can check that the agent heeds it (the
// loop's later calls carry it in their protocol.Notice).
func ResumeWithGuidance(guidance string) AnswerFunc {
	return func(protocol.Status) (protocol.Action, any) {
		return protocol.ActionResume, protocol.ResumeRequest{Reason: "guidance", By: "testsuite", Guidance: guidance}
	}
}

// NoAnswer leaves every halt unanswered, to test Options.PauseTimeout.
func NoAnswer() AnswerFunc {
	return func(protocol.Status) (protocol.Action, any) { return ActionNone, nil }
}

// Answers answers the n-th halt (counted from 1 in the execution, Halt.Seq)
// with answers[n-1]; the last one answers every later halt.
func Answers(answers ...AnswerFunc) AnswerFunc {
	return func(s protocol.Status) (protocol.Action, any) {
		if len(answers) == 0 {
			return protocol.ActionEscalate, protocol.EscalateRequest{Reason: "no answer scripted", By: "testsuite"}
		}
		i := 0
		if s.Halt != nil {
			i = s.Halt.Seq - 1
		}
		i = max(0, min(i, len(answers)-1))
		return answers[i](s)
	}
}

// RunOptions configures Run.
type RunOptions struct {
	// Guard configures the guard installed on the test environment's
	// worker. The zero value is the guard's defaults.
	Guard interceptor.Options
	// Unguarded runs the workflow without the guard, for comparison: no
	// halts, and FinalStatus stays zero.
	Unguarded bool

	// Register registers the workflows and activities the workflow needs
	// (the test environment is a worker.Registry), e.g. workflows.Register.
	// A workflow function passed to Run is registered by the environment
	// itself.
	Register func(r worker.Registry)
	// Setup runs last, before the workflow starts: mocks (OnActivity),
	// listeners, delayed callbacks, start time, headers. Run uses the local
	// activity started listener to notice halts promptly, and the child
	// workflow started listener to watch child workflows' guards too: a
	// listener set here replaces Run's (halts are then noticed by the
	// periodic status polls only, and halted children are not answered).
	Setup func(env *sdktestsuite.TestWorkflowEnvironment)

	// Answer decides what a human does with each halt. Default: escalate.
	Answer AnswerFunc
	// UseUpdates sends resume and escalate as the guard's updates rather
	// than its signals; a rejected update is recorded in Report.Answers.
	UseUpdates bool
	// DecideAfter is the workflow time between a halt and the human's
	// answer (the test environment skips it instantly). It is also the
	// initial interval of the status polls that notice halts. Default 1m.
	DecideAfter time.Duration
	// MaxHalts bounds the halts Run answers with Answer: the next one is
	// escalated with the reason "testsuite: MaxHalts reached", so that a
	// loop resumed forever still ends. Default 10.
	MaxHalts int

	// Timeout bounds the run in real time; the workflow is cancelled when
	// it expires and Report.Err says so. Default 30s.
	Timeout time.Duration
	// MaxWorkflowTime bounds the workflow time Run keeps polling for halts;
	// a workflow blocked past it on something other than the guard ends
	// with the test environment's own timeout (Timeout). Default 30 days.
	MaxWorkflowTime time.Duration

	// Logger receives the workflow's and the guard's logs. Default:
	// warnings and errors, through t.Log.
	Logger log.Logger
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Answer == nil {
		o.Answer = Escalate("escalated by testsuite.Run")
	}
	if o.DecideAfter <= 0 {
		o.DecideAfter = DefaultDecideAfter
	}
	if o.MaxHalts <= 0 {
		o.MaxHalts = DefaultMaxHalts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRunTimeout
	}
	if o.MaxWorkflowTime <= 0 {
		o.MaxWorkflowTime = DefaultMaxWorkflowTime
	}
	return o
}

// Answer records one answer Run sent to a halted workflow.
type Answer struct {
	// WorkflowID is the halted workflow's id: the workflow Run started, or
	// one of its child workflows.
	WorkflowID string
	// HaltSeq is the Seq of the halt answered.
	HaltSeq int
	// Name is the signal or update sent; Update says which.
	Name    string
	Update  bool
	Payload any
	// Decision is the update's result (zero for signals). Rejected is why
	// the guard refused the answer: an update's validator's error, or, for
	// a signal, the reason the guard recorded (Status.LastRejected) when
	// Run saw it refuse the signal. A refused answer to a halt still
	// pending ends the run: Report.Err says why.
	Decision *protocol.Decision
	Rejected error
	// Auto is set when MaxHalts made Run escalate on its own.
	Auto bool
	// At is the workflow time the answer was sent.
	At time.Time
}

// Report is the outcome of Run.
type Report struct {
	// Completed is true when the workflow closed (successfully, with an
	// error, or by continuing as new) within the run.
	Completed bool
	// Err is the workflow's error (a *workflow.ContinueAsNewError when it
	// continued as new), or why the run did not complete.
	Err error
	// Halts are the halts that paused (or, with OnHalt: fail, escalated)
	// the workflow or one of its child workflows (HaltEvent.WorkflowID says
	// which), in the order they were raised, those the workflow's halt
	// handler decided among them (Halt.ByHandler). Observed halts (OnHalt:
	// observe) are only counted, in FinalStatus.Halts.
	Halts []Halt
	// Answers are the answers Run sent.
	Answers []Answer
	// FinalStatus is the guard's status after the run (zero when
	// unguarded). Its Warnings counts the warnings the guard gave; each
	// halt in Halts lists those its loop did not heed.
	FinalStatus protocol.Status
	// Notices are the notices the workflow's activities and local
	// activities received (interceptor.NoticeFrom), in the order they
	// started: a test can check that its agent was told, and what it did
	// next. Calls without a notice are not listed.
	Notices []NoticeReceived
	// Env is the test environment the workflow ran in, for further
	// queries and assertions.
	Env *sdktestsuite.TestWorkflowEnvironment
}

// Halt is a halt of the workflow or of one of its child workflows.
type Halt struct {
	protocol.HaltEvent
	// ByHandler is true when the workflow's halt handler
	// (interceptor.SetHaltHandler) decided the halt before a human was
	// asked: Run did not answer it.
	ByHandler bool
}

// NoticeReceived is a notice an activity received.
type NoticeReceived struct {
	// Activity is the activity type; Attempt its attempt.
	Activity string
	Attempt  int32
	Notice   protocol.Notice
}

// noticeRecorder records the notices activities receive. It runs inside
// the guard's activity interceptor, which reads the header.
type noticeRecorder struct {
	sdkinterceptor.WorkerInterceptorBase
	mu  sync.Mutex
	got []NoticeReceived
}

func (n *noticeRecorder) InterceptActivity(ctx context.Context, next sdkinterceptor.ActivityInboundInterceptor) sdkinterceptor.ActivityInboundInterceptor {
	return &noticeInbound{ActivityInboundInterceptorBase: sdkinterceptor.ActivityInboundInterceptorBase{Next: next}, rec: n}
}

func (n *noticeRecorder) notices() []NoticeReceived {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]NoticeReceived(nil), n.got...)
}

type noticeInbound struct {
	sdkinterceptor.ActivityInboundInterceptorBase
	rec *noticeRecorder
}

func (a *noticeInbound) ExecuteActivity(ctx context.Context, in *sdkinterceptor.ExecuteActivityInput) (any, error) {
	if n, ok := interceptor.NoticeFrom(ctx); ok {
		info := activity.GetInfo(ctx)
		a.rec.mu.Lock()
		a.rec.got = append(a.rec.got, NoticeReceived{Activity: info.ActivityType.Name, Attempt: info.Attempt, Notice: n})
		a.rec.mu.Unlock()
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// Result decodes the workflow's result into valuePtr.
func (r Report) Result(valuePtr any) error {
	if r.Env == nil || !r.Completed {
		return fmt.Errorf("testsuite: the workflow did not complete: %v", r.Err)
	}
	if r.Err != nil {
		return r.Err
	}
	return r.Env.GetWorkflowResult(valuePtr)
}

// Reasons returns the reason of each halt in Halts.
func (r Report) Reasons() []protocol.HaltReason {
	out := make([]protocol.HaltReason, len(r.Halts))
	for i, h := range r.Halts {
		out[i] = h.HaltReason
	}
	return out
}

// Escalated reports whether the guard's last halt was escalated.
func (r Report) Escalated() bool { return r.FinalStatus.State == protocol.StateEscalated }

// String summarises the report for test logs.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "completed=%v", r.Completed)
	if r.Err != nil {
		fmt.Fprintf(&b, " err=%q", r.Err.Error())
	}
	fmt.Fprintf(&b, " state=%s halts=%d", r.FinalStatus.State, r.FinalStatus.Halts)
	for _, h := range r.Halts {
		fmt.Fprintf(&b, " [#%d %s/%s at %s", h.Seq, h.HaltReason, h.Detector, h.Node)
		if h.Iteration > 0 {
			fmt.Fprintf(&b, " iteration %d", h.Iteration)
		}
		if h.ByHandler {
			b.WriteString(", decided by the halt handler")
		}
		b.WriteString("]")
	}
	for _, a := range r.Answers {
		fmt.Fprintf(&b, " %s(#%d)", a.Name, a.HaltSeq)
		if a.Rejected != nil {
			fmt.Fprintf(&b, "=rejected:%q", a.Rejected.Error())
		}
	}
	return b.String()
}

// runStallLimit is how long Run lets workflow code run without yielding
// before the SDK reports a deadlock.
const runStallLimit = 10 * time.Second

// Run runs workflow (a function or a registered type name) with args in
// Temporal's TestWorkflowEnvironment, with the guard installed on its worker,
// and reports the outcome. When the guard halts the workflow, Run asks
// opts.Answer what the human does and sends it, DecideAfter of workflow
// time later (the environment skips the wait instantly).
//
// Halts are noticed through the guard's status query, polled whenever the
// workflow is blocked and after each local activity (the guard raises its
// loop.halted signal through one; in the test environment that signal
// cannot be delivered, for lack of a client, and the guard logs it).
//
// Workflow code may run for runStallLimit (10 s) without yielding before
// the SDK reports a deadlock, not the SDK's 1 s: a loaded machine must not
// fail a correct test.
//
// Run fails t when it cannot set up the run (invalid guard options), and
// when the workflow is not guarded under opts.Guard (Options.Workflows
// does not name its type, or GuardWorkflow or Retire left it out): a test
// of the guard that ran without it would pass for the wrong reason. Set
// RunOptions.Unguarded to run a workflow without the guard on purpose.
// Everything else about the workflow is in the Report.
func Run(t testing.TB, opts RunOptions, workflow any, args ...any) Report {
	t.Helper()
	o := opts.withDefaults()

	var done atomic.Bool
	logger := o.Logger
	if logger == nil {
		logger = newTestLogger(t, &done)
	}
	defer done.Store(true)

	var s sdktestsuite.WorkflowTestSuite
	s.SetLogger(logger)
	env := s.NewTestWorkflowEnvironment()
	notices := &noticeRecorder{}
	// A loaded machine can stall correct workflow code for the SDK's one
	// second (TMPRL1101, "Potential deadlock detected": the README's own
	// test failed so at load average 20); a workflow that really blocks
	// still fails, after runStallLimit.
	wo := worker.Options{DeadlockDetectionTimeout: runStallLimit}
	if !o.Unguarded {
		g, err := interceptor.New(o.Guard)
		if err != nil {
			t.Fatalf("testsuite.Run: invalid guard options: %v", err)
		}
		if name, err := interceptor.WorkflowTypeName(workflow); err == nil && len(o.Guard.Workflows) > 0 && !slices.Contains(o.Guard.Workflows, name) {
			t.Fatalf("testsuite.Run: workflow %s is not guarded: Options.Workflows names %q, not %q", name, o.Guard.Workflows, name)
		}
		wo.Interceptors = []sdkinterceptor.WorkerInterceptor{g, notices}
	}
	env.SetWorkerOptions(wo)
	if o.Register != nil {
		o.Register(env)
	}
	env.SetTestTimeout(o.Timeout)

	r := &runner{opts: o, env: env, deadline: time.Now().Add(o.Timeout), interval: o.DecideAfter,
		answered: map[string]int{}, handled: map[haltKey]bool{}, lastSent: map[string]int{}}
	r.names = protocolNames(o.Guard, o.UseUpdates)
	rep := Report{Env: env}
	if !o.Unguarded {
		env.SetOnLocalActivityStartedListener(r.onLocalActivity)
		env.SetOnChildWorkflowStartedListener(r.onChild)
		env.RegisterDelayedCallback(func() { r.poll(true) }, o.DecideAfter)
	}
	if o.Setup != nil {
		o.Setup(env)
	}

	func() {
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("testsuite: the workflow did not complete: %v", p)
			}
		}()
		r.start = env.Now()
		env.ExecuteWorkflow(workflow, args...)
	}()

	rep.Completed = env.IsWorkflowCompleted()
	switch {
	case r.err != nil && (!rep.Completed || r.stopped):
		rep.Err = r.err
	case rep.Completed:
		rep.Err = env.GetWorkflowError()
	default:
		rep.Err = errors.New("testsuite: the workflow did not complete")
	}
	if !o.Unguarded {
		if st, err := queryStatus(env, r.names.status); err == nil {
			rep.FinalStatus = st
			if st.State == protocol.StateDisabled {
				name, _ := interceptor.WorkflowTypeName(workflow)
				t.Errorf("testsuite.Run: workflow %s ran unguarded: Options.GuardWorkflow or Retire left it out (RunOptions.Unguarded runs a workflow without the guard on purpose)", name)
			}
			r.note("", st)
			// OnHalt: fail escalates without pausing: the escalated halt
			// is only visible now.
			if st.Halt != nil && !r.seen(st.Halt.WorkflowID, st.Halt.Seq) && !st.Halt.Observed {
				r.halts = append(r.halts, Halt{HaltEvent: *st.Halt})
			}
		}
	}
	rep.Halts, rep.Answers, rep.Notices = r.allHalts(), r.answers, notices.notices()
	return rep
}

// names are the protocol names in force for a run.
type names struct {
	resume, escalate, status string
	update                   bool
}

func protocolNames(g interceptor.Options, updates bool) names {
	n := names{
		resume:   pick(g.ResumeSignal, protocol.DefaultResumeSignal),
		escalate: pick(g.EscalateSignal, protocol.DefaultEscalateSignal),
		status:   pick(g.StatusQuery, protocol.DefaultStatusQuery),
		update:   updates,
	}
	if updates {
		n.resume = pick(g.ResumeUpdate, protocol.DefaultResumeUpdate)
		n.escalate = pick(g.EscalateUpdate, protocol.DefaultEscalateUpdate)
	}
	return n
}

func pick(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// runner drives one Run: it polls the status query from delayed callbacks,
// which the test environment fires on its main loop whenever the workflow
// is blocked, and answers halts.
type runner struct {
	opts     RunOptions
	env      *sdktestsuite.TestWorkflowEnvironment
	names    names
	start    time.Time
	deadline time.Time

	interval time.Duration
	last     string               // fingerprint of the last statuses seen
	answered map[string]int       // workflow id ("" for the root) → Seq of the last halt answered
	children []string             // child workflow ids, in start order
	halts    []Halt               // the halts Run saw halted
	raised   []protocol.HaltEvent // every halt raised (loop.halted), observed ones aside
	handled  map[haltKey]bool     // halts whose decision was the halt handler's
	lastSent map[string]int       // workflow id ("" for the root) → index in answers of its last answer
	answers  []Answer
	updates  int
	err      error
	stopped  bool
}

// haltKey names a halt: the runner's id of its workflow ("" for the root)
// and its Seq.
type haltKey struct {
	id  string
	seq int
}

func (r *runner) seen(workflowID string, seq int) bool {
	for _, h := range r.halts {
		if h.Seq == seq && h.WorkflowID == workflowID {
			return true
		}
	}
	return false
}

// runnerID is the runner's id of the workflow a halt event names: its own
// id for a child, "" for the root.
func (r *runner) runnerID(ev protocol.HaltEvent) string {
	if slices.Contains(r.children, ev.WorkflowID) {
		return ev.WorkflowID
	}
	return ""
}

// allHalts is every halt that paused or escalated, in the order raised:
// those Run saw, and those decided before it looked (by the halt handler,
// marked so, or by a PauseTimeout shorter than DecideAfter).
func (r *runner) allHalts() []Halt {
	out := make([]Halt, 0, len(r.halts))
	for _, ev := range r.raised {
		h := Halt{HaltEvent: ev}
		for _, s := range r.halts {
			if s.Seq == ev.Seq && s.WorkflowID == ev.WorkflowID {
				h = s
			}
		}
		h.ByHandler = r.handled[haltKey{r.runnerID(ev), ev.Seq}]
		out = append(out, h)
	}
	for _, s := range r.halts {
		if !slices.ContainsFunc(out, func(h Halt) bool { return h.Seq == s.Seq && h.WorkflowID == s.WorkflowID }) {
			out = append(out, s) // seen, but not raised through a listener Run set
		}
	}
	return out
}

// note reads what a status of workflow id says about earlier answers: a
// decision of the halt handler, and a refusal of Run's last answer, which
// ends the run when the halt it answered is still pending (a refused
// answer would otherwise leave the workflow paused until the run times
// out, and the report would give the timeout as the reason).
func (r *runner) note(id string, st protocol.Status) {
	if d := st.LastDecision; d != nil && d.By == interceptor.HandlerBy {
		r.handled[haltKey{id, d.HaltSeq}] = true
	}
	i, ok := r.lastSent[id]
	if !ok {
		return
	}
	a := &r.answers[i]
	if rj := st.LastRejected; a.Rejected == nil && !a.Update && rj != nil && rj.Name == a.Name && !rj.WorkflowTime.Before(a.At) {
		a.Rejected = errors.New(rj.Reason)
	}
	if a.Rejected == nil || r.stopped || st.State != protocol.StateHalted || st.Halt == nil || st.Halt.Seq != a.HaltSeq {
		return
	}
	r.stopped = true
	r.err = fmt.Errorf("testsuite: the guard refused the answer %s to halt #%d of %s: %w; the workflow was cancelled", a.Name, a.HaltSeq, a.WorkflowID, a.Rejected)
	r.env.CancelWorkflow()
}

// onLocalActivity runs when a local activity starts, as the guard's
// loop.halted raiser does on every halt: it records the halt, and
// schedules a look at the status DecideAfter later, when the human
// answers.
func (r *runner) onLocalActivity(_ *activity.Info, _ context.Context, args []any) {
	if ev, ok := raisedHalt(args); ok && !ev.Observed && !slices.ContainsFunc(r.raised, func(h protocol.HaltEvent) bool {
		return h.Seq == ev.Seq && h.WorkflowID == ev.WorkflowID
	}) {
		r.raised = append(r.raised, ev)
		// A look at once, while the status still holds the decision of
		// the halt before (a halt handler's among them), which the next
		// decision replaces.
		r.env.RegisterDelayedCallback(func() { r.poll(false) }, 0)
	}
	r.env.RegisterDelayedCallback(func() { r.poll(false) }, r.opts.DecideAfter)
}

// raisedHalt reads the halt event from the arguments of the guard's local
// activity that raises loop.halted (retries included); any other local
// activity has none.
func raisedHalt(args []any) (protocol.HaltEvent, bool) {
	if len(args) != 1 {
		return protocol.HaltEvent{}, false
	}
	data, err := json.Marshal(args[0])
	if err != nil {
		return protocol.HaltEvent{}, false
	}
	var in struct {
		Signal string             `json:"signal"`
		Event  protocol.HaltEvent `json:"event"`
	}
	if json.Unmarshal(data, &in) != nil || in.Signal == "" || in.Event.Seq == 0 {
		return protocol.HaltEvent{}, false
	}
	return in.Event, true
}

// onChild remembers a child workflow: its guard can halt it too.
func (r *runner) onChild(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
	r.children = append(r.children, info.WorkflowExecution.ID)
}

// poll looks at the guard's status of the workflow and its children and
// answers new halts. The periodic chain (chain=true) reschedules itself,
// backing off while nothing changes.
func (r *runner) poll(chain bool) {
	if r.env.IsWorkflowCompleted() || r.stopped {
		return
	}
	if time.Now().After(r.deadline) {
		r.stopped = true
		r.err = fmt.Errorf("testsuite: the workflow did not complete within %s (real time); it was cancelled", r.opts.Timeout)
		r.env.CancelWorkflow()
		return
	}
	var fp strings.Builder
	for _, id := range append([]string{""}, r.children...) {
		st, err := r.query(id)
		fmt.Fprintf(&fp, "%s:%v/%s/%d/%d;", id, err == nil, st.State, st.Halts, st.TotalCalls)
		if err == nil {
			if r.note(id, st); r.stopped {
				return
			}
		}
		if err != nil || st.State != protocol.StateHalted || st.Halt == nil || st.Halt.Seq <= r.answered[id] {
			continue
		}
		if wait := r.opts.DecideAfter - r.env.Now().Sub(st.Halt.WorkflowTime); wait > 0 {
			// Halted since less than DecideAfter: answer on time.
			r.env.RegisterDelayedCallback(func() { r.poll(false) }, wait)
			continue
		}
		r.answer(id, st)
	}
	if !chain {
		return
	}
	fmt.Fprintf(&fp, "%d", len(r.answers))
	if fp.String() != r.last {
		r.interval = r.opts.DecideAfter
	} else {
		r.interval = min(2*r.interval, max(maxPollInterval, r.opts.DecideAfter))
	}
	r.last = fp.String()
	if r.env.Now().Sub(r.start) < r.opts.MaxWorkflowTime {
		r.env.RegisterDelayedCallback(func() { r.poll(true) }, r.interval)
	}
}

// query asks the root workflow (id "") or a child for the guard's status.
func (r *runner) query(id string) (protocol.Status, error) {
	var v converter.EncodedValue
	var err error
	if id == "" {
		v, err = r.env.QueryWorkflow(r.names.status)
	} else {
		v, err = r.env.QueryWorkflowByID(id, r.names.status)
	}
	if err != nil {
		return protocol.Status{}, err
	}
	var s protocol.Status
	err = v.Get(&s)
	return s, err
}

// answer sends the human's answer to the halt in st, of the root workflow
// (id "") or of a child.
func (r *runner) answer(id string, st protocol.Status) {
	h := *st.Halt
	r.answered[id] = h.Seq
	if !r.seen(h.WorkflowID, h.Seq) {
		r.halts = append(r.halts, Halt{HaltEvent: h})
	}
	action, payload := r.opts.Answer(st)
	auto := false
	if len(r.halts) > r.opts.MaxHalts {
		action, payload, auto = protocol.ActionEscalate, protocol.EscalateRequest{Reason: "testsuite: MaxHalts reached", By: "testsuite"}, true
	}
	if action == ActionNone {
		return
	}
	name := string(action)
	switch action {
	case protocol.ActionResume:
		name = r.names.resume
	case protocol.ActionEscalate:
		name = r.names.escalate
	}
	a := Answer{WorkflowID: h.WorkflowID, HaltSeq: h.Seq, Name: name, Update: r.names.update, Payload: payload, Auto: auto, At: r.env.Now()}
	idx := len(r.answers)
	r.answers = append(r.answers, a)
	r.lastSent[id] = idx
	if !r.names.update {
		if id == "" {
			r.env.SignalWorkflow(name, payload)
		} else if err := r.env.SignalWorkflowByID(id, name, payload); err != nil {
			r.answers[idx].Rejected = err
		}
		return
	}
	r.updates++
	cb := &sdktestsuite.TestUpdateCallback{
		OnReject: func(err error) { r.answers[idx].Rejected = err },
		OnComplete: func(v any, err error) {
			if err != nil {
				r.answers[idx].Rejected = err
				return
			}
			if d, ok := v.(protocol.Decision); ok {
				r.answers[idx].Decision = &d
			}
		},
	}
	uid := fmt.Sprintf("testsuite-%d", r.updates)
	if id == "" {
		r.env.UpdateWorkflow(name, uid, cb, payload)
	} else if err := r.env.UpdateWorkflowByID(id, name, uid, cb, payload); err != nil {
		r.answers[idx].Rejected = err
	}
}

// queryStatus asks the test environment's workflow for the guard's status.
func queryStatus(env *sdktestsuite.TestWorkflowEnvironment, query string) (protocol.Status, error) {
	return decodeStatus(env.QueryWorkflow(query))
}
