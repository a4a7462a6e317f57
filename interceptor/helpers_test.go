package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
)

// turn is one scripted agent call of scriptLoop.
type turn struct {
	Node   string `json:"node"`
	Output string `json:"output,omitempty"`
	Err    string `json:"err,omitempty"`
	// Failing is a metric some tests declare.
	Failing int `json:"failing,omitempty"`
	// Cost is what the call spent, for cost budgets.
	Cost float64 `json:"cost,omitempty"`
	// With starts this call together with the next one (fan-out).
	With bool `json:"with,omitempty"`
	// Stamp makes the result carry the call's index, like a timestamp.
	Stamp bool `json:"stamp,omitempty"`
	// Sleep is workflow time to wait before the call.
	Sleep time.Duration `json:"sleep,omitempty"`
}

// agentResult is what the scripted agent returns.
type agentResult struct {
	Output  string  `json:"output"`
	Failing int     `json:"failing"`
	Cost    float64 `json:"cost,omitempty"`
	At      int     `json:"at"` // a varying field, ignored by some tests
}

// loopResult is what scriptLoop returns.
type loopResult struct {
	Calls     int    `json:"calls"`
	Escalated bool   `json:"escalated"`
	Reason    string `json:"reason,omitempty"`
}

// scriptLoop runs the turns in order, as an agent loop would: each result
// is read before the next call, and calls marked With start together.
func scriptLoop(ctx workflow.Context, turns []turn) (loopResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var res loopResult
	for i := 0; i < len(turns); {
		var futs []workflow.Future
		for {
			t := turns[i]
			if t.Sleep > 0 {
				if err := workflow.Sleep(ctx, t.Sleep); err != nil {
					return res, err
				}
			}
			futs = append(futs, workflow.ExecuteActivity(ctx, t.Node, t, i))
			i++
			if !t.With || i == len(turns) {
				break
			}
		}
		for _, f := range futs {
			var out agentResult
			err := f.Get(ctx, &out)
			res.Calls++
			if interceptor.IsEscalated(err) {
				e, _ := interceptor.EscalationFrom(err)
				res.Escalated, res.Reason = true, e.Reason
				return res, nil
			}
		}
	}
	return res, nil
}

// agent is the scripted activity behind every node name.
func agent(_ context.Context, t turn, i int) (agentResult, error) {
	if t.Err != "" {
		return agentResult{}, temporal.NewNonRetryableApplicationError(t.Err, "AgentError", nil)
	}
	r := agentResult{Output: t.Output, Failing: t.Failing, Cost: t.Cost}
	if t.Stamp {
		r.At = i
	}
	return r, nil
}

// notify is an activity with no result, like a notification or a write.
func notify(_ context.Context, t turn, i int) error {
	if t.Err != "" {
		return temporal.NewNonRetryableApplicationError(t.Err, "NotifyError", nil)
	}
	return nil
}

// nodes are the activity names the scripts use.
var nodes = []string{"Code", "Verify", "Plan", "Research", "Poll"}

// newEnv returns a test environment running scriptLoop with the guard.
func newEnv(t *testing.T, opts interceptor.Options) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	env := s.NewTestWorkflowEnvironment()
	g, err := interceptor.New(opts)
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	registerScript(env)
	env.SetTestTimeout(30 * time.Second)
	return env
}

// status queries the guard's status.
func status(t *testing.T, env *testsuite.TestWorkflowEnvironment) interceptor.Status {
	t.Helper()
	v, err := env.QueryWorkflow(interceptor.DefaultStatusQuery)
	require.NoError(t, err)
	var s interceptor.Status
	require.NoError(t, v.Get(&s))
	return s
}

// repeat returns n turns of node with the same output.
func repeat(n int, node, output string) []turn {
	ts := make([]turn, n)
	for i := range ts {
		ts[i] = turn{Node: node, Output: output}
	}
	return ts
}

// codeVerify returns a coder ↔ verifier script: patches[i] then verdicts[i].
func codeVerify(patches []string, failing []int) []turn {
	var ts []turn
	for i := range patches {
		ts = append(ts, turn{Node: "Code", Output: patches[i]}, turn{Node: "Verify", Output: fmt.Sprintf("run %d: failing=%d", i, failing[i]), Failing: failing[i]})
	}
	return ts
}

// result returns the workflow's result, failing on a workflow error.
func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) loopResult {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var r loopResult
	require.NoError(t, env.GetWorkflowResult(&r))
	return r
}

// quietLogger keeps test output to errors.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// twoBranches runs two scripts side by side in workflow coroutines, as an
// agent with parallel sub-agents would.
func twoBranches(ctx workflow.Context, a, b []turn) ([]loopResult, error) {
	results := make([]loopResult, 2)
	errs := make([]error, 2)
	wg := workflow.NewWaitGroup(ctx)
	for i, turns := range [][]turn{a, b} {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			results[i], errs[i] = scriptLoop(ctx, turns)
		})
	}
	wg.Wait(ctx)
	return results, errors.Join(errs...)
}
