package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
)

// MaxAnswerWindow is the longest validity window (Answer.NotAfter minus
// Answer.NotBefore) a signed answer may have: an answer is made to be
// sent now, and one that lay about for longer is refused.
const MaxAnswerWindow = time.Hour

// Answer is what an operator signs: one decision (Action) on one halt
// (HaltSeq) of one execution (WorkflowID, RunID), with what it carries,
// who signs it, and the workflow time it is valid in. Every field is
// covered by the signature (see SigningBytes).
type Answer struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	// HaltSeq is the HaltEvent.Seq of the halt a resume or escalate
	// answers; for a halt request, the number of halts the execution has
	// had so far (Status.Halts), so that it cannot be sent again after
	// the halt it asked for.
	HaltSeq int `json:"haltSeq"`
	// Action is resume, escalate or halt, and must match the signal or
	// update it is sent with.
	Action Action `json:"action"`
	// Reason, By, Guidance and Extend are a ResumeRequest's (Guidance and
	// Extend for resume only).
	Reason   string            `json:"reason,omitempty"`
	By       string            `json:"by,omitempty"`
	Guidance string            `json:"guidance,omitempty"`
	Extend   *detect.Extension `json:"extend,omitempty"`
	// KeyID names the interceptor.OperatorKey that signs.
	KeyID string `json:"keyId"`
	// NotBefore and NotAfter bound the workflow time (workflow.Now) at
	// which the answer is taken, at most MaxAnswerWindow apart.
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
}

// SignedAnswer is the payload of a resume, escalate or halt (signal or
// update) when interceptor.Options.OperatorKeys are set: an Answer and the Ed25519
// signature of its SigningBytes by the key it names.
//
//	{"answer":{"workflowId":"w","runId":"r","haltSeq":1,"action":"resume",
//	  "guidance":"...","keyId":"alice","notBefore":"...","notAfter":"..."},
//	 "signature":"<base64>"}
type SignedAnswer struct {
	Answer    Answer `json:"answer"`
	Signature []byte `json:"signature"`
}

// SigningBytes is the byte string an operator signs: signingPrefix, then
// each field in the order of the Answer struct as "name len:value\n",
// where len is the value's length in bytes in decimal (so no value can
// run into the next). Values: strings as they are; haltSeq in decimal;
// extend as "key=value" pairs joined by "," in the order of
// detect.Budgets(), zero values left out, each value a float64 in Go's
// shortest 'g' form (durations in nanoseconds); times in RFC 3339 with
// nanoseconds, in UTC. The JSON form of the payload is not what is
// signed, so a sender may re-format it (the Temporal UI does) freely.
func (a Answer) SigningBytes() []byte {
	var b bytes.Buffer
	b.Grow(len(signingPrefix) + 256 + len(a.Reason) + len(a.By) + len(a.Guidance))
	b.WriteString(signingPrefix)
	field := func(name, v string) {
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
		b.WriteByte('\n')
	}
	field("workflowId", a.WorkflowID)
	field("runId", a.RunID)
	field("haltSeq", strconv.Itoa(a.HaltSeq))
	field("action", string(a.Action))
	field("reason", a.Reason)
	field("by", a.By)
	field("guidance", a.Guidance)
	field("extend", extensionText(a.Extend))
	field("keyId", a.KeyID)
	field("notBefore", a.NotBefore.UTC().Format(time.RFC3339Nano))
	field("notAfter", a.NotAfter.UTC().Format(time.RFC3339Nano))
	return b.Bytes()
}

// SignAnswer signs a with key, an Ed25519 private key whose public half
// is the interceptor.OperatorKey named a.KeyID.
func SignAnswer(a Answer, key ed25519.PrivateKey) (SignedAnswer, error) {
	if len(key) != ed25519.PrivateKeySize {
		return SignedAnswer{}, fmt.Errorf("loopguard: private key of %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	return SignedAnswer{Answer: a, Signature: ed25519.Sign(key, a.SigningBytes())}, nil
}

// UnmarshalJSON decodes an Answer strictly: unknown fields are refused,
// and extend's durations are duration strings ("10m"), as in a resume.
func (a *Answer) UnmarshalJSON(data []byte) error {
	var raw answerJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	out := Answer(raw.plainAnswer)
	if len(raw.Extend) > 0 && string(raw.Extend) != "null" {
		out.Extend = new(detect.Extension)
		if err := strictjson.Decode("extend", raw.Extend, reflect.ValueOf(out.Extend).Elem()); err != nil {
			return err
		}
	}
	*a = out
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (a Answer) MarshalJSON() ([]byte, error) {
	raw := answerJSON{plainAnswer: plainAnswer(a)}
	if a.Extend != nil {
		ext, err := json.Marshal(strictjson.Encode(reflect.ValueOf(*a.Extend)))
		if err != nil {
			return nil, err
		}
		raw.Extend = ext
	}
	return json.Marshal(raw)
}

// signingPrefix starts the signed bytes: it names what they are, so that
// a signature made for anything else never verifies as an answer.
const signingPrefix = "loopguard signed answer v1\n"

// extensionText is an Extension's canonical text for SigningBytes.
func extensionText(e *detect.Extension) string {
	if e == nil {
		return ""
	}
	var parts []string
	for _, row := range detect.Budgets() {
		if v := row.ExtensionValue(e); v != 0 {
			parts = append(parts, row.JSON+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// answerJSON is the Answer's JSON form with extend left raw, for the strict
// decoder that reads its durations as the policy file does: its Extend
// hides the Answer's, which has the same JSON name one level down.
type answerJSON struct {
	plainAnswer
	Extend json.RawMessage `json:"extend,omitempty"`
}

// plainAnswer has the Answer's fields without its methods.
type plainAnswer Answer
