package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// raw builds a payload by hand: any encoding, any bytes.
func raw(encoding, data string) converter.RawValue {
	return converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(encoding)},
		Data:     []byte(data),
	})
}

func rawJSON(data string) converter.RawValue { return raw(converter.MetadataEncodingJSON, data) }

// padded is valid JSON of exactly n bytes: a short reason and whitespace.
func padded(n int) converter.RawValue {
	const head, tail = `{"reason":"padded"`, `}`
	return rawJSON(head + strings.Repeat(" ", n-len(head)-len(tail)) + tail)
}

func oversize(n int) map[string]string { return map[string]string{"reason": strings.Repeat("x", n)} }

// hostile is one piece of input the guard must refuse.
type hostile struct {
	name    string
	target  string // "halted" or "running"
	update  bool
	signal  string
	payload any
	// args, when set, are sent as the signal's payloads as they are.
	args []*commonpb.Payload
	want string
}

func hostileInputs() []hostile {
	two := []*commonpb.Payload{
		{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"reason":"a"}`)},
		{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"reason":"b"}`)},
	}
	return []hostile{
		{name: "resume when running", target: "running", signal: "resume", want: "nothing is halted"},
		{name: "wrong type", target: "halted", signal: "resume", payload: map[string]any{"reason": 42}, want: "malformed JSON"},
		{name: "escalate when running", target: "running", signal: "escalate", payload: map[string]string{"reason": "x"}, want: "nothing is halted"},
		{name: "broken JSON", target: "halted", signal: "resume", payload: rawJSON(`{"reason":`), want: "malformed JSON"},
		{name: "bare string when running", target: "running", signal: "resume", payload: "looks fine", want: "nothing is halted"},
		{name: "not JSON at all", target: "halted", signal: "escalate", payload: rawJSON(`stop it now`), want: "malformed JSON"},
		{name: "nested object for a string", target: "running", signal: "halt", payload: map[string]any{"reason": map[string]any{"deep": [][]string{{"x"}}}}, want: "malformed JSON"},
		{name: "binary payload", target: "halted", signal: "resume", payload: raw(converter.MetadataEncodingBinary, "\xff\x00\x01"), want: "unsupported payload encoding"},
		{name: "protobuf JSON encoding", target: "halted", signal: "escalate", payload: raw(converter.MetadataEncodingProtoJSON, `{}`), want: "unsupported payload encoding"},
		{name: "unknown field", target: "halted", signal: "resume", payload: map[string]any{"bogus": 1}, want: `unknown field "bogus"`},
		{name: "unknown extend field", target: "halted", signal: "resume", payload: map[string]any{"extend": map[string]int{"maxTurns": 1}}, want: `unknown field "maxTurns"`},
		{name: "negative extend", target: "halted", signal: "resume", payload: map[string]any{"extend": map[string]int{"maxCycleIterations": -1}}, want: "must not be negative"},
		{name: "extend on escalate", target: "halted", signal: "escalate", payload: map[string]any{"extend": map[string]int{"maxCycleIterations": 1}}, want: `"extend" is only accepted by resume`},
		{name: "trailing data", target: "halted", signal: "resume", payload: rawJSON(`{"reason":"a"} {"reason":"b"}`), want: "trailing data"},
		{name: "two arguments", target: "halted", signal: "resume", args: two, want: "expected at most one argument"},
		{name: "halt when halted", target: "halted", signal: "halt", payload: map[string]string{"reason": "stop"}, want: "already halted"},
		{name: "payload just under the limit", target: "halted", signal: "halt", payload: padded(16<<10 - 1), want: "already halted"},
		{name: "payload at the limit", target: "halted", signal: "halt", payload: padded(16 << 10), want: "already halted"},
		{name: "payload one byte over the limit", target: "halted", signal: "resume", payload: padded(16<<10 + 1), want: "exceeds the limit of 16384 bytes"},
		{name: "1 MiB payload", target: "halted", signal: "escalate", payload: oversize(1 << 20), want: "exceeds the limit"},
		{name: "reason too long", target: "halted", signal: "resume", payload: oversize(2000), want: "reason is 2000 bytes long"},
		{name: "1 MiB payload when running", target: "running", signal: "halt", payload: oversize(1 << 20), want: "exceeds the limit"},

		{name: "update resume when running", target: "running", update: true, signal: "resume", want: "nothing is halted"},
		{name: "update escalate when running", target: "running", update: true, signal: "escalate", payload: map[string]string{"reason": "x"}, want: "nothing is halted"},
		{name: "update wrong type", target: "halted", update: true, signal: "resume", payload: map[string]any{"by": []int{1}}, want: "malformed JSON"},
		{name: "update broken JSON", target: "halted", update: true, signal: "escalate", payload: rawJSON(`{"reason":"a"`), want: "malformed JSON"},
		{name: "update binary", target: "halted", update: true, signal: "resume", payload: raw(converter.MetadataEncodingBinary, "\x00"), want: "unsupported payload encoding"},
		{name: "update unknown field", target: "halted", update: true, signal: "resume", payload: map[string]any{"reasons": "x"}, want: `unknown field "reasons"`},
		{name: "update extend on escalate", target: "halted", update: true, signal: "escalate", payload: map[string]any{"extend": map[string]int{"maxCallsPerNode": 1}}, want: `"extend" is only accepted by resume`},
		{name: "update over the limit", target: "halted", update: true, signal: "escalate", payload: padded(16<<10 + 1), want: "exceeds the limit"},
		{name: "update 1 MiB", target: "halted", update: true, signal: "resume", payload: oversize(1 << 20), want: "exceeds the limit"},
	}
}

// TestHostileInput sends malformed, oversized and ill-timed signals and
// updates through the real client to a halted and to a running guarded
// workflow. Every one is refused (updates with an error to the caller,
// signals recorded in Status.LastRejected with the reason), the workflows'
// guard state is unchanged (same halt, same Seq, same counts, no decision),
// and no workflow task ever fails.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	queue := queueFor(t)
	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))

	ids := map[string]string{"halted": queue + "-halted", "running": queue + "-running"}
	haltedRun := start(t, ctx, c, queue, ids["halted"], fixtures.WorkflowSession, fixtures.SessionInput{Turns: fixtures.Stalling("Code", 6, 1), WaitAtEnd: true})
	runningRun := start(t, ctx, c, queue, ids["running"], fixtures.WorkflowSession, fixtures.SessionInput{Turns: []fixtures.Turn{
		{Node: "Plan", Output: "a"}, {Node: "Plan", Output: "b", WaitSignal: true}, {Node: "Plan", Output: "c"},
	}})
	base := map[string]protocol.Status{
		"halted":  waitStatus(t, ctx, c, ids["halted"], testsuite.Halted(1)),
		"running": waitStatus(t, ctx, c, ids["running"], func(s protocol.Status) bool { return s.TotalCalls == 1 }),
	}
	require.Equal(t, protocol.StateRunning, base["running"].State)
	last := map[string]*protocol.Rejection{}

	for _, h := range hostileInputs() {
		t.Run(h.name, func(t *testing.T) {
			id := ids[h.target]
			var st protocol.Status
			if h.update {
				var args []any
				if h.payload != nil {
					args = []any{h.payload}
				}
				uctx, ucancel := context.WithTimeout(ctx, 10*time.Second)
				defer ucancel()
				handle, err := c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
					WorkflowID: id, UpdateName: h.signal, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
				})
				if err == nil {
					err = handle.Get(uctx, nil)
				}
				require.Error(t, err, "the update must be refused")
				assert.Contains(t, err.Error(), h.want)
				st = waitStatus(t, ctx, c, id, func(protocol.Status) bool { return true })
				assert.Equal(t, last[h.target], st.LastRejected, "a rejected update leaves no trace in the workflow")
			} else {
				if h.args != nil {
					_, err := c.WorkflowService().SignalWorkflowExecution(ctx, &workflowservice.SignalWorkflowExecutionRequest{
						Namespace:         srv.Namespace(),
						WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
						SignalName:        h.signal,
						Input:             &commonpb.Payloads{Payloads: h.args},
						Identity:          "hostile-test",
					})
					require.NoError(t, err)
				} else {
					require.NoError(t, c.SignalWorkflow(ctx, id, "", h.signal, h.payload))
				}
				prev := last[h.target]
				st = waitStatus(t, ctx, c, id, func(s protocol.Status) bool {
					return s.LastRejected != nil && (prev == nil || *s.LastRejected != *prev)
				})
				last[h.target] = st.LastRejected
				assert.Equal(t, h.signal, st.LastRejected.Name)
				assert.Contains(t, st.LastRejected.Reason, h.want)
				assert.LessOrEqual(t, len(st.LastRejected.Payload), 200+len("…"), "the recorded payload is truncated")
			}
			want := base[h.target]
			assert.Equal(t, want.State, st.State, "state unchanged")
			assert.Equal(t, want.Halt, st.Halt, "halt unchanged (Seq, evidence)")
			assert.Equal(t, want.Halts, st.Halts)
			assert.Equal(t, want.TotalCalls, st.TotalCalls)
			assert.Nil(t, st.LastDecision, "no decision taken")
		})
	}

	t.Run("over Temporal's own size limit", func(t *testing.T) {
		err := c.SignalWorkflow(ctx, ids["halted"], "", "resume", oversize(3<<20))
		require.Error(t, err, "the server refuses a 3 MiB signal")
		st := waitStatus(t, ctx, c, ids["halted"], func(protocol.Status) bool { return true })
		assert.Equal(t, base["halted"].Halt, st.Halt)
		assert.Equal(t, protocol.StateHalted, st.State)
	})

	// The workflows were never disturbed: they finish normally.
	require.NoError(t, c.SignalWorkflow(ctx, ids["halted"], "", "resume", map[string]string{"by": "test"}))
	require.NoError(t, c.SignalWorkflow(ctx, ids["halted"], "", fixtures.ProceedSignal, nil))
	require.NoError(t, c.SignalWorkflow(ctx, ids["running"], "", fixtures.ProceedSignal, nil))
	res := result(t, ctx, haltedRun)
	assert.Equal(t, 6, res.Calls)
	assert.False(t, res.Escalated)
	res = result(t, ctx, runningRun)
	assert.Equal(t, []string{"a", "b", "c"}, res.Outputs)
	for _, id := range ids {
		requireHealthyHistory(t, ctx, c, id, "")
	}
}

// TestEscalateTwiceAndRaces escalates a halt twice, and races resume
// against escalate (as signals and as updates) on halted workflows: exactly
// one decision wins, the other is refused with a reason, and no workflow
// task fails.
func TestEscalateTwiceAndRaces(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	queue := queueFor(t)
	fixtureWorker(t, c, queue, guardPtr(interceptor.Options{}))
	session := fixtures.SessionInput{Turns: fixtures.Stalling("Code", 6, 1), WaitAtEnd: true}
	halted := func(id string) client.WorkflowRun {
		run := start(t, ctx, c, queue, id, fixtures.WorkflowSession, session)
		waitStatus(t, ctx, c, id, testsuite.Halted(1))
		return run
	}
	finish := func(id string, run client.WorkflowRun) fixtures.Result {
		require.NoError(t, c.SignalWorkflow(ctx, id, "", fixtures.ProceedSignal, nil))
		res := result(t, ctx, run)
		requireHealthyHistory(t, ctx, c, id, "")
		return res
	}

	t.Run("escalate twice", func(t *testing.T) {
		id := queue + "-twice"
		run := halted(id)
		require.NoError(t, c.SignalWorkflow(ctx, id, "", "escalate", map[string]string{"reason": "first", "by": "ana"}))
		waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.State == protocol.StateEscalated })
		require.NoError(t, c.SignalWorkflow(ctx, id, "", "escalate", map[string]string{"reason": "second", "by": "bob"}))
		st := waitStatus(t, ctx, c, id, func(s protocol.Status) bool { return s.LastRejected != nil })
		assert.Equal(t, "escalate", st.LastRejected.Name)
		assert.Contains(t, st.LastRejected.Reason, "already escalated")
		require.NotNil(t, st.LastDecision)
		assert.Equal(t, protocol.Decision{Action: "escalate", Reason: "first", By: "ana", HaltSeq: 1}, *st.LastDecision)

		handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: id, UpdateName: "escalate", Args: []any{map[string]string{"reason": "third"}}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			err = handle.Get(ctx, nil)
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), "already escalated")

		res := finish(id, run)
		assert.True(t, res.Escalated)
		assert.Equal(t, "first", res.Reason)
		assert.Equal(t, 6, res.Calls, "the session handled the escalation and went on")
	})

	for _, mode := range []string{"signals", "updates"} {
		t.Run("resume races escalate with "+mode, func(t *testing.T) {
			id := queue + "-race-" + mode
			run := halted(id)
			var wg sync.WaitGroup
			errs := map[string]error{}
			var mu sync.Mutex
			for _, action := range []string{"resume", "escalate"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					payload := map[string]string{"reason": "race", "by": action}
					if mode == "signals" {
						err = c.SignalWorkflow(ctx, id, "", action, payload)
					} else {
						var h client.WorkflowUpdateHandle
						h, err = c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
							WorkflowID: id, UpdateName: action, Args: []any{payload}, WaitForStage: client.WorkflowUpdateStageCompleted,
						})
						if err == nil {
							err = h.Get(ctx, nil)
						}
					}
					mu.Lock()
					errs[action] = err
					mu.Unlock()
				}()
			}
			wg.Wait()

			st := waitStatus(t, ctx, c, id, func(s protocol.Status) bool {
				return s.LastDecision != nil && (mode == "updates" || s.LastRejected != nil)
			})
			winner := st.LastDecision.Action
			loser := map[string]string{"resume": "escalate", "escalate": "resume"}[string(winner)]
			t.Logf("%s won, %s refused", winner, loser)
			assert.Equal(t, 1, st.Halts)
			assert.Equal(t, 1, st.LastDecision.HaltSeq)
			if mode == "signals" {
				require.NoError(t, errs["resume"])
				require.NoError(t, errs["escalate"])
				assert.Equal(t, loser, st.LastRejected.Name)
				assert.Regexp(t, "already answered|nothing is halted", st.LastRejected.Reason)
			} else {
				assert.NoError(t, errs[string(winner)], "the winning update succeeds")
				require.Error(t, errs[loser], "the losing update is refused")
				assert.Regexp(t, "already answered|nothing is halted", errs[loser].Error())
			}
			res := finish(id, run)
			assert.Equal(t, winner == "escalate", res.Escalated, fmt.Sprint(res))
			assert.Equal(t, 6, res.Calls)
		})
	}
}
