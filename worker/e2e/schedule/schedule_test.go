package schedule_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// DefaultFeatures are the features `go test` runs: all of them
// (docs/schedule-test.md).
const DefaultFeatures = "all"

var (
	flagN        = flag.Int("schedule.n", 8, "randomized schedule test: number of seeds to run")
	flagSeed     = flag.Int64("schedule.seed", 1, "randomized schedule test: first seed")
	flagSeeds    = flag.String("schedule.seeds", "", "randomized schedule test: comma-separated seeds to run instead of -schedule.n from -schedule.seed")
	flagFeatures = flag.String("schedule.features", DefaultFeatures, "randomized schedule test: features to generate (all, base, or a comma list; -name takes one off)")
	flagParallel = flag.Int("schedule.parallel", 6, "randomized schedule test: workflows run at once")
	flagBound    = flag.Duration("schedule.bound", 20*time.Second, "randomized schedule test: how long a workflow may stand still (no change in its progress or guard status, or its children's) before it counts as stuck")
	flagDump     = flag.String("schedule.dump", "", "randomized schedule test: write the histories of failing runs to this directory")
	flagReport   = flag.String("schedule.report", "", "randomized schedule test: write a JSON summary of the failures to this file")
)

// TestRandomizedSchedule generates a plan per seed, runs them all on one
// embedded server, a few at a time, with a driver answering every halt and
// sending the planned input, and checks the invariants on every run (see
// the package doc). A failing seed is printed with its plan and the command
// that re-runs it.
func TestRandomizedSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	fs, err := schedule.ParseFeatures(*flagFeatures)
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedList()
	if err != nil {
		t.Fatal(err)
	}
	plans := make([]schedule.Plan, len(seeds))
	for i, s := range seeds {
		plans[i] = schedule.Generate(s, fs)
		if err := plans[i].Validate(fs); err != nil {
			t.Fatalf("seed %d: the generator made an invalid plan: %v\n%s", s, err, plans[i].JSON())
		}
	}

	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true, SearchAttributes: map[string]enumspb.IndexedValueType{
		schedule.StateAttribute:       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		schedule.PausedSinceAttribute: enumspb.INDEXED_VALUE_TYPE_DATETIME,
	}, DynamicConfig: map[string]any{
		// One partition per task queue, as the server gives its own
		// queues that one worker serves: with four, a run's first
		// workflow task once stayed scheduled and never started for 20 s
		// (seed 96400 of a 600-seed run) while the queue's other runs went
		// on, their tasks on sticky queues; the pollers of the normal
		// queue were waiting on other partitions.
		"matching.numTaskqueueReadPartitions":  1,
		"matching.numTaskqueueWritePartitions": 1,
	}})
	h := newHarness(t, srv, *flagBound, fs.Has(schedule.FeatDrift))
	h.dump = *flagDump

	begin := time.Now()
	results := make([]result, len(plans))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, *flagParallel))
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = h.run(p)
		}()
	}
	wg.Wait()

	halts, answers, handled, guided, windowed, runtimeHalts, slowResumes := 0, 0, 0, 0, 0, 0, 0
	var slack []time.Duration
	var live liveness
	for i, r := range results {
		live.add(r)
		slack = append(slack, r.runtimeSlack...)
		halts += r.halts
		answers += r.answers
		handled += r.handlerDecisions
		guided += r.guided
		windowed += r.windowed
		runtimeHalts += r.runtimeHalts
		slowResumes += r.slowResumes
		if len(r.failures) == 0 {
			continue
		}
		var b strings.Builder
		for _, f := range r.failures {
			fmt.Fprintf(&b, "\n  %s: %s", f.Invariant, f.Detail)
		}
		t.Errorf("seed %d (features %s, profile %s, codec %v, size %d) broke %d invariant(s):%s\nplan: %s\nre-run: %s",
			plans[i].Seed, plans[i].Features, plans[i].Profile, plans[i].Codec, plans[i].Size(), len(r.failures), b.String(), plans[i].JSON(), rerun(plans[i]))
	}
	sum := summarize(plans, results)
	t.Logf("randomized schedule: %d seeds, features %s, %d halts answered with %d answers, %d decided by a halt handler, %d guidances delivered, %d halts checked against a reset of their loop, %d runtime halts checked against the loop's unpaused time, %d resumes by a halt handler slower than every runtime budget, %d failing seeds, %s",
		len(plans), fs, halts, answers, handled, guided, windowed, runtimeHalts, slowResumes, sum.FailingSeeds, time.Since(begin).Round(time.Second))
	if len(slack) > 0 {
		slices.Sort(slack)
		t.Logf("  handler-time: bound less charge over %d runtime halts: least %s, median %s, greatest %s (fails below -%s)",
			len(slack), slack[0], slack[len(slack)/2], slack[len(slack)-1], runtimeMargin)
	}
	live.log(t)
	for _, inv := range sum.Invariants {
		t.Logf("  %-28s %4d seeds, smallest %v", inv.Invariant, inv.Seeds, inv.Smallest)
	}
	if *flagReport != "" {
		data, _ := json.MarshalIndent(sum, "", "  ")
		if err := os.WriteFile(*flagReport, data, 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
}

// liveness sums what stuck-halts and paused-time checked over a run.
type liveness struct {
	loops, reached, tripped, halted int
	// fractions are, per halted loop, its calls after the onset over B.
	fractions                []float64
	pausedHalts              int
	takenOff                 map[pauseEnd]int
	warningsHalted, parallel map[int]int // halted loops by Warnings; by calls a round
}

func (l *liveness) add(r result) {
	if l.takenOff == nil {
		l.takenOff, l.warningsHalted, l.parallel = map[pauseEnd]int{}, map[int]int{}, map[int]int{}
	}
	l.pausedHalts += r.pausedHalts
	for end, n := range r.pausesTakenOff {
		l.takenOff[end] += n
	}
	s := r.stuck
	if s.bound == 0 {
		return
	}
	l.loops++
	if s.calls > 0 {
		l.reached++
	}
	if s.tripped {
		l.tripped++
	}
	if s.halted {
		l.halted++
		l.fractions = append(l.fractions, float64(s.after)/float64(s.bound))
		l.warningsHalted[s.warnings]++
		l.parallel[s.perRound]++
	}
}

func (l *liveness) log(t *testing.T) {
	if l.loops > 0 {
		slices.Sort(l.fractions)
		most, median := 0.0, 0.0
		if n := len(l.fractions); n > 0 {
			most, median = l.fractions[n-1], l.fractions[n/2]
		}
		t.Logf("  stuck-halts: %d stuck loops, %d reached, %d tripped, %d halted (calls after the onset over B: median %.2f, most %.2f); halted by Warnings %v, by calls a round %v",
			l.loops, l.reached, l.tripped, l.halted, median, most, l.warningsHalted, l.parallel)
	}
	if l.pausedHalts > 0 {
		t.Logf("  paused-time: %d runtime halts checked, pauses taken off their loops: %d resumed, %d escalated, %d canceled",
			l.pausedHalts, l.takenOff[pauseResumed], l.takenOff[pauseEscalated], l.takenOff[pauseCanceled])
	}
}

func seedList() ([]int64, error) {
	if *flagSeeds != "" {
		var out []int64
		for _, s := range strings.Split(*flagSeeds, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("-schedule.seeds: %w", err)
			}
			out = append(out, n)
		}
		return out, nil
	}
	out := make([]int64, *flagN)
	for i := range out {
		out[i] = *flagSeed + int64(i)
	}
	return out, nil
}

func rerun(p schedule.Plan) string {
	return fmt.Sprintf("go test ./worker/e2e/schedule -run TestRandomizedSchedule -schedule.seeds=%d -schedule.features=%s -v", p.Seed, p.Features)
}

// summary is what the report file holds: per invariant, how many seeds
// broke it and the smallest of them.
type summary struct {
	Features     string          `json:"features"`
	Seeds        int             `json:"seeds"`
	FailingSeeds int             `json:"failingSeeds"`
	Invariants   []invariantStat `json:"invariants"`
}

type invariantStat struct {
	Invariant string  `json:"invariant"`
	Seeds     int     `json:"seeds"`
	Smallest  []int64 `json:"smallest"`
	Example   string  `json:"example"`
}

func summarize(plans []schedule.Plan, results []result) summary {
	s := summary{Seeds: len(plans)}
	if len(plans) > 0 {
		s.Features = plans[0].Features
	}
	type hit struct {
		seed   int64
		size   int
		detail string
	}
	by := map[string][]hit{}
	for i, r := range results {
		if len(r.failures) > 0 {
			s.FailingSeeds++
		}
		seen := map[string]bool{}
		for _, f := range r.failures {
			if seen[f.Invariant] {
				continue
			}
			seen[f.Invariant] = true
			by[f.Invariant] = append(by[f.Invariant], hit{plans[i].Seed, plans[i].Size(), f.Detail})
		}
	}
	for _, inv := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		hits := by[inv]
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].size < hits[b].size })
		st := invariantStat{Invariant: inv, Seeds: len(hits), Example: hits[0].detail}
		for _, h := range hits[:min(5, len(hits))] {
			st.Smallest = append(st.Smallest, h.seed)
		}
		s.Invariants = append(s.Invariants, st)
	}
	return s
}
