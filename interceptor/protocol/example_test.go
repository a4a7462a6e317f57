package protocol_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"time"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// An operator signs a resume of halt 1 of one execution; the workers hold
// only the public key.
func ExampleSignAnswer() {
	seed := make([]byte, ed25519.SeedSize) // use ed25519.GenerateKey: a fixed seed keeps the output stable
	priv := ed25519.NewKeyFromSeed(seed)
	_, err := interceptor.New(interceptor.Options{
		OperatorKeys: []interceptor.OperatorKey{{ID: "alice", PublicKey: priv.Public().(ed25519.PublicKey)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	from := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	signed, err := protocol.SignAnswer(protocol.Answer{
		WorkflowID: "agent-7", RunID: "0f3c9a", HaltSeq: 1, Action: protocol.ActionResume,
		Guidance: "check the API version", By: "alice", KeyID: "alice",
		NotBefore: from, NotAfter: from.Add(10 * time.Minute),
	}, priv)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The payload of the resume signal or update.
	payload, _ := json.Marshal(signed)
	fmt.Println(len(signed.Signature), json.Valid(payload))
	fmt.Print(string(signed.Answer.SigningBytes()))
	// Output:
	// 64 true
	// loopguard signed answer v1
	// workflowId 7:agent-7
	// runId 6:0f3c9a
	// haltSeq 1:1
	// action 6:resume
	// reason 0:
	// by 5:alice
	// guidance 21:check the API version
	// extend 0:
	// keyId 5:alice
	// notBefore 20:2026-11-27T21:00:00Z
	// notAfter 20:2026-11-27T21:10:00Z
}
