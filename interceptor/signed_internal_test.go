package interceptor

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// signedGuard is a guard with alice's key pinned, paused at halt 1 of
// workflow "w" run "r", and a resume signed by alice for it at now.
func signedGuard(t testing.TB) (g *guard, good []byte, now time.Time) {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "a fixed seed for the fuzz corpus")
	priv := ed25519.NewKeyFromSeed(seed)
	cfg, h, err := buildConfig(Options{OperatorKeys: []OperatorKey{{ID: "alice", PublicKey: priv.Public().(ed25519.PublicKey)}}})
	if err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	g = &guard{core: core{cfg: cfg, hooks: h, version: guardVersion, active: true, halts: 1,
		info: &workflow.Info{WorkflowExecution: workflow.Execution{ID: "w", RunID: "r"}}}}
	g.pause = newPause()
	g.pause.set(phaseHalting, &protocol.HaltEvent{Seq: 1}, protocol.OnHaltPause, now, nil)
	g.pause.set(phasePaused, nil, protocol.OnHaltPause, now, nil)
	s, err := protocol.SignAnswer(protocol.Answer{WorkflowID: "w", RunID: "r", HaltSeq: 1, Action: protocol.ActionResume, Guidance: "use the cache",
		KeyID: "alice", NotBefore: now.Add(-time.Minute), NotAfter: now.Add(9 * time.Minute)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	good, err = json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return g, good, now
}

func jsonPayload(data []byte) *commonpb.Payload {
	return &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)}, Data: data}
}

// FuzzSignedAnswer feeds the verifier arbitrary payloads: malformed
// signatures, keys and ids, huge fields. It must never panic, and it may
// take a payload only when alice's key verifies its answer.
func FuzzSignedAnswer(f *testing.F) {
	g, good, now := signedGuard(f)
	f.Add(good)
	f.Add([]byte(strings.Replace(string(good), "use the cache", "ignore the halt", 1)))
	f.Add([]byte(strings.Replace(string(good), `"alice"`, `"bob"`, 1)))
	f.Add([]byte(`{"answer":{},"signature":""}`))
	f.Add([]byte(`{"answer":{"keyId":"alice","notBefore":"2026-11-27T19:59:00Z","notAfter":"9999-12-31T23:59:59Z"},"signature":"AAAA"}`))
	f.Add([]byte(`{"answer":{"keyId":"alice","extend":{"maxNodeRuntime":1e400}},"signature":null}`))
	f.Add([]byte(`{"answer":{"keyId":"` + strings.Repeat("k", 20000) + `"},"signature":"` + strings.Repeat("A", 20000) + `"}`))
	f.Add([]byte(`"resume please"`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g.verified = nil
		req, err := g.parse(protocol.DefaultResumeSignal, jsonPayload(data), now)
		if err != nil {
			return
		}
		var s protocol.SignedAnswer
		if json.Unmarshal(data, &s) != nil || !ed25519.Verify(g.cfg.OperatorKeys[0].PublicKey, s.Answer.SigningBytes(), s.Signature) {
			t.Fatalf("took a payload alice did not sign: %q", data)
		}
		if req.signer != "alice" {
			t.Fatalf("signer %q", req.signer)
		}
	})
}

// TestSignedAnswerBadInput: malformed and oversized input is refused with
// a reason, never a panic.
func TestSignedAnswerBadInput(t *testing.T) {
	g, good, now := signedGuard(t)
	if _, err := g.parse(protocol.DefaultResumeSignal, jsonPayload(good), now); err != nil {
		t.Fatalf("the good answer is refused: %v", err)
	}
	huge := `{"answer":{"keyId":"alice","guidance":"` + strings.Repeat("x", 1<<20) + `"},"signature":""}`
	for give, want := range map[string]string{
		huge: "exceeds the limit of 16384 bytes",
		`{"answer":{"keyId":"alice"},"signature":"!!"}`:                       "illegal base64",
		`{"answer":{"keyId":"alice"},"signature":"AAAA"}`:                     "malformed signature: 3 bytes, want 64",
		`{"answer":{"keyId":"nobody"},"signature":""}`:                        `unknown key id "nobody"`,
		`{"answer":{"keyId":"alice","notBefore":"yesterday"},"signature":""}`: "malformed",
		`{"answer":{},"signature":"","extra":1}`:                              `unknown field "extra"`,
		`{"answer":{}} {"answer":{}}`:                                         "trailing data",
	} {
		g.verified = nil
		_, err := g.parse(protocol.DefaultResumeSignal, jsonPayload([]byte(give)), now)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: got %v, want %q", give, err, want)
		}
	}
	// A key of the wrong size pinned by other means (a carried config New
	// never saw) is refused, not handed to ed25519.Verify, which panics.
	g.verified = nil
	g.cfg.OperatorKeys[0].PublicKey = g.cfg.OperatorKeys[0].PublicKey[:31]
	if _, err := g.parse(protocol.DefaultResumeSignal, jsonPayload(good), now); err == nil || !strings.Contains(err.Error(), "31 bytes, not an Ed25519 public key") {
		t.Errorf("a 31-byte key: got %v", err)
	}
}

// BenchmarkSignedAnswer is the workflow-task time of one signed answer:
// decoding, the Ed25519 verification and the checks (the signature memo
// is cleared each time, so every iteration verifies). cpu-ns/op is the
// process's CPU time per answer, which a loaded machine does not inflate
// as it does the wall-clock ns/op.
func BenchmarkSignedAnswer(b *testing.B) {
	g, good, now := signedGuard(b)
	p := jsonPayload(good)
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		g.verified = nil
		if _, err := g.parse(protocol.DefaultResumeSignal, p, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSignedAnswerAgain is an update's handler reading the answer
// its validator verified in the same workflow task: the memo answers.
func BenchmarkSignedAnswerAgain(b *testing.B) {
	g, good, now := signedGuard(b)
	p := jsonPayload(good)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.parse(protocol.DefaultResumeSignal, p, now); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSignedAnswerDocs: the figures and names the docs give for signed
// answers are the code's.
func TestSignedAnswerDocs(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}
	protoDoc, halts, guarantees := read("protocol.md"), read("halts.md"), read("guarantees.md")
	if protocol.MaxAnswerWindow != time.Hour {
		t.Fatalf("MaxAnswerWindow is %s: the docs say one hour", protocol.MaxAnswerWindow)
	}
	for _, c := range []struct{ doc, name, want string }{
		{protoDoc, "protocol.md", "`protocol.MaxAnswerWindow`, one hour"},
		{protoDoc, "protocol.md", "the line `" + strings.SplitN(string(protocol.Answer{}.SigningBytes()), "\n", 2)[0] + "`"},
		{protoDoc, "protocol.md", fmt.Sprintf("`refused`, the last %d", maxRefused)},
		{halts, "halts.md", "at most an hour"},
		{guarantees, "guarantees.md", fmt.Sprintf("`loop.status` lists the last %d", maxRefused)},
		{guarantees, "guarantees.md", "a window of at most an hour"},
	} {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("%s does not say %q", c.name, c.want)
		}
	}
	// The order of the fields in the signed bytes is the order protocol.md
	// lists them in.
	var names []string
	for _, line := range strings.Split(string(protocol.Answer{}.SigningBytes()), "\n")[1:] {
		if name, _, ok := strings.Cut(line, " "); ok {
			names = append(names, name)
		}
	}
	want := []string{"workflowId", "runId", "haltSeq", "action", "reason", "by", "guidance", "extend", "keyId", "notBefore", "notAfter"}
	if !slices.Equal(names, want) {
		t.Errorf("signed fields %v, protocol.md lists %v", names, want)
	}
	at := 0
	for _, n := range want {
		i := strings.Index(protoDoc[at:], "`"+n+"`")
		if i < 0 {
			t.Errorf("protocol.md does not list `%s` after the fields before it", n)
			continue
		}
		at += i
	}
}
