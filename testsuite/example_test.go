package testsuite_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// draft is an agent activity that keeps proposing the same draft.
func draft(_ context.Context, turn int) (string, error) {
	return "the same draft", nil
}

// writerLoop asks for up to 10 drafts; an escalated halt ends it.
func writerLoop(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for turn := 1; turn <= 10; turn++ {
		var out string
		err := workflow.ExecuteActivity(ctx, "Draft", turn).Get(ctx, &out)
		if interceptor.IsEscalated(err) {
			e, _ := interceptor.EscalationFrom(err)
			return fmt.Sprintf("escalated at turn %d: %s", turn, e.Reason), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "gave up", nil
}

func ExampleRun() {
	t := &testing.T{} // in a real test, the test's own t
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard: interceptor.Options{RepeatThreshold: 3},
		Register: func(r worker.Registry) {
			r.RegisterActivityWithOptions(draft, activity.RegisterOptions{Name: "Draft"})
		},
		// The first halt is resumed, the second escalated.
		Answer: testsuite.Answers(testsuite.Resume("one more try"), testsuite.Escalate("same draft again")),
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler)), // default: warnings via t.Log
	}, writerLoop)

	var out string
	if err := rep.Result(&out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	for _, h := range rep.Halts {
		fmt.Printf("halt %d: %s (%s) at %s\n", h.Seq, h.HaltReason, h.Detector, h.Node)
	}
	for _, a := range rep.Answers {
		fmt.Printf("answered halt %d with %s\n", a.HaltSeq, a.Name)
	}
	fmt.Println("final state:", rep.FinalStatus.State)
	// Output:
	// escalated at turn 7: same draft again
	// halt 1: stalled (identical_output) at Draft
	// halt 2: stalled (identical_output) at Draft
	// answered halt 1 with resume
	// answered halt 2 with escalate
	// final state: escalated
}

// heedfulDraft proposes the same draft until a notice warns it.
func heedfulDraft(ctx context.Context, turn int) (string, error) {
	if n, ok := interceptor.NoticeFrom(ctx); ok && n.Warning != nil {
		return fmt.Sprintf("a new outline, turn %d", turn), nil
	}
	if turn > 4 {
		return fmt.Sprintf("section %d of the new outline", turn), nil
	}
	return "the same draft", nil
}

// Report.Notices shows what the agent was told: here the writer is warned
// once, changes approach, and is never halted.
func ExampleReport_notices() {
	t := &testing.T{} // in a real test, the test's own t
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard: interceptor.Options{Warnings: 1, Grain: interceptor.GrainToolCall},
		Register: func(r worker.Registry) {
			r.RegisterActivityWithOptions(heedfulDraft, activity.RegisterOptions{Name: "Draft"})
		},
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	}, writerLoop)

	var out string
	if err := rep.Result(&out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out, "(10 drafts) with", len(rep.Halts), "halts and", rep.FinalStatus.Warnings, "warning")
	for _, n := range rep.Notices {
		if w := n.Notice.Warning; w != nil {
			fmt.Printf("%s was warned (%d/%d, %s): %s\n", n.Activity, w.N, w.Of, w.Reason, w.Directive)
			break
		}
	}
	// Output:
	// gave up (10 drafts) with 0 halts and 1 warning
	// Draft was warned (1/1, stalled): You are repeating the same steps and getting the same results. Do not make the same call again with the same input: change your approach.
}

func ExampleAnswers() {
	answer := testsuite.Answers(testsuite.Resume("looks fine"), testsuite.Escalate("enough"))
	for seq := 1; seq <= 3; seq++ {
		action, payload := answer(protocol.Status{State: protocol.StateHalted, Halt: &protocol.HaltEvent{Seq: seq}})
		fmt.Printf("halt %d: %s %+v\n", seq, action, payload)
	}
	// Output:
	// halt 1: resume {Reason:looks fine By:testsuite Extend:<nil> Guidance:}
	// halt 2: escalate {Reason:enough By:testsuite}
	// halt 3: escalate {Reason:enough By:testsuite}
}

func ExampleReplayFile() {
	path := filepath.Join("testdata", "histories", "stalled-resume-completes.json")
	opts := testsuite.ReplayOptions{
		Guard:     workflows.GuardOptions(),
		Workflows: []any{workflows.CoderVerifierLoop},
	}
	fmt.Println("with the guard:", testsuite.ReplayFile(path, opts))

	// The guard halted this workflow: without the guard it cannot replay.
	opts.Unguarded = true
	err := testsuite.ReplayFile(path, opts)
	var re *testsuite.ReplayError
	if errors.As(err, &re) {
		fmt.Println("without the guard:", re.WorkflowType, "nondeterministic:", re.Nondeterministic, "guarded history:", re.Guarded)
	}
	// Output:
	// with the guard: <nil>
	// without the guard: CoderVerifierLoop nondeterministic: true guarded history: true
}

func ExampleInspect() {
	h, err := testsuite.ReadHistoryFile(filepath.Join("testdata", "histories", "stalled-resume-resume-escalate.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	info := testsuite.Inspect(h)
	fmt.Println(info.WorkflowType, "guarded:", info.Guarded, "halts:", info.HaltedSignals, "task failures:", info.WorkflowTaskFailures, "closed:", info.Closed)
	// Output:
	// CoderVerifierLoop guarded: true halts: 3 task failures: 0 closed: true
}

// Analyse the histories of past runs: what the guard would have done to
// them under the options a team considers, before it runs on a worker.
func ExampleAnalyzeDir() {
	rep, err := testsuite.AnalyzeDir("testdata/histories", testsuite.AnalyzeOptions{
		Guard: interceptor.Options{Workflows: []string{"CoderVerifierLoop"}},
	})
	if err != nil {
		panic(err)
	}
	for _, ex := range rep.Executions {
		if ex.File != "testdata/histories/unguarded-identical-patch.json" {
			continue
		}
		for _, v := range ex.Verdicts[:2] {
			fmt.Printf("call %d: %s/%s at %s (loop %d/%d)\n", v.Call, v.Halt.HaltReason, v.Halt.Detector, v.Halt.Node, v.Halt.Iteration, v.Halt.MaxIterations)
		}
		fmt.Printf("%d calls, %d saved\n", len(ex.Calls), ex.Saved)
	}
	s := rep.Summary
	fmt.Printf("%d histories, %d guarded, %d would halt\n", s.Executions, s.Guarded, s.WouldHalt)
	// Output:
	// call 6: stalled/identical_output at Code (loop 3/8)
	// call 11: stalled/identical_output at Verify (loop 5/8)
	// 40 calls, 35 saved
	// 56 histories, 17 guarded, 13 would halt
}
