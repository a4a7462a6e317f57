package interceptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// OperatorKey is the Ed25519 public key of a person who may answer a halt
// (Options.OperatorKeys). Ed25519 is in Go's standard library, has one
// key size and no parameters to get wrong, and verifies a signature in
// tens of microseconds: a worker checks answers with public keys alone and
// holds no secret an agent on its host could read.
type OperatorKey struct {
	// ID names the key in a SignedAnswer ("alice-2026"): unique among the
	// keys, without surrounding spaces, at most MaxKeyIDBytes.
	ID string `json:"id"`
	// PublicKey is the 32-byte public key (base64 in JSON).
	PublicKey ed25519.PublicKey `json:"publicKey"`
}

// MaxKeyIDBytes bounds an OperatorKey's ID.
const MaxKeyIDBytes = 64

// validateOperatorKeys checks Options.OperatorKeys and returns a copy the
// config owns.
func validateOperatorKeys(keys []OperatorKey) ([]OperatorKey, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out := make([]OperatorKey, len(keys))
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		field := fmt.Sprintf("OperatorKeys[%d]", i)
		switch {
		case strings.TrimSpace(k.ID) == "" || strings.TrimSpace(k.ID) != k.ID:
			return nil, &OptionError{Field: field + ".ID", Reason: fmt.Sprintf("must be a non-blank name without surrounding spaces, got %q", k.ID)}
		case len(k.ID) > MaxKeyIDBytes:
			return nil, &OptionError{Field: field + ".ID", Reason: fmt.Sprintf("is %d bytes long, more than %d", len(k.ID), MaxKeyIDBytes)}
		case seen[k.ID]:
			return nil, &OptionError{Field: field + ".ID", Reason: fmt.Sprintf("%q names two keys", k.ID)}
		case len(k.PublicKey) != ed25519.PublicKeySize:
			return nil, &OptionError{Field: field + ".PublicKey", Reason: fmt.Sprintf("is %d bytes, want %d (an Ed25519 public key)", len(k.PublicKey), ed25519.PublicKeySize)}
		}
		seen[k.ID] = true
		out[i] = OperatorKey{ID: k.ID, PublicKey: bytes.Clone(k.PublicKey)}
	}
	return out, nil
}

// verified is the last signature the guard checked and found good. An
// update's validator and its handler read the same payload in one workflow
// task: the second check costs a comparison, not a second verification.
// A verdict depends only on the bytes and the pinned keys, so the memo
// changes no decision, live or in replay.
type verified struct {
	keyID    string
	msg, sig []byte
}

// answerAction is the Action an answer sent as name must carry.
func (c *core) answerAction(name string) protocol.Action {
	switch name {
	case c.cfg.ResumeSignal, c.cfg.ResumeUpdate:
		return protocol.ActionResume
	case c.cfg.EscalateSignal, c.cfg.EscalateUpdate:
		return protocol.ActionEscalate
	}
	return protocol.ActionHalt
}

// maxRefused bounds the refused answers Status.Refused lists.
const maxRefused = 8

// signedInput reads the payload p of name as a signed answer
// (signedRequest) and checks what it carries as any request is checked.
func (c *core) signedInput(name string, p *commonpb.Payload, now time.Time) (request, error) {
	data, err := inputData(c.cfg.MaxPayloadBytes, p)
	if err != nil {
		return request{}, err
	}
	req, err := c.signedRequest(name, data, now)
	if err != nil {
		return request{}, err
	}
	return req, validateResume(&req.ResumeRequest)
}

// signedRequest reads the answer data (the plain JSON of a resume,
// escalate or halt sent as name) when Options.OperatorKeys are set: it is
// taken only as a SignedAnswer, signed by one of the keys pinned for the
// execution, for this execution, this action and the halt in force, at a
// workflow time (now) inside its window. It returns the request the answer
// carries, or why it is refused. It reads the guard's state and changes
// none but the memo of the last good signature.
func (c *core) signedRequest(name string, data []byte, now time.Time) (request, error) {
	a, err := c.signedFor(name, data)
	if err != nil {
		return request{}, err
	}
	switch {
	case a.NotAfter.Before(a.NotBefore):
		return request{}, fmt.Errorf("validity window ends (%s) before it begins (%s)", stamp(a.NotAfter), stamp(a.NotBefore))
	case a.NotAfter.Sub(a.NotBefore) > protocol.MaxAnswerWindow:
		return request{}, fmt.Errorf("validity window of %s is longer than %s", a.NotAfter.Sub(a.NotBefore), protocol.MaxAnswerWindow)
	case now.Before(a.NotBefore):
		return request{}, fmt.Errorf("not valid yet: valid from %s, workflow time is %s", stamp(a.NotBefore), stamp(now))
	case now.After(a.NotAfter):
		return request{}, fmt.Errorf("expired: valid until %s, workflow time is %s", stamp(a.NotAfter), stamp(now))
	}
	switch {
	case a.Action == protocol.ActionHalt:
		if a.HaltSeq != c.halts {
			return request{}, fmt.Errorf("signed after halt %d, but the execution has had %d halts", a.HaltSeq, c.halts)
		}
	case c.pause.inForce() && a.HaltSeq != c.pause.halt.Seq:
		return request{}, fmt.Errorf("signed for halt %d, but halt %d is in force", a.HaltSeq, c.pause.halt.Seq)
	}
	// With nothing in force, the decision's own check says so.
	return request{protocol.ResumeRequest{Reason: a.Reason, By: a.By, Guidance: a.Guidance, Extend: a.Extend}, a.KeyID}, nil
}

// signedFor reads answer data sent as name and checks what does not
// depend on when it is taken: a SignedAnswer, signed by one of the keys
// pinned for the execution, for this execution and this action. It
// returns the answer signed.
func (c *core) signedFor(name string, data []byte) (protocol.Answer, error) {
	if len(data) == 0 || data[0] != '{' {
		return protocol.Answer{}, fmt.Errorf("unsigned: operators' keys are set, so an answer must be a SignedAnswer (see docs/halts.md)")
	}
	var s protocol.SignedAnswer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return protocol.Answer{}, fmt.Errorf("unsigned or malformed: operators' keys are set, so an answer must be a SignedAnswer: %s", jsonProblem(err))
	}
	if dec.More() {
		return protocol.Answer{}, fmt.Errorf("malformed JSON: trailing data after the object")
	}
	a := s.Answer
	var key ed25519.PublicKey
	for _, k := range c.cfg.OperatorKeys {
		if k.ID == a.KeyID {
			key = k.PublicKey
			break
		}
	}
	if key == nil {
		return protocol.Answer{}, fmt.Errorf("unknown key id %q: not one of the operators' keys pinned for this execution", strictjson.Truncate(a.KeyID, MaxKeyIDBytes))
	}
	if len(key) != ed25519.PublicKeySize {
		// New refuses such a key; one can only come from a carried config
		// written by other code. Verify would panic on it.
		return protocol.Answer{}, fmt.Errorf("key %q pinned for this execution is %d bytes, not an Ed25519 public key", a.KeyID, len(key))
	}
	if len(s.Signature) != ed25519.SignatureSize {
		return protocol.Answer{}, fmt.Errorf("malformed signature: %d bytes, want %d", len(s.Signature), ed25519.SignatureSize)
	}
	msg := a.SigningBytes()
	if v := c.verified; v == nil || v.keyID != a.KeyID || !bytes.Equal(v.sig, s.Signature) || !bytes.Equal(v.msg, msg) {
		if !ed25519.Verify(key, msg, s.Signature) {
			return protocol.Answer{}, fmt.Errorf("bad signature: key %q did not sign this answer (altered after signing, or signed with another key)", a.KeyID)
		}
		c.verified = &verified{keyID: a.KeyID, msg: msg, sig: s.Signature}
	}
	// Signed by an operator: now whether it is for this action, here.
	if want := c.answerAction(name); a.Action != want {
		return protocol.Answer{}, fmt.Errorf("signed for %q, sent as %s", strictjson.Truncate(string(a.Action), 32), name)
	}
	info := c.info.WorkflowExecution
	if !c.thisRun(a.RunID) || a.WorkflowID != info.ID && !c.anyWorkflowID {
		return protocol.Answer{}, fmt.Errorf("signed for another execution (workflow %q run %q), not workflow %q run %q",
			strictjson.Truncate(a.WorkflowID, 200), strictjson.Truncate(a.RunID, 64), info.ID, info.RunID)
	}
	return a, nil
}

// stamp is a workflow time as the refusals show it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// thisRun reports whether runID names this execution: its run, or the run
// its reset chain started from (workflow.Info.OriginalRunID). A reset run
// replays its base run's events up to the reset point, the answers signed
// for that run among them; refused there, they would make the reset run's
// commands differ from the history it copied, and its workflow task would
// fail for ever. Not version-gated: no history in which such an answer was
// taken replayed before. Limit: an answer signed for a run between the
// first and this one (a reset of a reset run, answered in between) is not
// known as this execution's.
func (c *core) thisRun(runID string) bool {
	return runID == c.info.WorkflowExecution.RunID || runID != "" && runID == c.info.OriginalRunID
}
