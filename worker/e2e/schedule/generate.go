package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/loopguard/loopguard/interceptor"
)

// Generate builds the plan of seed, using only the features in fs. The
// same seed and features always give the same plan.
func Generate(seed int64, fs Features) Plan {
	g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 0x10097a8d)), fs: fs, modes: map[string]outputMode{}, count: map[string]int{}}
	p := Plan{Seed: seed, Features: fs.String()}

	profiles := profileOrder[:2]
	if fs.Has(FeatPolicy) {
		profiles = profileOrder
	}
	p.Profile = profiles[g.r.IntN(len(profiles))]
	p.Codec = fs.Has(FeatCodec) && g.r.IntN(2) == 0

	runs := 1
	if fs.Has(FeatCAN) {
		runs += g.r.IntN(3)
	}
	for i := 0; i < runs; i++ {
		steps := g.steps(1+g.r.IntN(4), 0)
		if fs.Has(FeatInflight) && i < runs-1 && g.r.IntN(2) == 0 {
			// The timer wins; the slow call is still running when the run
			// continues as new.
			slow := g.activity()
			slow.DelayMs = inflightDelayMs
			steps = append(steps, Step{Select: &Select{Calls: []Call{slow}, TimerMs: 20, Picks: 1}})
		}
		p.Runs = append(p.Runs, steps)
	}
	if p.Calls() == 0 {
		// Sleeps alone guard nothing.
		c := g.call(true)
		p.Runs[0] = append([]Step{{Call: &c}}, p.Runs[0]...)
	}
	p.StopOnEscalation = g.r.IntN(3) == 0
	p.StartHalt = fs.Has(FeatStartHalt) && g.r.IntN(2) == 0

	answers := []Answer{AnswerResume, AnswerResumeExtend}
	if fs.Has(FeatUpdates) {
		answers = append(answers, AnswerResumeUpdate)
	}
	if fs.Has(FeatEscalate) {
		answers = append(answers, AnswerEscalate)
		if fs.Has(FeatUpdates) {
			answers = append(answers, AnswerEscalateUpdate)
		}
	}
	if fs.Has(FeatBad) {
		answers = append(answers, AnswerBadThenResume)
	}
	if fs.Has(FeatGuidance) {
		answers = append(answers, AnswerGuidance, AnswerGuidance, AnswerGuidanceMax, AnswerGuidanceEmpty, AnswerHostileGuidance)
		if fs.Has(FeatUpdates) {
			answers = append(answers, AnswerGuidanceUpdate, AnswerHostileGuidanceUpdate)
		}
	}
	for n := 1 + g.r.IntN(4); n > 0; n-- {
		p.Answers = append(p.Answers, answers[g.r.IntN(len(answers))])
	}

	calls := p.Calls()
	at := func() int { return g.r.IntN(calls + 1) }
	if fs.Has(FeatHalt) {
		for n := g.r.IntN(3); n > 0; n-- {
			p.Inputs = append(p.Inputs, Input{AtCall: at(), Kind: InputHalt})
		}
	}
	if fs.Has(FeatBad) {
		for n := g.r.IntN(3); n > 0; n-- {
			in := Input{AtCall: at(), Kind: InputBadSignal, Name: g.pick([]string{"resume", "escalate", "halt"}), Bad: g.pick(BadPayloads)}
			if fs.Has(FeatUpdates) && g.r.IntN(2) == 0 {
				in.Kind, in.Name = InputBadUpdate, g.pick([]string{"resume", "escalate"})
			}
			p.Inputs = append(p.Inputs, in)
		}
	}
	if fs.Has(FeatCancel) && g.r.IntN(3) == 0 {
		p.Inputs = append(p.Inputs, Input{AtCall: at(), Kind: InputCancel, OnHalt: g.r.IntN(2) == 0})
	}
	if fs.Has(FeatTerminate) && g.r.IntN(4) == 0 {
		p.Inputs = append(p.Inputs, Input{AtCall: at(), Kind: InputTerminate, OnHalt: true})
	}
	if fs.Has(FeatHandler) && g.r.IntN(3) != 0 {
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			p.Handlers = append(p.Handlers, HandlerKinds[g.r.IntN(len(HandlerKinds))])
		}
	}
	// Drawn last, so that the rest of every seed's plan stays as it was
	// before feature runtime.
	if fs.Has(FeatRuntime) && g.r.IntN(3) == 0 {
		p.Runtime = true
		// A loop that stalls, halts, and goes on after its halt, first:
		// the first or second halt (after a halt at start) is likely its.
		p.Runs[0] = append(g.stalledLoop(), p.Runs[0]...)
		if fs.Has(FeatHandler) {
			// The first two halts' handlers, and the same ones of each
			// round of Handlers after them, outlast the budgets.
			p.Handlers = append([]HandlerKind{HandlerSlow, HandlerSlow}, p.Handlers...)
		}
	}
	// Drawn after runtime's, so that a seed's plan is as it was before
	// features stuck and longpause, but for what they add.
	if fs.Has(FeatStuck) && g.r.IntN(2) == 0 {
		g.stuck(&p)
	}
	if fs.Has(FeatLongPause) && p.Runtime && g.r.IntN(3) != 0 {
		g.longPause(&p)
	}
	return p
}

// stuck ends the plan's last run with a stuck loop, under Warnings from 0
// to MaxStuckWarnings: one or two groups a round, each one call or a few
// concurrent calls of one node, their results (outputs, or one error) the
// same every round. It makes enough rounds for its first trip (the rounds
// a loop needs after starting over, and one more for the round it starts
// in) and for the whole HaltBound after it, and one more: a guard that
// never halts it is caught before the loop runs out.
func (g *gen) stuck(p *Plan) {
	p.Liveness = &Liveness{Warnings: g.r.IntN(MaxStuckWarnings + 1)}
	s := &Stuck{Round: make([]Group, 1+g.r.IntN(MaxRoundGroups))}
	for i := range s.Round {
		g.tags++
		node := g.pick(StuckNodes)
		c := Call{Kind: KindActivity, Node: node, Tag: fmt.Sprintf("t%d", g.tags), Output: node + " stuck output"}
		if g.r.IntN(4) == 0 {
			c.Output, c.Err = "", node+" failed: stuck"
		}
		gr := Group{Call: c, Width: 1}
		if g.r.IntN(2) == 0 {
			gr.Width = 2 + g.r.IntN(MaxGroupWidth-1)
			gr.Branches, gr.Distinct = g.r.IntN(2) == 0, g.r.IntN(2) == 0
		}
		s.Round[i] = gr
	}
	s.Rounds = StuckRounds(p.Options())
	last := len(p.Runs) - 1
	p.Runs[last] = append(p.Runs[last], Step{Stuck: s})
}

// StuckRounds is how many rounds a stuck loop makes under opts: its first
// trip within RetripRounds + 1 rounds, HaltBound's rounds after it, and
// one more.
func StuckRounds(opts interceptor.Options) int {
	return OnsetRounds(opts) + boundRounds(opts) + 1
}

// OnsetRounds is how many rounds a stuck loop may take to trip first:
// the rounds one more warning adds to HaltBound (RetripRounds + 1), the
// rounds a loop needs to trip again after starting over and the round it
// started in.
func OnsetRounds(opts interceptor.Options) int {
	o := opts
	o.Warnings = 1
	one := boundRounds(o)
	o.Warnings = 0
	return one - boundRounds(o)
}

// boundRounds is HaltBound in rounds of one call. The profiles' options
// are valid: an error here is a broken profile.
func boundRounds(opts interceptor.Options) int {
	b, err := interceptor.HaltBound(opts, 1)
	if err != nil {
		panic(fmt.Sprintf("schedule: a profile's options: %v", err))
	}
	return b
}

// longPause makes the plan's first halt answered by the driver (likely
// the stalled loop's) last LongPauseDelay, or its first halt's handler
// take as long and escalate, so that each way a pause ends is followed
// by more calls of the loop: a guard that charged the pause halts one of
// them on a runtime budget. A halt at start would take the long pause
// before the loop ran, so there is none. Under observe and fail no halt
// pauses; under the timeout profile its one-second pause timeout would
// end any other long pause first, so it gets the timeout's.
func (g *gen) longPause(p *Plan) {
	var kinds []LongPause
	switch p.Profile {
	case ProfileObserve, ProfileFail:
		return
	case ProfileTimeout:
		kinds = []LongPause{LongPauseTimeout}
	default:
		kinds = LongPauses
		if len(p.Handlers) > 0 {
			kinds = append(slices.Clone(kinds), "")
		}
	}
	// The workflow handles LoopEscalated and goes on, as the docs allow:
	// its loop's next calls are where a pause charged would show.
	p.StartHalt, p.StopOnEscalation = false, false
	k := kinds[g.r.IntN(len(kinds))]
	if k == "" {
		// The halt handler takes the long pause, and escalates.
		p.Handlers[0] = HandlerSlowEscalate
		return
	}
	p.LongPause = k
	if len(p.Handlers) > 0 {
		// The driver gets the first halt.
		p.Handlers[0] = HandlerHuman
	}
	if k == LongPauseCancel {
		for _, node := range []string{"Research", "Plan"} {
			g.tags++
			c := Call{Kind: KindActivity, Node: node, Tag: fmt.Sprintf("t%d", g.tags), Output: node + " cleanup output"}
			p.Cleanup = append(p.Cleanup, Step{Call: &c})
		}
	}
}

// stalledLoopRounds is how many rounds the stalled loop of a runtime plan
// makes: enough to halt (RepeatThreshold rounds, or with a warning first
// twice the tight profile's 2) and to go on after the halt.
const stalledLoopRounds = 6

// stalledLoop is a Research→Plan loop whose every round returns the same
// results: the guard halts it (identical_output) while its cycle's
// runtime is running, and its next call, once resumed, is the one a guard
// charging the halt handler's time would halt on cycle_runtime.
func (g *gen) stalledLoop() []Step {
	var steps []Step
	for range stalledLoopRounds {
		for _, node := range []string{"Research", "Plan"} {
			g.tags++
			c := Call{Kind: KindActivity, Node: node, Tag: fmt.Sprintf("t%d", g.tags), Output: node + " stalled output"}
			steps = append(steps, Step{Call: &c})
		}
	}
	return steps
}

// outputMode is how a node's results repeat.
type outputMode int

const (
	modeVary      outputMode = iota // a new output each call
	modeRepeat                      // the same output every call: a stall
	modeAlternate                   // two outputs in turn: an oscillation
	modeError                       // the same error every call
	modeMixed                       // any of the above, call by call
	numModes
)

// gen is the generator's state: the seeded source, the features on, and
// per node its output mode and call count. Maps are only indexed, never
// ranged over, so the plan does not depend on map order.
type gen struct {
	r     *rand.Rand
	fs    Features
	tags  int
	modes map[string]outputMode
	count map[string]int
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// steps generates about n steps at nesting depth (a loop block counts as
// one).
func (g *gen) steps(n, depth int) []Step {
	type choice struct {
		weight int
		make   func() []Step
	}
	choices := []choice{
		{6, func() []Step { c := g.call(true); return []Step{{Call: &c}} }},
		{4, g.loop},
	}
	if g.fs.Has(FeatParallel) && depth < 2 {
		choices = append(choices, choice{2, func() []Step {
			branches := make([][]Step, 2+g.r.IntN(2))
			for i := range branches {
				branches[i] = g.steps(1+g.r.IntN(3), depth+1)
			}
			return []Step{{Parallel: branches}}
		}})
	}
	if g.fs.Has(FeatTimer) {
		choices = append(choices, choice{1, func() []Step { return []Step{{SleepMs: 10 + g.r.IntN(190)}} }})
	}
	if g.fs.Has(FeatSelect) {
		choices = append(choices, choice{2, func() []Step { return []Step{{Select: g.selectStep()}} }})
	}
	if g.fs.Has(FeatOwnSignal) {
		choices = append(choices, choice{1, func() []Step {
			g.tags++
			return []Step{{Wait: &Wait{Signal: g.pick(OwnSignals), Tag: fmt.Sprintf("t%d", g.tags), TimeoutMs: 8000}}}
		}})
	}
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	var steps []Step
	for i := 0; i < n; i++ {
		w := g.r.IntN(total)
		for _, c := range choices {
			if w < c.weight {
				steps = append(steps, c.make()...)
				break
			}
			w -= c.weight
		}
	}
	return steps
}

// loop is an agent loop: a pattern of one to three calls (coder, verifier,
// ...) repeated two to six times, each call's result after its node's mode.
// With selectchild, a child call of the pattern may be read through a
// Selector each time, as a supervisor racing sub-agents would.
func (g *gen) loop() []Step {
	pattern := make([]Call, 1+g.r.IntN(3))
	viaSelect := make([]bool, len(pattern))
	for i := range pattern {
		pattern[i] = g.call(true)
		viaSelect[i] = pattern[i].Kind == KindChild && g.fs.Has(FeatSelect) && g.fs.Has(FeatSelectChild) && g.r.IntN(2) == 0
	}
	steps := []Step{}
	for rep := 2 + g.r.IntN(5); rep > 0; rep-- {
		for i, t := range pattern {
			c := g.callOf(t.Kind, t.Node)
			if viaSelect[i] {
				steps = append(steps, Step{Select: &Select{Calls: []Call{c}, Picks: 1}})
				continue
			}
			steps = append(steps, Step{Call: &c})
		}
	}
	return steps
}

func (g *gen) selectStep() *Select {
	s := &Select{}
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		c := g.call(g.fs.Has(FeatSelectChild))
		c.DelayMs = g.r.IntN(300)
		s.Calls = append(s.Calls, c)
	}
	if g.r.IntN(2) == 0 {
		s.TimerMs = 20 + g.r.IntN(180)
	}
	futures := len(s.Calls)
	if s.TimerMs > 0 {
		futures++
	}
	s.Picks = 1 + g.r.IntN(futures)
	return s
}

// call generates one call; allowChild lets it be a child workflow call.
func (g *gen) call(allowChild bool) Call {
	kinds := []CallKind{KindActivity, KindActivity, KindActivity}
	if g.fs.Has(FeatLocal) {
		kinds = append(kinds, KindLocal)
	}
	if g.fs.Has(FeatChild) && allowChild {
		kinds = append(kinds, KindChild)
	}
	kind := kinds[g.r.IntN(len(kinds))]
	nodes := map[CallKind][]string{KindActivity: ActivityNodes, KindLocal: LocalNodes, KindChild: ChildNodes}[kind]
	return g.callOf(kind, g.pick(nodes))
}

// callOf generates a call of the given kind and node.
func (g *gen) callOf(kind CallKind, node string) Call {
	c := Call{Kind: kind, Node: node}
	if kind == KindChild {
		c.Child = g.childProgram()
	}
	g.tags++
	c.Tag = fmt.Sprintf("t%d", g.tags)
	if c.Kind != KindChild {
		g.result(&c)
	}
	if g.r.IntN(4) == 0 {
		c.DelayMs = g.r.IntN(100)
	}
	return c
}

// childProgram is a child workflow's calls: a short loop of activities.
func (g *gen) childProgram() []Step {
	var steps []Step
	node := g.pick(ActivityNodes)
	for n := 1 + g.r.IntN(5); n > 0; n-- {
		if g.r.IntN(3) == 0 {
			node = g.pick(ActivityNodes)
		}
		g.tags++
		c := Call{Kind: KindActivity, Node: node, Tag: fmt.Sprintf("t%d", g.tags)}
		g.result(&c)
		steps = append(steps, Step{Call: &c})
	}
	return steps
}

// activity generates a plain activity call.
func (g *gen) activity() Call {
	g.tags++
	c := Call{Kind: KindActivity, Node: g.pick(ActivityNodes), Tag: fmt.Sprintf("t%d", g.tags)}
	g.result(&c)
	return c
}

// result sets a call's output or error after its node's mode.
func (g *gen) result(c *Call) {
	mode, ok := g.modes[c.Node]
	if !ok {
		mode = outputMode(g.r.IntN(int(numModes)))
		g.modes[c.Node] = mode
	}
	if mode == modeMixed {
		mode = outputMode(g.r.IntN(int(modeMixed)))
	}
	g.count[c.Node]++
	n := g.count[c.Node]
	if g.fs.Has(FeatNonFinite) && mode != modeError && g.r.IntN(3) == 0 {
		// A metric the ResultHook reports (see MetricHook): a converging
		// value, or one user code gets wrong.
		c.Output = MetricPrefix + g.pick([]string{"NaN", "+Inf", "-Inf", "1e999", fmt.Sprint(10 - n), "0"})
		return
	}
	switch mode {
	case modeVary:
		c.Output = fmt.Sprintf("%s output %d", c.Node, n)
	case modeRepeat:
		c.Output = c.Node + " same output"
	case modeAlternate:
		c.Output = fmt.Sprintf("%s output %c", c.Node, 'A'+rune(n%2))
	case modeError:
		c.Err = c.Node + " failed: same error"
	}
}
