package testsuite_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// failures is a testing.TB that records how Run fails a test.
type failures struct {
	testing.TB
	mu  sync.Mutex
	got []string
}

func (f *failures) Helper()             {}
func (f *failures) Log(...any)          {}
func (f *failures) Logf(string, ...any) {}
func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fmt.Sprintf(format, args...))
}

func (f *failures) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// run calls Run with a recording TB, on a goroutine of its own since
// Fatalf ends it, and returns the failures.
func (f *failures) run(opts testsuite.RunOptions, wf any, args ...any) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		testsuite.Run(f, opts, wf, args...)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

// TestRunFailsWhenNotGuarded: a test whose workflow the guard leaves out
// fails, naming the workflow type, instead of passing without the guard
// (issue 24: a case typo in Options.Workflows turned the guard off, and a
// test of it still passed).
func TestRunFailsWhenNotGuarded(t *testing.T) {
	sc := workflows.Scenarios()[0]
	tests := []struct {
		name  string
		guard interceptor.Options
		want  []string // substrings of the one failure; nil: none
	}{
		{"named", interceptor.Options{Workflows: []string{"CoderVerifierLoop"}}, nil},
		{"case typo", interceptor.Options{Workflows: []string{"coderVerifierLoop"}}, []string{"workflow CoderVerifierLoop is not guarded", `"coderVerifierLoop"`}},
		{"left out by GuardWorkflow", interceptor.Options{GuardWorkflow: func(*workflow.Info) bool { return false }}, []string{"workflow CoderVerifierLoop ran unguarded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &failures{TB: t}
			got := f.run(testsuite.RunOptions{Guard: tt.guard, Register: workflows.Register}, sc.Workflow, sc.Input)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			if assert.Len(t, got, 1) {
				for _, w := range tt.want {
					assert.Contains(t, got[0], w)
				}
			}
		})
	}
}

// TestRefusedAnswerEndsTheRun: an answer the guard refuses (guidance over
// protocol.MaxGuidanceBytes) ends the run with the refusal's reason,
// recorded on the answer for signals as for updates, instead of leaving
// the workflow paused until the run times out.
func TestRefusedAnswerEndsTheRun(t *testing.T) {
	sc := scenario(t, "identical-patch")
	long := strings.Repeat("g", protocol.MaxGuidanceBytes+88)
	for _, updates := range []bool{false, true} {
		t.Run(map[bool]string{false: "signals", true: "updates"}[updates], func(t *testing.T) {
			rep := testsuite.Run(t, testsuite.RunOptions{
				Guard:      workflows.GuardOptions(),
				Register:   workflows.Register,
				UseUpdates: updates,
				Answer:     testsuite.Answers(testsuite.ResumeWithGuidance(long), testsuite.Escalate("stop")),
			}, sc.Workflow, sc.Input)
			t.Log(rep)
			require.Error(t, rep.Err)
			assert.Contains(t, rep.Err.Error(), "the guard refused the answer resume to halt #1")
			assert.Contains(t, rep.Err.Error(), "guidance")
			assert.NotContains(t, rep.Err.Error(), "ScheduleToClose")
			require.Len(t, rep.Answers, 1, "the second answer is for a second halt, which never came")
			assert.Error(t, rep.Answers[0].Rejected)
		})
	}
}

// TestHandlerHaltsAreReported: a halt the workflow's halt handler decided
// is in Report.Halts, marked ByHandler, though Run never answered it.
func TestHandlerHaltsAreReported(t *testing.T) {
	var sc workflows.Scenario
	for _, s := range workflows.Scenarios() {
		if s.Steer == workflows.SteerReviewer {
			sc = s
		}
	}
	require.NotEmpty(t, sc.Name, "a scenario steered by its halt handler")
	rep := testsuite.Run(t, testsuite.RunOptions{Guard: workflows.GuardOptions(), Register: workflows.Register}, sc.Workflow, sc.Input)
	t.Log(rep)
	require.NoError(t, rep.Err)
	assert.Empty(t, rep.Answers, "Run answered nothing")
	require.Len(t, rep.Halts, 1)
	assert.True(t, rep.Halts[0].ByHandler)
	assert.Equal(t, 1, rep.Halts[0].Seq)
}

// resumingLoop calls Code n times; its halt handler resumes every halt.
func resumingLoop(ctx workflow.Context, n int) (int, error) {
	if err := interceptor.SetHaltHandler(ctx, func(workflow.Context, protocol.HaltEvent) (interceptor.HandlerDecision, error) {
		return interceptor.HandlerDecision{Action: protocol.ActionResume, Reason: "carry on"}, nil
	}); err != nil {
		return 0, err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for i := range n {
		if err := workflow.ExecuteActivity(ctx, "Code", "the same task").Get(ctx, nil); err != nil {
			return i, err
		}
	}
	return n, nil
}

// TestEveryHandlerHaltIsReported: each of several halts the halt handler
// decides in a row is in Report.Halts, marked ByHandler.
func TestEveryHandlerHaltIsReported(t *testing.T) {
	rep := testsuite.Run(t, testsuite.RunOptions{
		Register: func(r worker.Registry) {
			r.RegisterActivityWithOptions(func(string) (string, error) { return "the same patch", nil }, activity.RegisterOptions{Name: "Code"})
		},
	}, resumingLoop, 12)
	t.Log(rep)
	require.NoError(t, rep.Err)
	require.GreaterOrEqual(t, len(rep.Halts), 2)
	for i, h := range rep.Halts {
		assert.Equal(t, i+1, h.Seq)
		assert.True(t, h.ByHandler, "halt #%d", h.Seq)
	}
	assert.Empty(t, rep.Answers)
}
