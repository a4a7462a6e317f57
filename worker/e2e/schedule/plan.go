package schedule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/interceptor/protocol"
)

// CallKind is the kind of a guarded call.
type CallKind string

// The call kinds.
const (
	KindActivity CallKind = "activity"
	KindLocal    CallKind = "local"
	KindChild    CallKind = "child"
)

// Node names per call kind. Each activity and local activity name runs
// Agent; each child name runs Child.
var (
	ActivityNodes = []string{"Code", "Verify", "Plan", "Research"}
	LocalNodes    = []string{"Lint", "Score"}
	ChildNodes    = []string{"SubAgent", "Reviewer"}
)

// Plan is one generated program: what the workflow does, the human input a
// driver sends while it runs, and the guard set-up it runs under.
type Plan struct {
	Seed     int64  `json:"seed"`
	Features string `json:"features"`
	Profile  string `json:"profile"`
	Codec    bool   `json:"codec,omitempty"`
	// Runs are the workflow's runs: each run but the last ends by
	// continuing as new.
	Runs [][]Step `json:"runs"`
	// StopOnEscalation makes a branch return when one of its calls is
	// escalated; otherwise the workflow notes it and goes on.
	StopOnEscalation bool `json:"stopOnEscalation,omitempty"`
	// Answers are the driver's answers to the n-th halt of a workflow
	// (cycling when there are more halts).
	Answers []Answer `json:"answers"`
	// Inputs are sent when the root workflow has issued AtCall calls.
	Inputs []Input `json:"inputs,omitempty"`
	// StartHalt starts the workflow with SignalWithStart and a halt signal:
	// its first guarded call must halt.
	StartHalt bool `json:"startHalt,omitempty"`
	// Handlers, when set, make the workflow and its children register a
	// halt handler: at the halt of seq n it does Handlers[(n-1) % len]
	// (see HandlerFor).
	Handlers []HandlerKind `json:"handlers,omitempty"`
	// Runtime adds the runtime budgets to the profile (WithRuntimeBudget).
	Runtime bool `json:"runtime,omitempty"`
	// Liveness (feature stuck) sets Options.Warnings and lifts the
	// budgets that would halt a stuck loop before its detectors do
	// (WithLiveness).
	Liveness *Liveness `json:"liveness,omitempty"`
	// LongPause (feature longpause) is what the driver does with the
	// first halt of the root workflow it answers: it waits LongPauseDelay,
	// longer than every runtime budget, then resumes, escalates, cancels
	// the workflow, or leaves the halt to a pause timeout that escalates.
	LongPause LongPause `json:"longPause,omitempty"`
	// Cleanup are the steps the root workflow runs once it was canceled,
	// in a disconnected context: guarded calls after a cancellation while
	// paused (feature longpause).
	Cleanup []Step `json:"cleanup,omitempty"`
}

// Liveness is the guard set-up of a plan that ends in a stuck loop.
type Liveness struct {
	// Warnings is the plan's Options.Warnings (0 to MaxStuckWarnings).
	Warnings int `json:"warnings"`
}

// LongPause is how the driver ends the first halt it answers, late.
type LongPause string

// The long pauses.
const (
	LongPauseResume   LongPause = "resume"
	LongPauseEscalate LongPause = "escalate"
	LongPauseCancel   LongPause = "cancel"
	// LongPauseTimeout sends nothing: the plan's options escalate a pause
	// at LongPauseDelay (PauseTimeout, OnPauseTimeout escalate).
	LongPauseTimeout LongPause = "timeout"
)

// LongPauses lists them, in the order Generate draws from.
var LongPauses = []LongPause{LongPauseResume, LongPauseEscalate, LongPauseCancel, LongPauseTimeout}

// HandlerKind is what the workflow's halt handler does at one halt.
type HandlerKind string

// The handler kinds.
const (
	HandlerReview   HandlerKind = "review"   // asks the Review activity, resumes with its answer as guidance
	HandlerEscalate HandlerKind = "escalate" // escalates
	HandlerHuman    HandlerKind = "human"    // decides nothing: a human does
	HandlerError    HandlerKind = "error"    // fails: a human decides
	HandlerPanic    HandlerKind = "panic"    // panics: a human decides
	HandlerUnknown  HandlerKind = "unknown"  // returns an action the guard does not know: a human decides
	// HandlerRepeat calls the halted node again and again with the same
	// result (unguarded calls: they neither trip nor wait on the halt),
	// then resumes without guidance.
	HandlerRepeat HandlerKind = "repeat"
	// HandlerSleep sleeps on a timer long enough for the driver's answer
	// to arrive while it runs (the human's decision wins), then resumes.
	HandlerSleep HandlerKind = "sleep"
	// HandlerOversize resumes with guidance over MaxGuidanceBytes holding
	// an invalid byte: the guard cuts it.
	HandlerOversize HandlerKind = "oversize"
	// HandlerSlow (feature runtime) sleeps HandlerSlowSleep, longer than
	// any runtime budget, then resumes with guidance: none of its time
	// may be charged to the loop.
	HandlerSlow HandlerKind = "slow"
	// HandlerSlowEscalate (feature longpause) sleeps HandlerSlowSleep,
	// then escalates: the workflow goes on, and none of the handler's time
	// may be charged to the loop either.
	HandlerSlowEscalate HandlerKind = "slow-escalate"
)

// HandlerKinds lists the handler kinds Generate draws from (HandlerSlow,
// added by feature runtime, is not among them, so that adding it left the
// other plans of every seed as they were).
var HandlerKinds = []HandlerKind{HandlerReview, HandlerEscalate, HandlerHuman, HandlerError, HandlerPanic, HandlerUnknown, HandlerRepeat, HandlerSleep, HandlerOversize}

// HandlerFor is what the handlers do at the halt of seq n (n ≥ 1).
func HandlerFor(handlers []HandlerKind, n int) HandlerKind {
	if len(handlers) == 0 || n < 1 {
		return ""
	}
	return handlers[(n-1)%len(handlers)]
}

// Action is the action a handler of kind k returns ("" when it hands the
// halt to a human).
func (k HandlerKind) Action() protocol.Action {
	switch k {
	case HandlerEscalate, HandlerSlowEscalate:
		return protocol.ActionEscalate
	case HandlerReview, HandlerRepeat, HandlerSleep, HandlerOversize, HandlerSlow:
		return protocol.ActionResume
	}
	return ""
}

// HandlerGuidance is the guidance a handler of kind k resumes the halt of
// seq n with, before the guard cuts it to MaxGuidanceBytes.
func HandlerGuidance(k HandlerKind, n int) string {
	g := fmt.Sprintf("handler %s of halt %d: change the approach", k, n)
	switch k {
	case HandlerReview, HandlerSleep, HandlerSlow:
		return g
	case HandlerOversize:
		return g + " \xff" + strings.Repeat("界", 200)
	}
	return ""
}

// Step is one step of a program; exactly one field is set.
type Step struct {
	Call     *Call    `json:"call,omitempty"`
	Parallel [][]Step `json:"parallel,omitempty"`
	SleepMs  int      `json:"sleepMs,omitempty"`
	Select   *Select  `json:"select,omitempty"`
	Wait     *Wait    `json:"wait,omitempty"`
	Stuck    *Stuck   `json:"stuck,omitempty"`
}

// Stuck is a stuck loop (feature stuck): Round repeated Rounds times,
// every round with the same results, as an agent that no longer makes
// progress repeats its turn. It ends early when one of its calls is
// escalated: the guard halted it and the driver stopped it. Its calls'
// tags are made from their group's (StuckTag), so that a plan of a
// hundred rounds prints short.
type Stuck struct {
	Rounds int     `json:"rounds"`
	Round  []Group `json:"round"`
}

// Group is one step of a stuck loop's round: Width concurrent calls of
// Call's node (a model's turn that returns several tool calls), started
// together as futures or, with Branches, each in a workflow.Go branch;
// Width 1 is one call.
type Group struct {
	Call     Call `json:"call"`
	Width    int  `json:"width"`
	Branches bool `json:"branches,omitempty"`
	// Distinct gives each of the Width calls an output of its own (the
	// same in every round): different searches, not one repeated.
	Distinct bool `json:"distinct,omitempty"`
}

// The shapes of stuck loops Generate makes and Validate accepts.
const (
	MaxStuckWarnings = 12 // Liveness.Warnings from 0 to this
	MaxGroupWidth    = 4  // calls in one group
	MaxRoundGroups   = 2  // groups in one round
)

// StuckNodes are the nodes a stuck loop calls: activities, whose notice
// headers the history shows, and whose results repeat under every profile
// (Verify's do not under the default one, and Score is exempt under the
// tight one).
var StuckNodes = []string{"Code", "Plan", "Research"}

// CallsPerRound is how many guarded calls one round of the loop makes.
func (s Stuck) CallsPerRound() int {
	n := 0
	for _, g := range s.Round {
		n += g.Width
	}
	return n
}

// Calls are the calls group g makes in round r (from 0).
func (g Group) Calls(r int) []Call {
	out := make([]Call, g.Width)
	for b := range out {
		c := g.Call
		c.Tag = StuckTag(g.Call.Tag, r, b)
		if g.Distinct && c.Output != "" {
			c.Output = fmt.Sprintf("%s #%d", c.Output, b)
		}
		out[b] = c
	}
	return out
}

// StuckTag is the tag of call b of round r of the group tagged base.
func StuckTag(base string, r, b int) string { return fmt.Sprintf("%s.r%d.b%d", base, r, b) }

// StuckBase is the tag of the group a stuck loop's call belongs to, or ""
// for any other call (plan tags have no dot).
func StuckBase(tag string) string {
	base, _, ok := strings.Cut(tag, ".")
	if !ok {
		return ""
	}
	return base
}

// StuckLoop returns the plan's stuck loop, if it has one: the last step of
// its last run.
func (p Plan) StuckLoop() *Stuck {
	if len(p.Runs) == 0 {
		return nil
	}
	last := p.Runs[len(p.Runs)-1]
	if len(last) == 0 {
		return nil
	}
	return last[len(last)-1].Stuck
}

// Wait is the workflow waiting for a signal of its own (a pausable job's
// "resume", say); the driver sends it once it sees the wait.
type Wait struct {
	Signal    string `json:"signal"`
	Tag       string `json:"tag"`
	TimeoutMs int    `json:"timeoutMs"`
}

// OwnSignals are the names a workflow's own signals take: the guard's
// (which the guard must not swallow) and one of its own.
var OwnSignals = []string{"resume", "halt", "escalate", "proceed"}

// Call is one guarded call.
type Call struct {
	Kind CallKind `json:"kind"`
	Node string   `json:"node"`
	// Tag is unique in the plan; child workflow ids derive from it.
	Tag    string `json:"tag"`
	Output string `json:"output,omitempty"`
	Err    string `json:"err,omitempty"`
	// DelayMs is how long the activity takes (real time).
	DelayMs int `json:"delayMs,omitempty"`
	// Child is the child workflow's program (activity calls only).
	Child []Step `json:"child,omitempty"`
}

// Select waits on a Selector over its calls and an optional timer, Picks
// times; calls not picked are left running.
type Select struct {
	Calls   []Call `json:"calls"`
	TimerMs int    `json:"timerMs,omitempty"`
	Picks   int    `json:"picks"`
}

// Answer is how the driver answers a halt.
type Answer string

// The answers.
const (
	AnswerResume         Answer = "resume"          // resume signal
	AnswerResumeExtend   Answer = "resume-extend"   // resume signal raising a limit
	AnswerResumeUpdate   Answer = "resume-update"   // resume update
	AnswerEscalate       Answer = "escalate"        // escalate signal
	AnswerEscalateUpdate Answer = "escalate-update" // escalate update
	AnswerBadThenResume  Answer = "bad-then-resume" // a malformed resume signal, then a good one
	// Guidance (feature guidance): each text is new, so that a notice
	// names the answer it came from.
	AnswerGuidance       Answer = "guidance"        // resume signal with guidance
	AnswerGuidanceMax    Answer = "guidance-max"    // resume signal with guidance of MaxGuidanceBytes, multi-byte runes and characters JSON escapes
	AnswerGuidanceEmpty  Answer = "guidance-empty"  // resume signal with "guidance": ""
	AnswerGuidanceUpdate Answer = "guidance-update" // resume update with guidance
	// AnswerHostileGuidance sends guidance the guard must refuse (one byte
	// over the limit; on escalate) and guidance with an invalid byte, as
	// signals, then a guidance resume signal.
	AnswerHostileGuidance Answer = "hostile-guidance"
	// AnswerHostileGuidanceUpdate sends the same as updates, whose
	// refusals are checked, then a guidance resume update.
	AnswerHostileGuidanceUpdate Answer = "hostile-guidance-update"
)

// InputKind is a piece of human input sent at a point of the run.
type InputKind string

// The input kinds.
const (
	InputHalt      InputKind = "halt"       // halt signal
	InputBadSignal InputKind = "bad-signal" // a malformed signal
	InputBadUpdate InputKind = "bad-update" // a malformed update
	InputCancel    InputKind = "cancel"     // cancel the workflow
	InputTerminate InputKind = "terminate"  // terminate the workflow (at a halt)
)

// Input is human input sent once the root workflow has issued AtCall
// guarded calls (over all its runs).
type Input struct {
	AtCall int       `json:"atCall"`
	Kind   InputKind `json:"kind"`
	// Name is the signal or update of a bad input; Bad names its payload
	// (see BadPayloads).
	Name string `json:"name,omitempty"`
	Bad  string `json:"bad,omitempty"`
	// OnHalt sends the input at the workflow's first halt at or after
	// AtCall, instead of the driver's answer (a human cancelling or an
	// operator terminating a paused workflow). Cancellation and
	// termination only.
	OnHalt bool `json:"onHalt,omitempty"`
}

// BadPayloads are the malformed payload variants, by name.
var BadPayloads = []string{"broken-json", "binary", "unknown-field", "wrong-type", "oversize", "extend-on-escalate"}

// JSON renders the plan for a failure message; ParsePlan reads it back.
func (p Plan) JSON() string {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Sprintf("<plan of seed %d: %v>", p.Seed, err)
	}
	return string(b)
}

// ParsePlan reads a plan printed by JSON.
func ParsePlan(s string) (Plan, error) {
	var p Plan
	err := json.Unmarshal([]byte(s), &p)
	return p, err
}

// walk visits every step and every call of steps and of everything nested
// in them (branches, select calls, child programs); child is true inside a
// child program, sel for the calls of a select. Either visitor may be nil.
// A stuck loop is one step: its groups' calls are templates, not calls.
func walk(steps []Step, child bool, step func(s Step, child bool), call func(c Call, sel, child bool)) {
	onCall := func(c Call, sel bool) {
		if call != nil {
			call(c, sel, child)
		}
		walk(c.Child, true, step, call)
	}
	for _, s := range steps {
		if step != nil {
			step(s, child)
		}
		switch {
		case s.Call != nil:
			onCall(*s.Call, false)
		case s.Parallel != nil:
			for _, b := range s.Parallel {
				walk(b, child, step, call)
			}
		case s.Select != nil:
			for _, c := range s.Select.Calls {
				onCall(c, true)
			}
		}
	}
}

// walkRuns walks every run of the plan.
func (p Plan) walkRuns(step func(s Step, child bool), call func(c Call, sel, child bool)) {
	for _, r := range p.Runs {
		walk(r, false, step, call)
	}
}

// Size counts the plan's steps, select calls and inputs: the smaller, the
// easier a failing plan is to read.
func (p Plan) Size() int {
	n := len(p.Inputs)
	p.walkRuns(func(Step, bool) { n++ }, func(_ Call, sel, _ bool) {
		if sel {
			n++
		}
	})
	return n
}

// Calls counts the guarded calls the root workflow issues if every step
// runs (children's own calls not included).
func (p Plan) Calls() int {
	n := 0
	p.walkRuns(func(s Step, child bool) {
		if s.Stuck != nil && !child {
			n += s.Stuck.Rounds * s.Stuck.CallsPerRound()
		}
	}, func(_ Call, _, child bool) {
		if !child {
			n++
		}
	})
	return n
}

// Waits lists the plan's waits for the workflow's own signals, by tag.
func (p Plan) Waits() map[string]Wait {
	ws := map[string]Wait{}
	p.walkRuns(func(s Step, _ bool) {
		if s.Wait != nil {
			ws[s.Wait.Tag] = *s.Wait
		}
	}, nil)
	return ws
}

// ChildTags lists the tags of the plan's child workflow calls, in plan
// order.
func (p Plan) ChildTags() []string {
	var tags []string
	p.walkRuns(nil, func(c Call, _, _ bool) {
		if c.Kind == KindChild {
			tags = append(tags, c.Tag)
		}
	})
	return tags
}

// Validate checks that the plan is well formed and uses only the features
// in fs: what Generate promises and Interpret relies on.
func (p Plan) Validate(fs Features) error {
	v := validator{fs: fs, tags: map[string]bool{}}
	if _, ok := Profiles[p.Profile]; !ok {
		return fmt.Errorf("profile %q is unknown", p.Profile)
	}
	if p.Profile != ProfileDefault && p.Profile != ProfileTight && !fs.Has(FeatPolicy) {
		return fmt.Errorf("profile %q needs feature %s", p.Profile, FeatPolicy)
	}
	if p.Codec && !fs.Has(FeatCodec) {
		return fmt.Errorf("codec needs feature %s", FeatCodec)
	}
	if len(p.Runs) == 0 {
		return fmt.Errorf("no runs")
	}
	if len(p.Runs) > 1 && !fs.Has(FeatCAN) {
		return fmt.Errorf("%d runs need feature %s", len(p.Runs), FeatCAN)
	}
	for i, r := range p.Runs {
		if len(r) == 0 {
			return fmt.Errorf("runs[%d]: no steps", i)
		}
		if err := v.steps(fmt.Sprintf("runs[%d]", i), r, false); err != nil {
			return err
		}
	}
	if len(p.Answers) == 0 {
		return fmt.Errorf("no answers")
	}
	if p.StartHalt {
		if err := v.need(FeatStartHalt, "startHalt"); err != nil {
			return err
		}
	}
	for i, a := range p.Answers {
		if err := v.answer(a); err != nil {
			return fmt.Errorf("answers[%d]: %w", i, err)
		}
	}
	if len(p.Handlers) > 0 {
		if err := v.need(FeatHandler, "handlers"); err != nil {
			return err
		}
	}
	for i, k := range p.Handlers {
		switch k {
		case HandlerSlow:
			if err := v.need(FeatRuntime, fmt.Sprintf("handlers[%d]: %s", i, k)); err != nil {
				return err
			}
			continue
		case HandlerSlowEscalate:
			if err := v.need(FeatLongPause, fmt.Sprintf("handlers[%d]: %s", i, k)); err != nil {
				return err
			}
			continue
		}
		if !slices.Contains(HandlerKinds, k) {
			return fmt.Errorf("handlers[%d]: unknown handler kind %q", i, k)
		}
	}
	if p.Runtime {
		if err := v.need(FeatRuntime, "runtime"); err != nil {
			return err
		}
	}
	if err := v.liveness(p); err != nil {
		return err
	}
	if err := v.longPause(p); err != nil {
		return err
	}
	calls := p.Calls()
	for i, in := range p.Inputs {
		if in.AtCall < 0 || in.AtCall > calls {
			return fmt.Errorf("inputs[%d]: atCall %d outside 0..%d", i, in.AtCall, calls)
		}
		if err := v.input(in); err != nil {
			return fmt.Errorf("inputs[%d]: %w", i, err)
		}
	}
	return nil
}

type validator struct {
	fs   Features
	tags map[string]bool
}

// liveness checks a plan's stuck loop and its guard set-up: one loop, the
// last step of the last run, of activity calls of StuckNodes.
func (v validator) liveness(p Plan) error {
	if p.Liveness != nil {
		if err := v.need(FeatStuck, "liveness"); err != nil {
			return err
		}
		if w := p.Liveness.Warnings; w < 0 || w > MaxStuckWarnings {
			return fmt.Errorf("liveness: warnings %d outside 0..%d", w, MaxStuckWarnings)
		}
	}
	loops := 0
	p.walkRuns(func(s Step, _ bool) {
		if s.Stuck != nil {
			loops++
		}
	}, nil)
	if loops == 0 {
		return nil
	}
	s := p.StuckLoop()
	if loops > 1 || s == nil {
		return fmt.Errorf("%d stuck loops: one at most, the last step of the last run", loops)
	}
	if p.Liveness == nil {
		return fmt.Errorf("a stuck loop without liveness")
	}
	if s.Rounds < 1 || len(s.Round) == 0 || len(s.Round) > MaxRoundGroups {
		return fmt.Errorf("stuck loop of %d rounds of %d groups", s.Rounds, len(s.Round))
	}
	for i, g := range s.Round {
		at := fmt.Sprintf("stuck.round[%d]", i)
		if g.Width < 1 || g.Width > MaxGroupWidth {
			return fmt.Errorf("%s: width %d outside 1..%d", at, g.Width, MaxGroupWidth)
		}
		if g.Call.Kind != KindActivity || !slices.Contains(StuckNodes, g.Call.Node) || g.Call.DelayMs > 0 {
			return fmt.Errorf("%s: a %s call of %q (delay %dms), want an activity of %v without delay", at, g.Call.Kind, g.Call.Node, g.Call.DelayMs, StuckNodes)
		}
		if strings.Contains(g.Call.Tag, ".") {
			return fmt.Errorf("%s: tag %q has a dot", at, g.Call.Tag)
		}
		if err := v.call(at, g.Call, false); err != nil {
			return err
		}
	}
	return nil
}

// longPause checks the parts of feature longpause.
func (v validator) longPause(p Plan) error {
	if p.LongPause != "" {
		if err := v.need(FeatLongPause, "longPause"); err != nil {
			return err
		}
		if !slices.Contains(LongPauses, p.LongPause) {
			return fmt.Errorf("unknown long pause %q", p.LongPause)
		}
	}
	if len(p.Cleanup) == 0 {
		return nil
	}
	if err := v.need(FeatLongPause, "cleanup"); err != nil {
		return err
	}
	for i, s := range p.Cleanup {
		if s.Call == nil || s.Call.Kind != KindActivity {
			return fmt.Errorf("cleanup[%d]: activity calls only", i)
		}
	}
	return v.steps("cleanup", p.Cleanup, false)
}

func (v validator) need(f Feature, what string) error {
	if !v.fs.Has(f) {
		return fmt.Errorf("%s needs feature %s", what, f)
	}
	return nil
}

func (v validator) steps(at string, steps []Step, inChild bool) error {
	for i, s := range steps {
		at := fmt.Sprintf("%s[%d]", at, i)
		set := 0
		for _, on := range []bool{s.Call != nil, s.Parallel != nil, s.SleepMs > 0, s.Select != nil, s.Wait != nil, s.Stuck != nil} {
			if on {
				set++
			}
		}
		if set != 1 {
			return fmt.Errorf("%s: %d fields set, want exactly one", at, set)
		}
		if inChild && s.Call == nil {
			return fmt.Errorf("%s: a child program holds calls only", at)
		}
		switch {
		case s.Call != nil:
			if err := v.call(at, *s.Call, inChild); err != nil {
				return err
			}
		case s.Parallel != nil:
			if err := v.need(FeatParallel, at+": parallel"); err != nil {
				return err
			}
			if len(s.Parallel) < 2 {
				return fmt.Errorf("%s: parallel with %d branches", at, len(s.Parallel))
			}
			for j, b := range s.Parallel {
				if len(b) == 0 {
					return fmt.Errorf("%s.parallel[%d]: empty branch", at, j)
				}
				if err := v.steps(fmt.Sprintf("%s.parallel[%d]", at, j), b, false); err != nil {
					return err
				}
			}
		case s.SleepMs > 0:
			if err := v.need(FeatTimer, at+": sleep"); err != nil {
				return err
			}
		case s.Stuck != nil:
			// The loop itself is checked by liveness.
			if err := v.need(FeatStuck, at+": stuck loop"); err != nil {
				return err
			}
		case s.Wait != nil:
			if err := v.need(FeatOwnSignal, at+": wait"); err != nil {
				return err
			}
			if !slices.Contains(OwnSignals, s.Wait.Signal) || s.Wait.TimeoutMs <= 0 || s.Wait.Tag == "" || v.tags[s.Wait.Tag] {
				return fmt.Errorf("%s: wait for %q, %dms, tag %q", at, s.Wait.Signal, s.Wait.TimeoutMs, s.Wait.Tag)
			}
			v.tags[s.Wait.Tag] = true
		case s.Select != nil:
			if !(isInflight(s.Select) && v.fs.Has(FeatInflight)) {
				if err := v.need(FeatSelect, at+": select"); err != nil {
					return err
				}
			}
			sel := s.Select
			futures := len(sel.Calls)
			if sel.TimerMs > 0 {
				futures++
			}
			if len(sel.Calls) == 0 || sel.Picks < 1 || sel.Picks > futures {
				return fmt.Errorf("%s: select of %d calls, timer %dms, %d picks", at, len(sel.Calls), sel.TimerMs, sel.Picks)
			}
			for j, c := range sel.Calls {
				if c.Kind == KindChild {
					if err := v.need(FeatSelectChild, at+": child in a select"); err != nil {
						return err
					}
				}
				if err := v.call(fmt.Sprintf("%s.select[%d]", at, j), c, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (v validator) call(at string, c Call, inChild bool) error {
	if c.Tag == "" || v.tags[c.Tag] {
		return fmt.Errorf("%s: tag %q empty or not unique", at, c.Tag)
	}
	v.tags[c.Tag] = true
	nodes := map[CallKind][]string{KindActivity: ActivityNodes, KindLocal: LocalNodes, KindChild: ChildNodes}[c.Kind]
	if !slices.Contains(nodes, c.Node) {
		return fmt.Errorf("%s: node %q is not a %q node", at, c.Node, c.Kind)
	}
	if inChild && c.Kind != KindActivity {
		return fmt.Errorf("%s: a child program calls activities only", at)
	}
	if strings.HasPrefix(c.Output, MetricPrefix) {
		if err := v.need(FeatNonFinite, at+": metric"); err != nil {
			return err
		}
	}
	switch c.Kind {
	case KindLocal:
		if err := v.need(FeatLocal, at+": local activity"); err != nil {
			return err
		}
	case KindChild:
		if err := v.need(FeatChild, at+": child workflow"); err != nil {
			return err
		}
		if len(c.Child) == 0 {
			return fmt.Errorf("%s: child without a program", at)
		}
		return v.steps(at+".child", c.Child, true)
	}
	if len(c.Child) > 0 {
		return fmt.Errorf("%s: a %s call has a child program", at, c.Kind)
	}
	return nil
}

func (v validator) answer(a Answer) error {
	switch a {
	case AnswerResume, AnswerResumeExtend:
		return nil
	case AnswerResumeUpdate:
		return v.need(FeatUpdates, string(a))
	case AnswerEscalate:
		return v.need(FeatEscalate, string(a))
	case AnswerEscalateUpdate:
		if err := v.need(FeatEscalate, string(a)); err != nil {
			return err
		}
		return v.need(FeatUpdates, string(a))
	case AnswerBadThenResume:
		return v.need(FeatBad, string(a))
	case AnswerGuidance, AnswerGuidanceMax, AnswerGuidanceEmpty, AnswerHostileGuidance:
		return v.need(FeatGuidance, string(a))
	case AnswerGuidanceUpdate, AnswerHostileGuidanceUpdate:
		if err := v.need(FeatGuidance, string(a)); err != nil {
			return err
		}
		return v.need(FeatUpdates, string(a))
	}
	return fmt.Errorf("unknown answer %q", a)
}

func (v validator) input(in Input) error {
	if in.OnHalt && in.Kind != InputCancel && in.Kind != InputTerminate {
		return fmt.Errorf("onHalt is for cancellation and termination only, not %s", in.Kind)
	}
	switch in.Kind {
	case InputHalt:
		return v.need(FeatHalt, string(in.Kind))
	case InputCancel:
		return v.need(FeatCancel, string(in.Kind))
	case InputTerminate:
		if !in.OnHalt {
			return fmt.Errorf("terminate is sent at a halt only")
		}
		return v.need(FeatTerminate, string(in.Kind))
	case InputBadSignal, InputBadUpdate:
		if err := v.need(FeatBad, string(in.Kind)); err != nil {
			return err
		}
		if in.Kind == InputBadUpdate {
			if err := v.need(FeatUpdates, string(in.Kind)); err != nil {
				return err
			}
		}
		if !slices.Contains(BadPayloads, in.Bad) {
			return fmt.Errorf("unknown bad payload %q", in.Bad)
		}
		if in.Name == "" {
			return fmt.Errorf("bad input without a name")
		}
		return nil
	}
	return fmt.Errorf("unknown input %q", in.Kind)
}

// Uses returns the features the plan actually uses (drift is a check, not
// part of a plan, and never listed).
func (p Plan) Uses() Features {
	fs := Features{}
	if p.Codec {
		fs[FeatCodec] = true
	}
	if p.StartHalt {
		fs[FeatStartHalt] = true
	}
	if len(p.Handlers) > 0 {
		fs[FeatHandler] = true
	}
	if p.Runtime || slices.Contains(p.Handlers, HandlerSlow) {
		fs[FeatRuntime] = true
	}
	if p.Liveness != nil || p.StuckLoop() != nil {
		fs[FeatStuck] = true
	}
	if p.LongPause != "" || len(p.Cleanup) > 0 || slices.Contains(p.Handlers, HandlerSlowEscalate) {
		fs[FeatLongPause] = true
	}
	if p.Profile != ProfileDefault && p.Profile != ProfileTight {
		fs[FeatPolicy] = true
	}
	if len(p.Runs) > 1 {
		fs[FeatCAN] = true
		for _, r := range p.Runs[:len(p.Runs)-1] {
			if isInflight(r[len(r)-1].Select) {
				fs[FeatInflight] = true
			}
		}
	}
	p.walkRuns(func(s Step, _ bool) {
		switch {
		case s.Parallel != nil:
			fs[FeatParallel] = true
		case s.SleepMs > 0:
			fs[FeatTimer] = true
		case s.Wait != nil:
			fs[FeatOwnSignal] = true
		case s.Select != nil && !isInflight(s.Select):
			fs[FeatSelect] = true
		}
	}, func(c Call, sel, _ bool) {
		if strings.HasPrefix(c.Output, MetricPrefix) {
			fs[FeatNonFinite] = true
		}
		switch c.Kind {
		case KindLocal:
			fs[FeatLocal] = true
		case KindChild:
			fs[FeatChild] = true
			if sel {
				fs[FeatSelectChild] = true
			}
		}
	})
	for _, a := range p.Answers {
		switch a {
		case AnswerResumeUpdate:
			fs[FeatUpdates] = true
		case AnswerEscalate:
			fs[FeatEscalate] = true
		case AnswerEscalateUpdate:
			fs[FeatEscalate], fs[FeatUpdates] = true, true
		case AnswerBadThenResume:
			fs[FeatBad] = true
		case AnswerGuidance, AnswerGuidanceMax, AnswerGuidanceEmpty, AnswerHostileGuidance:
			fs[FeatGuidance] = true
		case AnswerGuidanceUpdate, AnswerHostileGuidanceUpdate:
			fs[FeatGuidance], fs[FeatUpdates] = true, true
		}
	}
	for _, in := range p.Inputs {
		switch in.Kind {
		case InputHalt:
			fs[FeatHalt] = true
		case InputCancel:
			fs[FeatCancel] = true
		case InputTerminate:
			fs[FeatTerminate] = true
		case InputBadSignal:
			fs[FeatBad] = true
		case InputBadUpdate:
			fs[FeatBad], fs[FeatUpdates] = true, true
		}
	}
	return fs
}

// inflightDelayMs is how long the call left running at continue-as-new
// takes: far longer than the timer that wins against it.
const inflightDelayMs = 3000

// isInflight reports whether sel is the shape Generate uses to leave a call
// running across continue-as-new: one slow activity against a short timer.
// Plain selects never have calls that slow.
func isInflight(sel *Select) bool {
	return sel != nil && sel.TimerMs > 0 && sel.Picks == 1 && len(sel.Calls) == 1 &&
		sel.Calls[0].Kind == KindActivity && sel.Calls[0].DelayMs >= inflightDelayMs
}
