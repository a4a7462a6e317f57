package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/workflows"
)

// TestParallelToolAgentOnServer: workflows.ParallelToolAgent, 8 tool calls
// a turn run in parallel, on the real server under the README's options
// (GrainToolCall, Warnings 1). Stuck (one tool, or two a turn), it is
// warned once, then halted within interceptor.HaltBound calls of the
// warning, and a human escalates; heeding the warning, it completes
// unhalted; progressing, it is never warned. The analysis of each guarded
// history, following its recorded decisions, gives the live guard's
// warnings and halt at the same calls, with the same detector and node;
// the analysis of the same run without the guard, under the same options
// (what `worker analyze` does with an unguarded history), gives them too,
// up to the halt. Every history replays with the guard.
//
// With two tools a turn (WebSearch and FetchPage) the live guard's
// verdicts are the same (a warning at call 20 and the halt at call 46),
// and so are the analysis's: it reads a turn's results once all are in,
// as the guard does at its next call, not in the order they came (before,
// it read them at every workflow task without a command, and disagreed
// in 3 runs of 4).
func TestParallelToolAgentOnServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	opts := workflows.ParallelGuardOptions()
	queue := queueFor(t)
	testsuite.StartWorker(t, c, queue, testsuite.WorkerOptions{Guard: &opts, Register: workflows.Register})
	testsuite.StartWorker(t, c, queue+"-plain", testsuite.WorkerOptions{Register: workflows.Register})
	asRecorded, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{Guard: opts, AsRecorded: true})
	require.NoError(t, err)
	unguarded, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{Guard: opts})
	require.NoError(t, err)

	const width = 8
	bound, err := interceptor.HaltBound(opts, width+1) // the model's call and its tool calls
	require.NoError(t, err)
	for _, tt := range []struct {
		scenario string
		mixed    bool
	}{
		{activities.ParallelStuck, false},
		{activities.ParallelStuck, true},
		{activities.ParallelHeeds, false},
		{activities.ParallelProgressing, false},
	} {
		name := tt.scenario
		if tt.mixed {
			name += "-mixed"
		}
		in := workflows.ParallelInput{Scenario: tt.scenario, Width: width, Mixed: tt.mixed, MaxTurns: 50}
		id := queue + "-" + name
		run := start(t, ctx, c, queue, id, workflows.ParallelToolAgent, in)
		if tt.scenario == activities.ParallelStuck {
			_, err := testsuite.WaitStatus(ctx, c, id, testsuite.Halted(1))
			require.NoError(t, err, name)
			require.NoError(t, c.SignalWorkflow(ctx, id, "", protocol.DefaultEscalateSignal, protocol.EscalateRequest{Reason: "stuck", By: "e2e"}))
		}
		var res workflows.ParallelResult
		require.NoError(t, run.Get(ctx, &res), name)
		h := exportHistory(t, ctx, c, id, run.GetRunID())
		live := liveVerdicts(t, h)
		t.Logf("%s: %s; %d turns, %d tool calls; live guard: %v", name, res.Outcome, res.Iterations, res.ToolCalls, live)

		require.NoError(t, testsuite.ReplayHistory(h, testsuite.ReplayOptions{Guard: opts, Register: func(r worker.WorkflowRegistry) {
			r.RegisterWorkflow(workflows.ParallelToolAgent)
		}}), "%s: replays with the guard", name)
		ex := asRecorded.History(h, id)
		require.NoError(t, ex.Err, name)
		require.Empty(t, ex.Problems, name)
		require.Equal(t, strings.Join(live, "\n"), strings.Join(verdictLines(ex), "\n"), "%s: the analysis as recorded and the live guard disagree", name)

		switch tt.scenario {
		case activities.ParallelStuck:
			assert.Equal(t, workflows.OutcomeEscalated, res.Outcome, name)
			require.Len(t, live, 2, "%s: one warning, then the halt", name)
			var warned, halted int
			_, err := fmt.Sscanf(live[0], "call %d: warning 1/1", &warned)
			require.NoError(t, err, live[0])
			_, err = fmt.Sscanf(live[1], "call %d: halt 1", &halted)
			require.NoError(t, err, live[1])
			assert.LessOrEqual(t, halted, warned+bound, "%s: halted later than HaltBound after the onset", name)
			assert.Equal(t, []int{20, 46}, []int{warned, halted}, "%s: as in the test environment (TestParallelToolAgent)", name)
			// The same run without the guard: the analysis under the
			// same options warns and halts at the same calls.
			plainID := id + "-plain"
			plain := start(t, ctx, c, queue+"-plain", plainID, workflows.ParallelToolAgent, in)
			require.NoError(t, plain.Get(ctx, &res), plainID)
			pex := unguarded.History(exportHistory(t, ctx, c, plainID, plain.GetRunID()), plainID)
			require.NoError(t, pex.Err, plainID)
			got := verdictLines(pex)
			require.GreaterOrEqual(t, len(got), len(live), "%s: %v", plainID, got)
			assert.Equal(t, strings.Join(live, "\n"), strings.Join(got[:len(live)], "\n"), "%s: the analysis of the unguarded run and the live guard disagree up to the halt", name)
		case activities.ParallelHeeds:
			assert.Equal(t, workflows.OutcomeCompleted, res.Outcome, name)
			assert.Contains(t, res.Heeded, "warning 1/1", name)
			require.Len(t, ex.Verdicts, 1, "%s: warned once, never halted", name)
			assert.NotNil(t, ex.Verdicts[0].Warning, name)
		case activities.ParallelProgressing:
			assert.Equal(t, workflows.OutcomeCompleted, res.Outcome, name)
			assert.Empty(t, ex.Verdicts, "%s: never warned or halted", name)
			assert.Len(t, ex.Calls, activities.ParallelProgressTurns*(width+1)+1, name)
		default:
			t.Fatalf("no expectation for %s", tt.scenario)
		}
	}
}
