package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/internal/traces"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// realTraces is the development corpus of real agent traces.
const realTraces = "../../interceptor/detect/testdata/real"

// analysisEvery picks the traces TestAnalysisAgreesWithLiveGuard runs:
// every Nth of the development corpus.
var analysisEvery = flag.Int("analysis.every", 20, "TestAnalysisAgreesWithLiveGuard runs every Nth trace of the corpus (1: all)")

// TestAnalysisAgreesWithLiveGuard: traces of the development corpus run
// on the embedded server without the guard, exported and analysed, give
// the warnings and halts, call for call, that the guard gives when the
// same traces run with it (OnHalt observe, so that both runs make the
// same calls).
func TestAnalysisAgreesWithLiveGuard(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	all, err := traces.Load(realTraces)
	require.NoError(t, err)
	// A modest, fixed sample: every 20th trace, loops and progressing
	// runs; -analysis.every=1 runs the whole corpus.
	var sample []traces.Trace
	for i := 0; i < len(all); i += max(*analysisEvery, 1) {
		sample = append(sample, all[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(sample))*20*time.Second+2*time.Minute)
	defer cancel()
	nodes := traces.Nodes(sample)
	queue := queueFor(t)
	register := func(r worker.Registry) { traces.Register(r, nodes) }
	testsuite.StartWorker(t, c, queue+"-plain", testsuite.WorkerOptions{Register: register})
	analyzers := make([]*testsuite.Analyzer, len(agreementOptions))
	for k := range agreementOptions {
		testsuite.StartWorker(t, c, fmt.Sprintf("%s-guarded%d", queue, k), testsuite.WorkerOptions{Guard: &agreementOptions[k], Register: register})
		analyzers[k], err = testsuite.NewAnalyzer(testsuite.AnalyzeOptions{Guard: agreementOptions[k]})
		require.NoError(t, err)
	}

	verdicts := 0
	for i, tr := range sample {
		id := fmt.Sprintf("%s-%d", queue, i)
		// The runs side by side: the same calls, without the guard and
		// with it under each options.
		runs := make([]string, 1+len(agreementOptions))
		errs := make([]error, len(runs))
		var wg sync.WaitGroup
		for k := range runs {
			q := queue + "-plain"
			if k > 0 {
				q = fmt.Sprintf("%s-guarded%d", queue, k-1)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[k], errs[k] = traces.Run(ctx, c, q, fmt.Sprintf("%s-%d", id, k), tr)
			}()
		}
		wg.Wait()
		for k := range runs {
			require.NoError(t, errs[k], tr.Name)
		}
		plain := exportHistory(t, ctx, c, id+"-0", runs[0])
		for k, a := range analyzers {
			ex := a.History(plain, tr.Name)
			require.NoError(t, ex.Err)
			require.Empty(t, ex.Problems, tr.Name)
			require.Equal(t, tr.Calls(), len(ex.Calls), "%s: every call judged", tr.Name)
			got := verdictLines(ex)
			want := liveVerdicts(t, exportHistory(t, ctx, c, fmt.Sprintf("%s-%d", id, k+1), runs[k+1]))
			require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "%s, options %d: analysis and live guard disagree", tr.Name, k)
			verdicts += len(got)
		}
	}
	t.Logf("%d traces, %d calls, %d warnings and halts under %d options: all agree", len(sample), analyzers[0].Summary().Calls, verdicts, len(analyzers))
	require.NotZero(t, verdicts, "the sample has loops the guard warns about or halts")
}

// agreementOptions are the guard's options in the agreement test, each
// with OnHalt observe, so that the guarded run makes the calls the plain
// one did: tool call grain (the traces are LLM↔tool loops) with one
// warning before a halt; and the zero Options, whose agent-turn budgets
// halt these runs again and again.
var agreementOptions = []interceptor.Options{
	{Grain: interceptor.GrainToolCall, Warnings: 1, OnHalt: protocol.OnHaltObserve, Workflows: []string{traces.WorkflowType}},
	{OnHalt: protocol.OnHaltObserve},
}

func verdictLines(ex testsuite.Execution) []string {
	var out []string
	for _, v := range ex.Verdicts {
		if v.Warning != nil {
			out = append(out, warningLine(v.Call, *v.Warning))
		} else {
			out = append(out, haltLine(v.Call, *v.Halt))
		}
	}
	return out
}

func warningLine(call int, w protocol.Warning) string {
	return fmt.Sprintf("call %d: warning %d/%d %s/%s@%s", call, w.N, w.Of, w.Reason, w.Detector, w.Node)
}

func haltLine(call int, h protocol.HaltEvent) string {
	return fmt.Sprintf("call %d: halt %d %s/%s@%s loop %d/%d, %d unheeded warnings", call, h.Seq, h.HaltReason, h.Detector, h.Node, h.Iteration, h.MaxIterations, len(h.Warnings))
}

// liveVerdicts reads what the guard did from a guarded history: a
// warning first shows in the notice of the call it was issued at, and a
// halt's loop.halted local activity runs before the call it met. Calls of
// the activity types unguarded (a halt handler's) are not counted.
func liveVerdicts(t *testing.T, h *historypb.History, unguarded ...string) []string {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	var out []string
	calls, halts := 0, 0
	seen := map[string]bool{}
	var echoes []protocol.HaltEvent
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == protocol.DefaultHaltedSignal {
			var ev protocol.HaltEvent
			require.NoError(t, dc.FromPayloads(a.GetInput(), &ev))
			echoes = append(echoes, ev)
		}
	}
	for _, e := range h.GetEvents() {
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "LocalActivity" {
			require.Less(t, halts, len(echoes), "a loop.halted for each halt")
			out = append(out, haltLine(calls+1, echoes[halts]))
			halts++
			clear(seen) // the halt answered the warnings in force
		}
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil || slices.Contains(unguarded, a.GetActivityType().GetName()) {
			continue
		}
		calls++
		if p := a.GetHeader().GetFields()[protocol.NoticeHeader]; p != nil {
			var n protocol.Notice
			require.NoError(t, dc.FromPayload(p, &n))
			if w := n.Warning; w != nil {
				if k := warningLine(0, *w); !seen[k] {
					seen[k] = true
					out = append(out, warningLine(calls, *w))
				}
			}
		}
	}
	require.Equal(t, len(echoes), halts)
	return out
}

// TestAnalysisFollowsTheHaltHandler: a guarded loop whose halt handler
// (a Review call, then a decision) decides each of its halts, exported
// and analysed as recorded, gives the live guard's halts at the same
// calls, each with the decision that ended it, and judges every guarded
// call (issue 30: the analysis stopped at the first halt a handler
// decided, judging 5 of 16 calls). The handler resumes three times;
// resumes, escalates (the loop goes on) and resumes, after a call or at
// once (in the workflow task that raised the halt); or sleeps before it
// resumes (its timer is not the pause timeout's); or hands the first
// halt over, to a human who resumes, to the pause timeout, or to a
// cancellation.
func TestAnalysisFollowsTheHaltHandler(t *testing.T) {
	t.Parallel()
	c := devtest.NewClient(t, sharedServer(t))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	resume, escalate, handOver := protocol.ActionResume, protocol.ActionEscalate, protocol.Action("")
	byHandler, byHuman, byGuard := " by "+interceptor.HandlerBy, " by e2e", " by loopguard"
	human := func(id string) {
		waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted && !s.Handling })
		require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultResumeSignal, protocol.ResumeRequest{By: "e2e", Reason: "go on"}))
	}
	cancelPaused := func(id string) {
		waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateHalted && !s.Handling })
		require.NoError(t, c.CancelWorkflow(ctx, id, ""))
	}
	for _, tc := range []struct {
		name      string
		opts      interceptor.Options
		decisions []protocol.Action
		how       scripted.Handling
		answer    func(id string)
		want      []string // each halt's decision
	}{
		{name: "resumes", decisions: []protocol.Action{resume, resume, resume},
			want: []string{"resume" + byHandler, "resume" + byHandler, "resume" + byHandler}},
		{name: "at once", decisions: []protocol.Action{resume, escalate, resume}, how: scripted.Handling{AtOnce: true},
			want: []string{"resume" + byHandler, "escalate" + byHandler, "resume" + byHandler}},
		{name: "escalates", decisions: []protocol.Action{resume, escalate, resume},
			want: []string{"resume" + byHandler, "escalate" + byHandler, "resume" + byHandler}},
		{name: "handler sleeps", opts: interceptor.Options{PauseTimeout: time.Minute},
			decisions: []protocol.Action{resume, resume, resume}, how: scripted.Handling{Sleep: 500 * time.Millisecond},
			want: []string{"resume" + byHandler, "resume" + byHandler, "resume" + byHandler}},
		{name: "human", decisions: []protocol.Action{handOver, resume, resume}, answer: human,
			want: []string{"resume" + byHuman, "resume" + byHandler, "resume" + byHandler}},
		{name: "timeout", opts: interceptor.Options{PauseTimeout: time.Second, OnPauseTimeout: interceptor.TimeoutResume},
			decisions: []protocol.Action{handOver, resume, resume},
			want:      []string{"resume" + byGuard, "resume" + byHandler, "resume" + byHandler}},
		{name: "canceled", decisions: []protocol.Action{handOver}, answer: cancelPaused,
			want: []string{"cancel" + byGuard}},
	} {
		queue := queueFor(t) + "-" + strings.ReplaceAll(tc.name, " ", "-")
		testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Guard: &tc.opts, Register: scripted.Register})
		id := queue + "-wf"
		run := startScripted(t, ctx, c, queue, id, scripted.HandledLoop, repeat(handledTurns, "Code", "same"), tc.decisions, tc.how)
		if tc.answer != nil {
			tc.answer(id)
		}
		var res scripted.HandledResult
		if err := run.Get(ctx, &res); tc.name != "canceled" {
			require.NoError(t, err, tc.name)
		}
		h := healthyScripted(t, ctx, c, id)
		a, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{AsRecorded: true})
		require.NoError(t, err)
		ex := a.History(h, id)
		require.NoError(t, ex.Err, tc.name)
		require.Empty(t, ex.Problems, tc.name)

		live, calls := liveVerdicts(t, h, scripted.ReviewNode), scheduledCalls(h, scripted.ReviewNode)
		require.Equal(t, strings.Join(live, "\n"), strings.Join(verdictLines(ex), "\n"), "%s: analysis and live guard disagree", tc.name)
		require.Equal(t, calls, len(ex.Calls), "%s: every guarded call judged", tc.name)
		require.NotContains(t, ex.Calls, scripted.ReviewNode, tc.name)
		var decided []string
		for _, v := range ex.Verdicts {
			if v.Halt != nil {
				require.NotNil(t, v.Decision, "%s: halt %d decided", tc.name, v.Halt.Seq)
				decided = append(decided, fmt.Sprintf("%s by %s", v.Decision.Action, v.Decision.By))
			}
		}
		require.Equal(t, tc.want, decided, tc.name)
		for _, a := range ex.Recorded.Answers {
			if a.Handler {
				require.NotZero(t, a.HaltSeq, "%s: the handler's decision names its halt", tc.name)
			}
		}
	}
}

// handledTurns is the length of TestAnalysisFollowsTheHaltHandler's loop:
// under the zero Options one Code call repeating itself is halted three
// times in it (at calls 4, 7 and 9).
const handledTurns = 10

// scheduledCalls counts the activities a history schedules, but for those
// of the types unguarded.
func scheduledCalls(h *historypb.History, unguarded ...string) int {
	n := 0
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && !slices.Contains(unguarded, a.GetActivityType().GetName()) {
			n++
		}
	}
	return n
}
