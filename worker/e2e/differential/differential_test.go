package differential_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

var (
	flagN        = flag.Int("differential.n", 40, "shapes to run, from -differential.seed")
	flagSeed     = flag.Int64("differential.seed", 1, "first seed")
	flagSeeds    = flag.String("differential.seeds", "", "comma-separated seeds, instead of -differential.n and -differential.seed")
	flagFeatures = flag.String("differential.features", "passing", "all, passing, or a comma list; -name takes one off")
	flagParallel = flag.Int("differential.parallel", 8, "shapes running at once on the one server")
	flagTimeout  = flag.Duration("differential.timeout", 3*time.Minute, "how long one shape may take, its reset run included")
	flagDump     = flag.String("differential.dump", "", "write the histories of disagreeing shapes here")
)

// TestDifferential: every shape runs live under the guard on the embedded
// server, a driver answering its halts; then the analysis of its histories
// as recorded (what `worker analyze --as-recorded` runs) must give the
// live guard's verdicts call for call: each warning (its call, n of N,
// reason, detector, node), each halt (its call, seq, reason, detector,
// node, loop n/N) and each halt's decision (action, by, key, guidance),
// and refuse the answers the guard refused.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	features, err := differential.ParseFeatures(*flagFeatures)
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedList()
	if err != nil {
		t.Fatal(err)
	}
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
	c := devtest.NewClient(t, srv)
	w := &workers{t: t, c: c, started: map[string]bool{}}

	var mu sync.Mutex
	var bad []string
	causes := map[string]int{}
	shapes, verdicts, fallbacks := 0, 0, 0
	var unfinished, unechoed []int64
	sem := make(chan struct{}, max(*flagParallel, 1))
	var wg sync.WaitGroup
	start := time.Now()
	for _, seed := range seeds {
		p := differential.Generate(seed, features)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			o := run(w, p)
			mu.Lock()
			defer mu.Unlock()
			shapes++
			if shapes%50 == 0 {
				t.Logf("%d shapes in %s, %d disagreements", shapes, time.Since(start).Round(time.Second), len(bad))
			}
			verdicts += o.verdicts
			fallbacks += o.fallbacks
			switch {
			case o.unfinished:
				unfinished = append(unfinished, seed)
			case o.unechoed:
				unechoed = append(unechoed, seed)
				t.Logf("seed %d not judged: %s", seed, o.problem)
			case o.problem != "":
				plan, _ := json.Marshal(p)
				bad = append(bad, fmt.Sprintf("seed %d (%s): %s\nshape: %s", seed, cause(p), o.problem, plan))
				causes[cause(p)]++
				// Said at once, so that a long run's findings can be
				// triaged while it goes on.
				t.Logf("seed %d disagrees (%s)", seed, cause(p))
				if *flagDump != "" && os.MkdirAll(*flagDump, 0o755) == nil {
					for i, h := range o.histories {
						_ = testsuite.WriteHistoryFile(filepath.Join(*flagDump, fmt.Sprintf("seed-%d-%d.json", seed, i)), h)
					}
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d shapes (features %v), %d verdicts compared, %d answers sent again after a refusal, %d disagreements in %s; %d unfinished in -differential.timeout (not judged): %v; %d with a loop.halted the guard could not send (not judged): %v",
		shapes, features, verdicts, fallbacks, len(bad), time.Since(start).Round(time.Second), len(unfinished), unfinished, len(unechoed), unechoed)
	if len(unfinished)+len(unechoed) == shapes {
		t.Error("no shape finished in -differential.timeout")
	}
	if len(bad) > 0 {
		t.Logf("disagreements by the known causes the shapes held: %v", causes)
		sort.Strings(bad)
		for _, b := range bad[:min(len(bad), 20)] {
			t.Error(b)
		}
	}
}

// cause names the known defects a shape can meet (the Known features it
// uses), "" for none: a disagreement then is a new bug.
func cause(p differential.Plan) string {
	var out []string
	if p.Keys {
		for _, a := range p.Answers {
			if a.Signed && !a.Update {
				out = append(out, string(differential.SignedSignal))
				break
			}
		}
		if p.HaltAfter > 0 && !slices.Contains(out, string(differential.SignedSignal)) {
			out = append(out, string(differential.SignedSignal))
		}
		if p.ResetAt > 0 {
			out = append(out, string(differential.ResetSigned))
		}
	}
	if p.Warnings > 0 {
		out = append(out, string(differential.Warn))
	}
	if p.ResetAt > 0 && !p.Keys {
		out = append(out, string(differential.Reset))
	}
	var timers func(steps []differential.Step)
	timers = func(steps []differential.Step) {
		for _, s := range steps {
			switch {
			case s.Kind == differential.KindTimer && (s.API == differential.NewTimerWithOptions || s.API == differential.AwaitWithOptionsName):
				if !slices.Contains(out, string(differential.TimerOptions)) {
					out = append(out, string(differential.TimerOptions))
				}
			case s.Kind == differential.KindTimer && (s.Duration <= 0 || s.Ready):
				if !slices.Contains(out, string(differential.TimerUnwritten)) {
					out = append(out, string(differential.TimerUnwritten))
				}
			}
			for _, b := range s.Branches {
				timers(b)
			}
		}
	}
	for _, r := range p.Runs {
		timers(r)
	}
	if len(out) == 0 {
		return "none known"
	}
	sort.Strings(out)
	return strings.Join(out, "+")
}

func seedList() ([]int64, error) {
	if *flagSeeds != "" {
		var out []int64
		for _, s := range strings.Split(*flagSeeds, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("-differential.seeds: %w", err)
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

// workers starts one guarded worker per guard options a plan needs.
type workers struct {
	t       *testing.T
	c       client.Client
	mu      sync.Mutex
	started map[string]bool
}

func guardOptions(p differential.Plan) interceptor.Options {
	o := interceptor.Options{Warnings: p.Warnings}
	if p.Keys {
		o.OperatorKeys = []interceptor.OperatorKey{{ID: keyID, PublicKey: operatorKey.Public().(ed25519.PublicKey)}}
	}
	return o
}

func (w *workers) queue(p differential.Plan) string {
	q := fmt.Sprintf("differential-w%d-keys%v", p.Warnings, p.Keys)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started[q] {
		w.started[q] = true
		o := guardOptions(p)
		// The recorder (recorder_test.go) comes before the guard: the
		// SDK wraps the outbound calls in the list's order, so the
		// recorder's outbound is the guard's next.
		testsuite.StartWorker(w.t, w.c, q, testsuite.WorkerOptions{Guard: &o, Register: differential.Register,
			Options: worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{&recorder{}}}})
	}
	return q
}

// outcome is what one shape gave.
type outcome struct {
	problem string
	// unfinished: the shape ran out of -differential.timeout while it
	// still made progress (a long shape on a loaded machine); not judged.
	unfinished bool
	// unechoed: a live halt's loop.halted could not be sent
	// (unechoedError); not judged.
	unechoed  bool
	verdicts  int
	fallbacks int
	histories []*historypb.History
}

// run runs p live, then compares.
func run(w *workers, p differential.Plan) (o outcome) {
	ctx, cancel := context.WithTimeout(context.Background(), *flagTimeout)
	defer cancel()
	id := fmt.Sprintf("differential-%d", p.Seed)
	first, err := w.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: w.queue(p),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING}, differential.WorkflowName, p, 0)
	if err != nil {
		return outcome{problem: fmt.Sprintf("start: %v", err)}
	}
	d := newDriver(w.c, p, id)
	ictx, icancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	d.input(ictx, &wg)
	last, err := d.drive(ctx)
	icancel()
	wg.Wait()
	defer func() { o.fallbacks = d.fallbacks }()
	if err != nil {
		h := exportQuick(w.c, id, "")
		_ = w.c.TerminateWorkflow(context.Background(), id, "", "differential: "+err.Error())
		return outcome{problem: "drive: " + err.Error(), histories: []*historypb.History{h}, unfinished: ctx.Err() != nil}
	}
	chain, err := runChain(ctx, w.c, id, first.GetRunID(), last)
	if err != nil {
		// An export the shape's time ran out in (a loaded machine) is
		// unfinished, as a drive that ran out is (seed 109404 in a long
		// run, three test binaries at once), and so is one whose RPC ran
		// out of its own time (seed 19 in go test ./... beside a long
		// run: the SDK bounds each history page's request).
		return outcome{problem: err.Error(), unfinished: timedOut(ctx, err)}
	}
	o = compare(d, chain, 0)
	if o.problem != "" || p.ResetAt == 0 {
		return o
	}
	// The reset: the last run, from one of its workflow tasks, goes on.
	reset, err := d.reset(ctx, last, taskEvents(chain[len(chain)-1]))
	if err != nil {
		return outcome{problem: err.Error(), histories: o.histories}
	}
	if _, err := d.drive(ctx); err != nil {
		o.histories = append(o.histories, exportQuick(w.c, id, reset))
		_ = w.c.TerminateWorkflow(context.Background(), id, "", "differential: "+err.Error())
		return outcome{problem: "drive the reset run: " + err.Error(), histories: o.histories, unfinished: ctx.Err() != nil}
	}
	h, err := history.ExportHistory(ctx, w.c, id, reset)
	if err != nil {
		return outcome{problem: err.Error(), unfinished: timedOut(ctx, err)}
	}
	// The reset run continues the chain the last run continued.
	ro := compare(d, append(chain[:len(chain)-1:len(chain)-1], h), 1)
	ro.verdicts += o.verdicts
	if ro.problem != "" {
		ro.problem = "after the reset: " + ro.problem
		ro.histories = append(o.histories, h)
	}
	return ro
}

// timedOut reports whether err is the shape's time, or an RPC's, running
// out: the machine, not the guard or the analysis.
func timedOut(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// runChain exports the runs from first to last, following continue-as-new.
func runChain(ctx context.Context, c client.Client, id, first, last string) ([]*historypb.History, error) {
	var out []*historypb.History
	for run := first; run != ""; {
		h, err := history.ExportHistory(ctx, c, id, run)
		if err != nil {
			return nil, fmt.Errorf("export run %s: %w", run, err)
		}
		out = append(out, h)
		if run == last || len(out) > 10 {
			break
		}
		evs := h.GetEvents()
		run = evs[len(evs)-1].GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
	}
	return out, nil
}

// taskEvents are the WorkflowTaskCompleted events of h.
func taskEvents(h *historypb.History) []int64 {
	var out []int64
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			out = append(out, e.GetEventId())
		}
	}
	return out
}

// compare judges chain as recorded and compares with what the guard did.
func compare(d *driver, chain []*historypb.History, phase int) outcome {
	o := outcome{histories: chain}
	a, err := history.NewAnalyzer(history.Options{AsRecorded: true})
	if err != nil {
		return outcome{problem: err.Error()}
	}
	var judged, refusedJudged []string
	for i, h := range chain {
		ex := a.History(h, fmt.Sprintf("run %d", i))
		if ex.Err != nil || len(ex.Problems) > 0 {
			return outcome{problem: fmt.Sprintf("the analysis of run %d: %v %v", i, ex.Err, ex.Problems), histories: chain}
		}
		for _, v := range ex.Verdicts {
			judged = append(judged, verdictLine(v.Call, v.Warning, v.Halt, v.Decision))
		}
		for _, ans := range ex.Recorded.Answers {
			// loop.status lists every refusal only with operators' keys
			// (Status.Refused); the driver reads the live ones there.
			if (ans.Error != "" || ans.Refused != "" && d.p.Keys) && !ans.Update {
				refusedJudged = append(refusedJudged, ans.Name)
			}
		}
	}
	live, err := liveLines(d, chain, phase)
	var ue *unechoedError
	if errors.As(err, &ue) {
		return outcome{problem: err.Error(), unechoed: true, histories: chain}
	}
	if err != nil {
		return outcome{problem: err.Error(), histories: chain}
	}
	var refusedLive []string
	for r := range d.refused {
		if !strings.HasPrefix(r, "update ") {
			refusedLive = append(refusedLive, r[:strings.Index(r, " at ")])
		}
	}
	sort.Strings(refusedLive)
	sort.Strings(refusedJudged)
	o.verdicts = len(live)
	unknownDetectors(live, judged)
	switch {
	case !slices.Equal(live, judged):
		o.problem = fmt.Sprintf("verdicts differ\nlive:\n  %s\nanalysis:\n  %s", strings.Join(live, "\n  "), strings.Join(judged, "\n  "))
	case phase == 0 && !slices.Equal(refusedLive, refusedJudged):
		o.problem = fmt.Sprintf("refused signals differ: live %v (%v), analysis %v", refusedLive, keys(d.refused), refusedJudged)
	}
	return o
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// verdictLine is one verdict, as both sides print it.
func verdictLine(call int, w *protocol.Warning, h *protocol.HaltEvent, dec *protocol.Decision) string {
	if w != nil {
		return fmt.Sprintf("call %d: warning %d/%d %s/%s@%s", call, w.N, w.Of, w.Reason, w.Detector, w.Node)
	}
	s := fmt.Sprintf("call %d: halt %d %s/%s@%s loop %d/%d", call, h.Seq, h.HaltReason, h.Detector, h.Node, h.Iteration, h.MaxIterations)
	if dec != nil {
		s += fmt.Sprintf(" -> %s by %q key %q guidance %q", dec.Action, dec.By, dec.KeyID, dec.Guidance)
	}
	return s
}

// exportQuick exports a run's history for the dump, after its shape's
// time ran out.
func exportQuick(c client.Client, id, run string) *historypb.History {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, _ := history.ExportHistory(ctx, c, id, run)
	return h
}

// unknownDetectors leaves out the analysis's detector of each warning
// whose detector the live reading could not learn: the guard's memo lists
// a warning without it, and a warning no notice or halt carried shows
// none (live_test.go). The rest of the line is compared.
func unknownDetectors(live, judged []string) {
	for i := range min(len(live), len(judged)) {
		at := strings.Index(live[i], "/@")
		if !strings.Contains(live[i], ": warning ") || at < 0 {
			continue
		}
		slash := strings.LastIndex(judged[i][:max(strings.Index(judged[i], "@"), 0)], "/")
		if slash < 0 {
			continue
		}
		if cut := judged[i][:slash+1] + judged[i][strings.Index(judged[i], "@"):]; cut == live[i] {
			judged[i] = cut
		}
	}
}
