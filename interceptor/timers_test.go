package interceptor_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
)

// retriedUntilHalt runs a retry loop whose every attempt fails the same
// way, backed off through api for d, under the guard with OnHalt fail, and
// returns the call the guard escalated and the detector that halted it.
func retriedUntilHalt(t *testing.T, api string, d time.Duration) string {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler))) // every attempt fails, and the SDK logs each
	env := s.NewTestWorkflowEnvironment()
	g, err := interceptor.New(interceptor.Options{OnHalt: protocol.OnHaltFail})
	require.NoError(t, err)
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	fixtures.Register(env)
	env.SetTestTimeout(30 * time.Second)
	env.ExecuteWorkflow(fixtures.WorkflowScripted, fixtures.Backedoff("Act", "quote service: 429", api, d, 30))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res fixtures.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.True(t, res.Escalated, "the retry loop must halt in 30 calls")
	st := status(t, env)
	require.NotNil(t, st.Halt)
	return fmt.Sprintf("call %d by %s", res.Calls, st.Halt.Detector)
}

// TestEveryTimerAPIHeardAsWritten: the guard hears a backed-off retry
// loop's timers as the history holds them (guard version 13). A positive
// backoff through any timer API of the SDK is the same wait as a
// workflow.NewTimer; a zero one writes no timer, and the loop is as tight
// as one with no backoff at all; the two verdicts differ, so the timers
// are heard. Before version 13, NewTimerWithOptions and AwaitWithOptions
// were not heard, and zero Sleeps, NewTimers and AwaitWithTimeouts were:
// TestTimersLiveAsInHistory (worker module) checks the verdicts against
// the analysis of real histories.
func TestEveryTimerAPIHeardAsWritten(t *testing.T) {
	waits := retriedUntilHalt(t, fixtures.TimerNew, time.Minute)
	tight := retriedUntilHalt(t, "", 0) // no timer API: no wait at all
	require.NotEqual(t, waits, tight, "a backoff must change the verdict for the test to tell")
	for _, api := range []string{fixtures.TimerSleep, fixtures.TimerNew, fixtures.TimerWithOptions, fixtures.TimerAwait, fixtures.TimerAwaitOptions} {
		t.Run(api, func(t *testing.T) {
			assert.Equal(t, waits, retriedUntilHalt(t, api, time.Minute), "a 1m backoff")
			assert.Equal(t, tight, retriedUntilHalt(t, api, 0), "a zero backoff")
			assert.Equal(t, tight, retriedUntilHalt(t, api, -time.Second), "a negative backoff")
		})
	}
}
