package interceptor

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The liveness property (docs/protocol.md, "Liveness"): under any Options
// New accepts, a loop that keeps repeating the same round is halted within
// HaltBound calls of its onset, and again within HaltBound of one more
// warning after any reset; the same shapes making progress are never
// warned or halted. It is checked on the guard's own code, driven as the
// analysis drives it (a Judge: no workflow, microseconds a call), over
// random shapes: periods of 1 to 48 steps, rounds of 1 to 16 parallel
// calls of a node and groups of different nodes started together, results
// completing in any order and read as they come or at the next call,
// progressing prefixes, Warnings 0 to 12, and every reset kind.
//
// go test ./interceptor -run TestLivenessProperty -liveness.n=100000
// runs the count the docs quote.
var (
	livenessN    = flag.Int("liveness.n", 400, "random loop shapes TestLivenessProperty checks")
	livenessSeed = flag.Uint64("liveness.seed", 0, "check only this shape, logging its verdicts")
	livenessFrom = flag.Uint64("liveness.from", 1, "the first shape's seed; the seeds a fix was made on are below 100,001")
)

// loopStep is one step of a round: width parallel calls of one node.
type loopStep struct {
	node  string
	width int
}

// loopShape is a loop's round, as groups of steps started together (a
// group of one is a plain step), and how the workflow runs it.
type loopShape struct {
	groups [][]loopStep
	// prefix rounds make progress before the loop gets stuck.
	prefix int
	// atCompletion reads each result as it comes (the workflow waits in
	// between); otherwise the results are read at the next call, in the
	// order the calls were made.
	atCompletion bool
	opts         Options
	warnings     int
	reset        string // resume, handler, escalate
	seed         uint64
}

func (s loopShape) callsPerRound() int {
	c := 0
	for _, g := range s.groups {
		for _, st := range g {
			c += st.width
		}
	}
	return c
}

func (s loopShape) steps() int {
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

func (s loopShape) String() string {
	var b strings.Builder
	for i, g := range s.groups {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("[")
		for j, st := range g {
			if j > 0 {
				b.WriteString("|")
			}
			fmt.Fprintf(&b, "%s×%d", st.node, st.width)
		}
		b.WriteString("]")
	}
	return fmt.Sprintf("round %s, prefix %d, atCompletion %v, Warnings %d, reset %s, grain %q, repeat %d, window %d, seed %d",
		b.String(), s.prefix, s.atCompletion, s.warnings, s.reset, s.opts.Grain, s.opts.RepeatThreshold, s.opts.Window, s.seed)
}

// randomShape draws a loop shape.
func randomShape(r *rand.Rand, seed uint64) loopShape {
	s := loopShape{seed: seed, prefix: r.IntN(6), atCompletion: r.IntN(2) == 0, warnings: r.IntN(13)}
	s.reset = [...]string{"resume", "handler", "escalate"}[r.IntN(3)]
	// Periods mostly short, as agents' are, up to the detectors' bound.
	var period int
	switch x := r.IntN(20); {
	case x < 14:
		period = 1 + r.IntN(6)
	case x < 19:
		period = 7 + r.IntN(10)
	default:
		period = 17 + r.IntN(detect.MaxLoopPeriod-16)
	}
	pool := 1 + r.IntN(min(period, 6))
	budget := 64 // calls a round, so that a shape runs in milliseconds
	for left := period; left > 0; {
		size := 1
		if pool > 1 && r.IntN(4) == 0 {
			size = min(2+r.IntN(2), left, pool)
		}
		var g []loopStep
		used := map[string]bool{}
		for len(g) < size {
			node := fmt.Sprintf("N%d", r.IntN(pool))
			if used[node] {
				if len(used) == pool {
					break
				}
				continue
			}
			used[node] = true
			w := 1
			if r.IntN(3) == 0 {
				w = 1 + r.IntN(16)
			}
			w = max(1, min(w, budget/period))
			g = append(g, loopStep{node: node, width: w})
		}
		s.groups = append(s.groups, g)
		left -= len(g)
	}
	if r.IntN(2) == 0 {
		s.opts.Grain = GrainToolCall
	}
	if r.IntN(3) == 0 {
		s.opts.RepeatThreshold = 2 + r.IntN(3)
	}
	if r.IntN(3) == 0 {
		s.opts.Window = 8 + r.IntN(25)
	}
	s.opts.Warnings = s.warnings
	return s
}

// loopRun drives a Judge through a shape's rounds.
type loopRun struct {
	t     *testing.T
	shape loopShape
	j     *judge
	rng   *rand.Rand
	now   time.Time
	calls int
	// halts are the calls the guard halted, warnings those it warned.
	halts, warnings []int
	haltReasons     []detect.Reason
	stuck           bool
	fresh           int
}

var livenessDC = converter.GetDefaultDataConverter()

func newLoopRun(t *testing.T, s loopShape, opts Options, stuck bool) (*loopRun, error) {
	j, err := newJudge(opts)
	if err != nil {
		return nil, err
	}
	j.recorded = true // halts wait for the decisions this driver gives
	info := &workflow.Info{}
	info.WorkflowType.Name = "Agent"
	info.WorkflowExecution.ID, info.WorkflowExecution.RunID = "agent", "run"
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j.Start(info, now)
	return &loopRun{t: t, shape: s, j: j, rng: rand.New(rand.NewPCG(s.seed, 7)), now: now, stuck: stuck}, nil
}

// call makes one guarded call of node, answering a halt it meets as the
// shape's reset says and making the call again, as the workflow would.
func (lr *loopRun) call(node string) int {
	for {
		lr.now = lr.now.Add(time.Second)
		lr.j.Now(lr.now)
		id := lr.j.Call(KindActivity, node, nil)
		for _, v := range lr.j.Verdicts() {
			switch {
			case v.Warning != nil:
				lr.warnings = append(lr.warnings, v.Call)
			case v.Halt != nil:
				lr.halts = append(lr.halts, v.Call)
				lr.haltReasons = append(lr.haltReasons, v.Halt.HaltReason)
			}
		}
		if id >= 0 {
			lr.calls++
			return id
		}
		if !lr.j.Blocked() {
			return -1
		}
		// A human (or the handler) answers an hour later.
		lr.now = lr.now.Add(time.Hour)
		lr.j.Now(lr.now)
		g := &lr.j.g
		switch lr.shape.reset {
		case "resume":
			g.decideSigned(protocol.ActionResume, request{ResumeRequest: protocol.ResumeRequest{By: "ana"}})
		case "handler":
			lr.j.Handled(protocol.ActionResume, "change approach") // as the analysis reads a handler's resume
		case "escalate":
			// The workflow handles LoopEscalated and makes the call again.
			g.decideSigned(protocol.ActionEscalate, request{ResumeRequest: protocol.ResumeRequest{By: "ana"}})
		}
		lr.j.Wake()
	}
}

// round runs one round; round numbers the results when the loop makes
// progress.
func (lr *loopRun) round(round int) {
	for _, g := range lr.shape.groups {
		type inFlight struct {
			id     int
			result string
		}
		var flying []inFlight
		for _, st := range g {
			for i := range st.width {
				res := fmt.Sprintf("%s result %d", st.node, i)
				if !lr.stuck || round < lr.shape.prefix {
					// New information at every call: a file not seen
					// before, named in letters (a number after "round"
					// is a step counter, which canonical reading rightly
					// masks).
					lr.fresh++
					res = fmt.Sprintf("%s result %d: found %s.go", st.node, i, letters(lr.fresh))
				}
				flying = append(flying, inFlight{lr.call(st.node), res})
			}
		}
		lr.rng.Shuffle(len(flying), func(a, b int) { flying[a], flying[b] = flying[b], flying[a] })
		for _, f := range flying {
			if f.id < 0 {
				continue
			}
			p, _ := livenessDC.ToPayloads(f.result)
			lr.j.Result(f.id, p, nil, livenessDC)
			if lr.shape.atCompletion {
				lr.now = lr.now.Add(time.Second)
				lr.j.Now(lr.now)
				lr.j.Idle()
			}
		}
	}
}

// letters names n in lowercase letters: a, b, ..., z, ba, bb, ...
func letters(n int) string {
	b := []byte{byte('a' + n%26)}
	for n /= 26; n > 0; n /= 26 {
		b = append([]byte{byte('a' + n%26)}, b...)
	}
	return string(b)
}

// until runs rounds until the run has n halts or made more than calls.
func (lr *loopRun) until(n, calls int) {
	for round := 0; len(lr.halts) < n && lr.calls <= calls; round++ {
		lr.round(round)
	}
}

// TestLivenessProperty checks the liveness bound over random loop shapes.
func TestLivenessProperty(t *testing.T) {
	n := *livenessN
	if testing.Short() {
		n = min(n, 100)
	}
	var violations, progressHalted, shapes int
	var worst float64
	byReason := map[detect.Reason]int{}
	fail := func(s loopShape, format string, args ...any) {
		violations++
		if violations <= 10 {
			t.Errorf("%s: %s", s, fmt.Sprintf(format, args...))
		}
	}
	first := *livenessFrom
	if *livenessSeed > 0 {
		first, n = *livenessSeed, 1
	}
	for i := range n {
		seed := first + uint64(i)
		s := randomShape(rand.New(rand.NewPCG(seed, 1)), seed)
		c := s.callsPerRound()
		bound, err := HaltBound(s.opts, c)
		if err != nil {
			t.Fatalf("%s: HaltBound: %v", s, err)
		}
		next, _ := HaltBound(Options{Grain: s.opts.Grain, RepeatThreshold: s.opts.RepeatThreshold, Window: s.opts.Window, Warnings: s.warnings + 1}, c)
		shapes++

		// The onset: where the guard without warnings halts the loop.
		none := s.opts
		none.Warnings = 0
		base, err := newLoopRun(t, s, none, true)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		base.until(1, 5000)
		if len(base.halts) == 0 {
			fail(s, "never halted without warnings in %d calls", base.calls)
			continue
		}
		onset := base.halts[0]

		// With the shape's warnings: halted within the bound, then again
		// within the bound of one more warning after the reset.
		lr, _ := newLoopRun(t, s, s.opts, true)
		lr.until(2, onset+bound+next+c)
		if *livenessSeed > 0 {
			t.Logf("%s: onset %d, bound %d; warnings at %v, halts at %v %v", s, onset, bound, lr.warnings, lr.halts, lr.haltReasons)
		}
		switch {
		case len(lr.halts) == 0:
			fail(s, "onset at call %d, not halted in %d calls (bound %d)", onset, lr.calls, bound)
			continue
		case lr.halts[0] > onset+bound:
			fail(s, "onset at call %d, halted at %d: %d calls, bound %d", onset, lr.halts[0], lr.halts[0]-onset, bound)
		case len(lr.halts) < 2:
			fail(s, "after the %s of the halt at call %d, not halted again in %d calls (bound %d)", s.reset, lr.halts[0], lr.calls-lr.halts[0], next)
		case lr.halts[1] > lr.halts[0]+next:
			fail(s, "after the %s of the halt at call %d, halted again at %d: bound %d", s.reset, lr.halts[0], lr.halts[1], next)
		}
		if first := lr.halts[0]; len(lr.warnings) > 0 && min(first, lr.warnings[0]) != onset || len(lr.warnings) == 0 && first != onset {
			fail(s, "first warning or halt at call %d, the onset is %d", min(first, append(lr.warnings, first)[0]), onset)
		}
		worst = max(worst, float64(lr.halts[0]-onset)/float64(bound))
		byReason[lr.haltReasons[0]]++

		// The same shape making progress, with budgets out of the way: no
		// warning, no halt.
		prog := s.opts
		prog.MaxCallsPerNode, prog.MaxCycleIterations, prog.MaxTotalCalls = 1<<20, 1<<20, 1<<20
		pr, _ := newLoopRun(t, s, prog, false)
		pr.until(1, 40*c)
		if len(pr.halts) > 0 || len(pr.warnings) > 0 {
			progressHalted++
			if progressHalted <= 10 {
				t.Errorf("%s: a progressing run was warned at %v, halted at %v (%v)", s, pr.warnings, pr.halts, pr.haltReasons)
			}
		}
	}
	t.Logf("%d shapes: %d violations of the bound, %d progressing runs warned or halted; the worst halt came %.0f%% of the bound after its onset; first halts by reason %v",
		shapes, violations, progressHalted, 100*worst, byReason)
}
