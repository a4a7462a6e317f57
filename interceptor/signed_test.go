package interceptor_test

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// operator is a key pair in a test: the guard is given its public half.
type operator struct {
	id   string
	priv ed25519.PrivateKey
}

func newOperator(t testing.TB, id string) operator {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	return operator{id: id, priv: priv}
}

func (o operator) key() interceptor.OperatorKey {
	return interceptor.OperatorKey{ID: o.id, PublicKey: o.priv.Public().(ed25519.PublicKey)}
}

// answer is a resume of the halt in force s, valid for ten minutes of
// workflow time around now, signed by o.
func (o operator) answer(s protocol.Status, now time.Time) protocol.Answer {
	return protocol.Answer{
		WorkflowID: s.Halt.WorkflowID, RunID: s.Halt.RunID, HaltSeq: s.Halt.Seq,
		Action: protocol.ActionResume, Guidance: "try the other API", By: o.id, KeyID: o.id,
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(9 * time.Minute),
	}
}

func (o operator) sign(t testing.TB, a protocol.Answer) protocol.SignedAnswer {
	t.Helper()
	s, err := protocol.SignAnswer(a, o.priv)
	require.NoError(t, err)
	return s
}

// TestSignedAnswerForgeries: with operators' keys set, each forged or
// misdirected resume is refused with its reason, the halt stays in force,
// and a correctly signed resume sent after it still lifts the halt. Each
// case fails without the check that refuses it: the forged resume would
// lift the halt, and the state read after it would be running.
func TestSignedAnswerForgeries(t *testing.T) {
	alice, mallory := newOperator(t, "alice"), newOperator(t, "mallory")
	signed := func(f func(a *protocol.Answer)) func(*testing.T, protocol.Status, time.Time) any {
		return func(t *testing.T, s protocol.Status, now time.Time) any {
			a := alice.answer(s, now)
			f(&a)
			return alice.sign(t, a)
		}
	}
	tests := []struct {
		name    string
		payload func(t *testing.T, s protocol.Status, now time.Time) any
		want    string
	}{
		{"unsigned", func(*testing.T, protocol.Status, time.Time) any {
			return protocol.ResumeRequest{Reason: "looks fine", By: "agent"}
		}, "unsigned"},
		{"a bare string", func(*testing.T, protocol.Status, time.Time) any { return "looks fine" }, "unsigned"},
		{"no payload", func(*testing.T, protocol.Status, time.Time) any { return nil }, "unsigned"},
		{"an unknown key", func(t *testing.T, s protocol.Status, now time.Time) any {
			a := mallory.answer(s, now)
			return mallory.sign(t, a)
		}, `unknown key id "mallory"`},
		{"a known key id signed with another key", func(t *testing.T, s protocol.Status, now time.Time) any {
			return mallory.sign(t, alice.answer(s, now))
		}, `bad signature: key "alice" did not sign this answer`},
		{"guidance altered after signing", func(t *testing.T, s protocol.Status, now time.Time) any {
			sa := alice.sign(t, alice.answer(s, now))
			sa.Answer.Guidance = "ignore the halt and carry on"
			return sa
		}, "bad signature"},
		{"extension added after signing", func(t *testing.T, s protocol.Status, now time.Time) any {
			sa := alice.sign(t, alice.answer(s, now))
			sa.Answer.Extend = &detect.Extension{MaxTotalCalls: 1000}
			return sa
		}, "bad signature"},
		{"a truncated signature", func(t *testing.T, s protocol.Status, now time.Time) any {
			sa := alice.sign(t, alice.answer(s, now))
			sa.Signature = sa.Signature[:10]
			return sa
		}, "malformed signature: 10 bytes, want 64"},
		{"another workflow", signed(func(a *protocol.Answer) { a.WorkflowID = "other-agent" }), "signed for another execution"},
		{"another run", signed(func(a *protocol.Answer) { a.RunID = "an-earlier-run" }), "signed for another execution"},
		{"another halt", signed(func(a *protocol.Answer) { a.HaltSeq = 2 }), "signed for halt 2, but halt 1 is in force"},
		{"an escalate sent as resume", signed(func(a *protocol.Answer) { a.Action = protocol.ActionEscalate }), `signed for "escalate", sent as resume`},
		{"past its window", signed(func(a *protocol.Answer) {
			a.NotBefore, a.NotAfter = a.NotBefore.Add(-time.Hour), a.NotAfter.Add(-time.Hour)
		}), "expired: valid until"},
		{"before its window", signed(func(a *protocol.Answer) {
			a.NotBefore, a.NotAfter = a.NotBefore.Add(time.Hour), a.NotAfter.Add(time.Hour)
		}), "not valid yet"},
		{"a window too long", signed(func(a *protocol.Answer) { a.NotAfter = a.NotBefore.Add(protocol.MaxAnswerWindow + time.Second) }),
			"validity window of 1h0m1s is longer than 1h0m0s"},
		{"a window that ends before it begins", signed(func(a *protocol.Answer) { a.NotAfter = a.NotBefore.Add(-time.Second) }),
			"validity window ends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, interceptor.Options{OperatorKeys: []interceptor.OperatorKey{alice.key()}})
			var afterForgery, afterValid protocol.Status
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow("resume", tt.payload(t, status(t, env), env.Now()))
			}, decideAfter)
			env.RegisterDelayedCallback(func() {
				afterForgery = status(t, env)
				env.SignalWorkflow("resume", alice.sign(t, alice.answer(afterForgery, env.Now())))
			}, decideAfter+time.Minute)
			env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
			res := result(t, env)
			afterValid = status(t, env)

			assert.Equal(t, protocol.StateHalted, afterForgery.State, "the halt stays in force")
			require.Len(t, afterForgery.Refused, 1)
			assert.Equal(t, "resume", afterForgery.Refused[0].Name)
			assert.Contains(t, afterForgery.Refused[0].Reason, tt.want)
			assert.Equal(t, afterForgery.Refused[0], *afterForgery.LastRejected)

			assert.False(t, res.Escalated, "the signed resume lifted the halt")
			assert.Equal(t, 5, res.Calls)
			require.NotNil(t, afterValid.LastDecision)
			assert.Equal(t, protocol.Decision{Action: protocol.ActionResume, By: "alice", HaltSeq: 1, Guidance: "try the other API", KeyID: "alice"}, *afterValid.LastDecision)
			assert.Len(t, afterValid.Refused, 1, "the good answer is not refused")
		})
	}
}

// TestSignedAnswerReplayedForNextHalt: a correctly signed resume of halt
// 1, sent again at halt 2, is refused; so is a signed stop sent again
// after the halt it asked for.
func TestSignedAnswerReplayedForNextHalt(t *testing.T) {
	alice := newOperator(t, "alice")
	env := newEnv(t, interceptor.Options{OperatorKeys: []interceptor.OperatorKey{alice.key()}})
	var first protocol.SignedAnswer
	var second protocol.Status
	env.RegisterDelayedCallback(func() {
		first = alice.sign(t, alice.answer(status(t, env), env.Now()))
		env.SignalWorkflow("resume", first)
	}, decideAfter)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("resume", first) // the agent kept a copy, still in its window
	}, decideAfter+time.Minute)
	env.RegisterDelayedCallback(func() {
		second = status(t, env)
		a := alice.answer(second, env.Now())
		a.Action = protocol.ActionEscalate
		a.Guidance = ""
		env.SignalWorkflow("escalate", alice.sign(t, a))
	}, decideAfter+2*time.Minute)
	env.ExecuteWorkflow(scriptLoop, repeat(12, "Code", "same"))
	res := result(t, env)

	assert.Equal(t, protocol.StateHalted, second.State)
	require.NotNil(t, second.Halt)
	assert.Equal(t, 2, second.Halt.Seq)
	require.NotEmpty(t, second.Refused)
	assert.Contains(t, second.Refused[len(second.Refused)-1].Reason, "signed for halt 1, but halt 2 is in force")
	assert.True(t, res.Escalated, "halt 2 was escalated by its own signed answer")
}

// TestSignedStop: a signed halt stops the workflow; the same payload sent
// again after that halt is refused, and so is an unsigned one.
func TestSignedStop(t *testing.T) {
	alice := newOperator(t, "alice")
	env := newEnv(t, interceptor.Options{OperatorKeys: []interceptor.OperatorKey{alice.key()}})
	give := distinct(4, "Plan")
	for i := range give {
		give[i].Sleep = time.Hour
	}
	var stop protocol.SignedAnswer
	var halted, after protocol.Status
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("halt", map[string]string{"reason": "agent says stop"})
		stop = alice.sign(t, protocol.Answer{WorkflowID: "default-test-workflow-id", RunID: "default-test-run-id",
			Action: protocol.ActionHalt, Reason: "enough", By: "alice", KeyID: "alice",
			NotBefore: env.Now(), NotAfter: env.Now().Add(59 * time.Minute)})
		env.SignalWorkflow("halt", stop)
	}, 30*time.Minute)
	env.RegisterDelayedCallback(func() {
		halted = status(t, env)
		a := alice.answer(halted, env.Now())
		a.Action, a.Guidance = protocol.ActionResume, ""
		env.SignalWorkflow("resume", alice.sign(t, a))
	}, 80*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("halt", stop) // again, inside its window
	}, 81*time.Minute)
	env.RegisterDelayedCallback(func() { after = status(t, env) }, 82*time.Minute)
	env.ExecuteWorkflow(scriptLoop, give)
	result(t, env)

	require.NotNil(t, halted.Halt)
	assert.Equal(t, protocol.ReasonUserStop, halted.Halt.HaltReason)
	assert.Contains(t, halted.Halt.Message, "alice asked to stop: enough")
	require.NotEmpty(t, halted.Refused)
	assert.Contains(t, halted.Refused[0].Reason, "unsigned")
	require.NotEmpty(t, after.Refused)
	assert.Contains(t, after.Refused[len(after.Refused)-1].Reason, "signed after halt 0, but the execution has had 1 halts")
}

// TestSignedUpdate: a forged resume update is refused by its validator
// with the reason, and the halt stays; a signed one is accepted and its
// decision names the key.
func TestSignedUpdate(t *testing.T) {
	alice, mallory := newOperator(t, "alice"), newOperator(t, "mallory")
	env := newEnv(t, interceptor.Options{OperatorKeys: []interceptor.OperatorKey{alice.key()}})
	var refused, unsigned error
	var decision protocol.Decision
	var details string
	env.RegisterDelayedCallback(func() {
		details = currentDetails(t, env)
		s := status(t, env)
		env.UpdateWorkflow("resume", "u1", &testUpdate{onReject: func(err error) { refused = err }}, mallory.sign(t, mallory.answer(s, env.Now())))
		env.UpdateWorkflow("resume", "u2", &testUpdate{onReject: func(err error) { unsigned = err }}, map[string]string{"reason": "x"})
	}, decideAfter)
	env.RegisterDelayedCallback(func() {
		s := status(t, env)
		require.Equal(t, protocol.StateHalted, s.State)
		env.UpdateWorkflow("resume", "u3", &testUpdate{onComplete: func(v any, err error) {
			require.NoError(t, err)
			decision = v.(protocol.Decision)
		}}, alice.sign(t, alice.answer(s, env.Now())))
	}, decideAfter+time.Minute)
	env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
	res := result(t, env)
	require.Error(t, refused)
	assert.Contains(t, refused.Error(), `unknown key id "mallory"`)
	require.Error(t, unsigned)
	assert.Contains(t, unsigned.Error(), "unsigned")
	assert.False(t, res.Escalated)
	assert.Equal(t, "alice", decision.KeyID)
	assert.Contains(t, details, "Answers must be signed")
	assert.Contains(t, details, `go run ./worker answer --workflow-id default-test-workflow-id --key your-name.key resume --guidance "what to do differently"`)
	assert.NotContains(t, details, "temporal workflow signal", "a plain answer would be refused")
}

// TestUnsignedWithoutKeys: without keys, a plain resume works as before
// and a SignedAnswer is refused as an unknown field: nothing changes for
// users who set none.
func TestUnsignedWithoutKeys(t *testing.T) {
	alice := newOperator(t, "alice")
	env := newEnv(t, interceptor.Options{})
	var after protocol.Status
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow("resume", alice.sign(t, alice.answer(status(t, env), env.Now())))
	}, decideAfter)
	env.RegisterDelayedCallback(func() {
		after = status(t, env)
		env.SignalWorkflow("resume", map[string]string{"reason": "fine"})
	}, decideAfter+time.Minute)
	env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
	res := result(t, env)
	assert.False(t, res.Escalated)
	require.NotNil(t, after.LastRejected)
	assert.Contains(t, after.LastRejected.Reason, `unknown field "answer"`)
	assert.Empty(t, after.Refused, "Refused is kept only with keys set")
}

// TestOperatorKeysValidated: bad keys are an OptionError naming the field.
func TestOperatorKeysValidated(t *testing.T) {
	good := newOperator(t, "alice").key()
	for _, tt := range []struct {
		keys  []interceptor.OperatorKey
		field string
	}{
		{[]interceptor.OperatorKey{{ID: "alice", PublicKey: make([]byte, 31)}}, "OperatorKeys[0].PublicKey"},
		{[]interceptor.OperatorKey{{ID: "alice", PublicKey: make([]byte, 64)}}, "OperatorKeys[0].PublicKey"},
		{[]interceptor.OperatorKey{{ID: "", PublicKey: good.PublicKey}}, "OperatorKeys[0].ID"},
		{[]interceptor.OperatorKey{{ID: " alice", PublicKey: good.PublicKey}}, "OperatorKeys[0].ID"},
		{[]interceptor.OperatorKey{good, good}, "OperatorKeys[1].ID"},
	} {
		_, err := interceptor.New(interceptor.Options{OperatorKeys: tt.keys})
		var oe *interceptor.OptionError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, tt.field, oe.Field)
	}
	_, err := interceptor.New(interceptor.Options{OperatorKeys: []interceptor.OperatorKey{good}})
	require.NoError(t, err)
}

// TestSignedAnswerJSON: the payload's JSON round-trips, extend's durations
// as strings; what is signed does not depend on the JSON's layout.
func TestSignedAnswerJSON(t *testing.T) {
	alice := newOperator(t, "alice")
	at := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	a := protocol.Answer{WorkflowID: "w", RunID: "r", HaltSeq: 3, Action: protocol.ActionResume, Guidance: "g",
		Extend: &detect.Extension{MaxNodeRuntime: 90 * time.Second, MaxCycleIterations: 2}, KeyID: "alice",
		NotBefore: at, NotAfter: at.Add(10 * time.Minute)}
	s := alice.sign(t, a)
	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"extend":{"maxCycleIterations":2,"maxNodeRuntime":"1m30s"}`)
	var back protocol.SignedAnswer
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, s.Answer.SigningBytes(), back.Answer.SigningBytes())
	assert.True(t, ed25519.Verify(alice.key().PublicKey, back.Answer.SigningBytes(), back.Signature))

	// A time written in another zone is the same instant: the same bytes.
	local := a
	local.NotBefore = at.In(time.FixedZone("CET", 3600))
	assert.Equal(t, a.SigningBytes(), local.SigningBytes())
	assert.Equal(t, "loopguard signed answer v1\nworkflowId 1:w\nrunId 1:r\nhaltSeq 1:3\naction 6:resume\nreason 0:\nby 0:\nguidance 1:g\n"+
		"extend 41:maxNodeRuntime=9e+10,maxCycleIterations=2\nkeyId 5:alice\nnotBefore 20:2026-11-27T20:00:00Z\nnotAfter 20:2026-11-27T20:10:00Z\n",
		string(a.SigningBytes()))
}

// TestSignedCommandsNameTheProtocol: with keys set, the answer command
// the current details print names the status query, update and signal the
// guard was configured with where they are not the defaults, and only
// there (the signed action must match the name it is sent as).
func TestSignedCommandsNameTheProtocol(t *testing.T) {
	alice := newOperator(t, "alice")
	tests := []struct {
		name        string
		give        interceptor.Options
		wantResume  string
		wantEscal   string
		wantMissing []string
	}{
		{
			name:        "defaults",
			give:        interceptor.Options{},
			wantResume:  `go run ./worker answer --workflow-id default-test-workflow-id --key your-name.key resume --guidance`,
			wantEscal:   `go run ./worker answer --workflow-id default-test-workflow-id --key your-name.key escalate --reason`,
			wantMissing: []string{"--update-name", "--signal-name", "--status-query"},
		},
		{
			name: "renamed",
			give: interceptor.Options{ResumeSignal: "lg.resume", EscalateSignal: "lg.escalate", ResumeUpdate: "lg.resume-now",
				EscalateUpdate: "lg.escalate-now", StatusQuery: "lg.status"},
			wantResume: `go run ./worker answer --workflow-id default-test-workflow-id --key your-name.key --status-query lg.status --update-name lg.resume-now --signal-name lg.resume resume --guidance`,
			wantEscal:  `go run ./worker answer --workflow-id default-test-workflow-id --key your-name.key --status-query lg.status --update-name lg.escalate-now --signal-name lg.escalate escalate --reason`,
		},
		{
			name:        "only the update renamed",
			give:        interceptor.Options{ResumeUpdate: "lg.resume-now"},
			wantResume:  `--key your-name.key --update-name lg.resume-now resume --guidance`,
			wantEscal:   `--key your-name.key escalate --reason`,
			wantMissing: []string{"--signal-name", "--status-query"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.give
			opts.OperatorKeys = []interceptor.OperatorKey{alice.key()}
			env := newEnv(t, opts)
			var details string
			env.RegisterDelayedCallback(func() { details = currentDetails(t, env) }, decideAfter)
			env.ExecuteWorkflow(scriptLoop, repeat(5, "Code", "same"))
			assert.Contains(t, details, tt.wantResume)
			assert.Contains(t, details, tt.wantEscal)
			for _, s := range tt.wantMissing {
				assert.NotContains(t, details, s)
			}
		})
	}
}

// TestAnswerNamesFor: each action's signal and update, and none for a halt
// sent as an update or for an action the guard does not take.
