package interceptor_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
)

// envWith returns a test environment with guard g (shared between
// environments when the test wants it) and data converter dc (nil: the
// default).
func envWith(t *testing.T, g sdkinterceptor.WorkerInterceptor, dc converter.DataConverter) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	if dc != nil {
		env.SetDataConverter(dc)
	}
	registerScript(env)
	env.SetTestTimeout(30 * time.Second)
	return env
}

func guardFor(t *testing.T, opts interceptor.Options) sdkinterceptor.WorkerInterceptor {
	t.Helper()
	g, err := interceptor.New(opts)
	require.NoError(t, err)
	return g
}

// stallScript halts on its fourth Code call (three identical outputs).
func stallScript() []turn {
	return []turn{
		{Node: "Code", Output: "same"}, {Node: "Code", Output: "same"}, {Node: "Code", Output: "same"},
		{Node: "Code", Output: "fixed"}, {Node: "Verify", Output: "green"},
	}
}

// TestCodecResumeAndRejection: with an encryption codec on the worker, a
// resume signal (encrypted by the same converter, as the app's own client
// would send it) resumes the halt, and a bad payload is rejected with its
// decoded text in lastRejected, never its ciphertext.
func TestCodecResumeAndRejection(t *testing.T) {
	env := envWith(t, guardFor(t, interceptor.Options{}), scripted.EncryptingDataConverter())
	halted := statusThen(t, env, decideAfter, func() {
		env.SignalWorkflow("resume", map[string]any{"bogus": 1})
	})
	rejected := statusThen(t, env, decideAfter+time.Minute, func() {
		env.SignalWorkflow("resume", map[string]string{"by": "ana", "reason": "looked at it"})
	})
	env.ExecuteWorkflow(scriptLoop, stallScript())
	res := result(t, env)
	assert.Equal(t, 5, res.Calls, "resumed through the codec")
	assert.False(t, res.Escalated)
	require.Equal(t, protocol.StateHalted, halted.State)
	require.NotNil(t, rejected.LastRejected)
	assert.Contains(t, rejected.LastRejected.Reason, `unknown field "bogus"`)
	assert.Equal(t, `{"bogus":1}`, strings.TrimSpace(rejected.LastRejected.Payload), "the decoded text, not ciphertext")
	final := status(t, env)
	require.NotNil(t, final.LastDecision)
	assert.Equal(t, "ana", final.LastDecision.By)
}

// TestCodecUndecodableSignalSaysSo: a payload the workflow's converter
// cannot decode is rejected, and the status says so instead of showing it.
func TestCodecUndecodableSignalSaysSo(t *testing.T) {
	env := envWith(t, guardFor(t, interceptor.Options{}), scripted.EncryptingDataConverter())
	var mid protocol.Status
	env.RegisterDelayedCallback(func() {
		garbage := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(scripted.EncryptedEncoding)}, Data: []byte{1, 2, 3, 4}}
		env.SignalWorkflow("halt", converter.NewRawValue(garbage))
	}, time.Minute)
	env.RegisterDelayedCallback(func() { mid = status(t, env) }, 2*time.Minute)
	give := distinct(3, "Plan")
	give[1].Sleep = time.Hour
	env.ExecuteWorkflow(scriptLoop, give)
	assert.Equal(t, 3, result(t, env).Calls)
	require.NotNil(t, mid.LastRejected)
	// The test environment encrypts the raw ciphertext once more: once
	// decrypted, what is left is still not JSON.
	assert.Contains(t, mid.LastRejected.Reason, "unsupported payload encoding")
	assert.Contains(t, mid.LastRejected.Payload, "not shown")
	assert.NotContains(t, mid.LastRejected.Payload, "\x01\x02")
}

// TestCodecCarryIsEncrypted: the continue-as-new header goes through the
// codec, and the next run reads it back.
func TestCodecCarryIsEncrypted(t *testing.T) {
	dc := scripted.EncryptingDataConverter()
	first := envWith(t, guardFor(t, interceptor.Options{MaxCallsPerNode: 4}), dc)
	first.ExecuteWorkflow(continuingLoop, distinct(6, "Research"), 3)
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(first.GetWorkflowError(), &can), "want continue-as-new, got %v", first.GetWorkflowError())
	p := can.Header.GetFields()["loopguard-carry"]
	require.NotNil(t, p)
	assert.True(t, scripted.Ciphertext(p), "carried state encrypted, metadata %v", p.GetMetadata())
	assert.NotContains(t, string(p.GetData()), "Research", "no plain text in history")

	second := envWith(t, guardFor(t, interceptor.Options{MaxCallsPerNode: 100}), dc)
	second.SetHeader(can.Header)
	halted := statusThen(t, second, decideAfter, func() {
		second.SignalWorkflow("escalate", nil)
	})
	second.ExecuteWorkflow(scriptLoop, distinct(3, "Research"))
	require.Equal(t, protocol.StateHalted, halted.State, "three calls carried: the second of this run is the fifth")
	assert.Equal(t, protocol.ReasonBudgetExceeded, halted.Halt.HaltReason)
}

// TestConverterWithoutRawValue: with a data converter that cannot fill a
// converter.RawValue (not built on the SDK's composite converter, like
// samples-go's pso), successes are read as what they are: varying results
// run to the end, identical ones still stall.
func TestConverterWithoutRawValue(t *testing.T) {
	t.Run("varying results are no repeated error", func(t *testing.T) {
		env := envWith(t, guardFor(t, interceptor.Options{OnHalt: protocol.OnHaltFail}), scripted.OwnJSONDataConverter())
		env.ExecuteWorkflow(scriptLoop, distinct(6, "Research"))
		res := result(t, env)
		assert.Equal(t, 6, res.Calls)
		assert.False(t, res.Escalated, "escalated: %s", res.Reason)
	})
	t.Run("identical results stall", func(t *testing.T) {
		env := envWith(t, guardFor(t, interceptor.Options{OnHalt: protocol.OnHaltFail}), scripted.OwnJSONDataConverter())
		env.ExecuteWorkflow(scriptLoop, stallScript())
		res := result(t, env)
		assert.True(t, res.Escalated)
		assert.Equal(t, 4, res.Calls, "three identical outputs halt the fourth call")
	})
}

// TestContinueAsNewCapturedOnReturn: the state carried is the state when
// the run returns its continue-as-new error, not when it built it.
func TestContinueAsNewCapturedOnReturn(t *testing.T) {
	first := envWith(t, guardFor(t, interceptor.Options{MaxCallsPerNode: 4}), nil)
	first.ExecuteWorkflow(scripted.LateContinue, distinct(3, "Research"), distinct(3, "Research"))
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(first.GetWorkflowError(), &can), "got %v", first.GetWorkflowError())

	second := envWith(t, guardFor(t, interceptor.Options{MaxCallsPerNode: 4}), nil)
	second.SetHeader(can.Header)
	halted := statusThen(t, second, decideAfter, func() {
		second.SignalWorkflow("escalate", nil)
	})
	second.ExecuteWorkflow(scriptLoop, distinct(3, "Research"))
	require.Equal(t, protocol.StateHalted, halted.State, "the calls made after building the error were carried")
	assert.Equal(t, protocol.ReasonBudgetExceeded, halted.Halt.HaltReason)
}

// TestInFlightCallAtContinueAsNew: a call still running when the run
// continues as new does not keep its node's step open in the next run,
// where it would swallow every later call of the node unchecked.
func TestInFlightCallAtContinueAsNew(t *testing.T) {
	opts := interceptor.Options{OnHalt: protocol.OnHaltFail}
	first := envWith(t, guardFor(t, opts), nil)
	first.ExecuteWorkflow(scripted.AbandonAndContinue, "Code", stallScript())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(first.GetWorkflowError(), &can), "got %v", first.GetWorkflowError())

	second := envWith(t, guardFor(t, opts), nil)
	second.SetHeader(can.Header)
	second.ExecuteWorkflow(scriptLoop, stallScript())
	res := result(t, second)
	assert.True(t, res.Escalated, "three identical Code outputs halt the next call")
	assert.Equal(t, 4, res.Calls)
}

// TestSharedGuardRace runs, on one worker's guard, executions with other
// pinned options (continued runs carrying their own) next to fresh ones:
// every fresh execution runs the worker's options, and -race finds no
// shared map or slice.
func TestSharedGuardRace(t *testing.T) {
	worker := interceptor.Options{
		OnHalt:          protocol.OnHaltFail,
		MaxCallsPerNode: 4,
		IgnoreFields:    []string{"at"},
		Nodes:           map[string]interceptor.NodeOptions{"Verify": {MaxCalls: 2, IgnoreFields: []string{"x"}}},
		Graph:           []interceptor.Edge{{From: "Code", To: "Verify"}},
	}
	other := interceptor.Options{
		MaxCallsPerNode: 100,
		Nodes:           map[string]interceptor.NodeOptions{"Research": {Exempt: true}, "Verify": {MaxCalls: 50}},
		IgnoreFields:    []string{"y", "z"},
	}
	// A run recorded under other options continues as new: its header
	// pins them.
	seed := envWith(t, guardFor(t, other), nil)
	seed.ExecuteWorkflow(continuingLoop, distinct(4, "Plan"), 2)
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(seed.GetWorkflowError(), &can))

	shared := guardFor(t, worker)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := envWith(t, shared, nil)
			if i%2 == 0 {
				env.SetHeader(can.Header)
				env.ExecuteWorkflow(scriptLoop, distinct(6, "Verify"))
				res := result(t, env)
				assert.Equal(t, 6, res.Calls, "pinned Verify budget of 50")
				return
			}
			env.ExecuteWorkflow(scriptLoop, distinct(6, "Verify"))
			res := result(t, env)
			assert.True(t, res.Escalated, "the worker's Verify budget of 2, got %+v", res)
			assert.Equal(t, 3, res.Calls)
		}()
	}
	wg.Wait()
}

// TestRetireGuardsNothingNew: a retiring guard leaves new executions
// unguarded: no halt, status "disabled".
func TestRetireGuardsNothingNew(t *testing.T) {
	env := envWith(t, guardFor(t, interceptor.Options{Retire: true, OnHalt: protocol.OnHaltFail}), nil)
	env.ExecuteWorkflow(scriptLoop, stallScript())
	res := result(t, env)
	assert.Equal(t, 5, res.Calls)
	assert.False(t, res.Escalated)
	assert.Equal(t, protocol.StateDisabled, status(t, env).State)
}

// TestUpdatesThroughTheConverter: resume and escalate updates from a client
// with an encryption codec are decoded by the workflow's data converter (the
// SDK decodes update arguments, into a RawValue here): a malformed one is
// rejected for what its decoded text says, a good one answers the halt.
// (A converter that cannot fill a RawValue cannot take the updates: the SDK
// rejects them before the guard sees them; the signals work.)
func TestUpdatesThroughTheConverter(t *testing.T) {
	for _, tc := range []struct {
		name string
		dc   converter.DataConverter
	}{
		{"encryption codec", scripted.EncryptingDataConverter()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := envWith(t, guardFor(t, interceptor.Options{}), tc.dc)
			var malformed error
			var decision protocol.Decision
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow("resume", "u1", &testUpdate{onReject: func(err error) { malformed = err }}, map[string]any{"bogus": 1})
			}, decideAfter)
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow("resume", "u2", &testUpdate{onComplete: func(v any, err error) {
					require.NoError(t, err)
					decision = v.(protocol.Decision)
				}}, map[string]string{"by": "lee"})
			}, decideAfter+time.Minute)
			env.ExecuteWorkflow(scriptLoop, stallScript())
			res := result(t, env)
			require.Error(t, malformed)
			assert.Contains(t, malformed.Error(), `unknown field "bogus"`)
			assert.Equal(t, 5, res.Calls)
			assert.Equal(t, protocol.Decision{Action: "resume", By: "lee", HaltSeq: 1}, decision)
		})
	}
}
