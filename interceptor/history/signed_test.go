package history

import (
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// TestRecordedSignedAnswers: the analysis reads a signed answer (a
// SignedAnswer, as the workers take it when operators' keys are set) as
// the request it carries, and a plain one as before; a payload that is
// neither keeps its decoding error. The signed one was read as a
// ResumeRequest alone, and listed with "unable to decode: unknown field
// answer" though the guard took it.
func TestRecordedSignedAnswers(t *testing.T) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	signed, err := protocol.SignAnswer(protocol.Answer{WorkflowID: testWorkflowID, RunID: testRunID, HaltSeq: 1,
		Action: protocol.ActionResume, Reason: "looked", By: "alice", Guidance: "use the v2 API", KeyID: "alice",
		NotBefore: at, NotAfter: at.Add(10 * time.Minute)}, key)
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t)
	b.task(b.guardMarker(13))
	for _, give := range []any{signed, map[string]any{"reason": "plain", "guidance": "use the v1 API"}, map[string]any{"bogus": 1}} {
		b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{
				SignalName: protocol.DefaultResumeSignal, Input: b.payloads(give), Identity: "alice"}}
		})
		b.task()
	}
	got := b.read(Options{}).Recorded.Answers
	if len(got) != 3 {
		t.Fatalf("%d answers recorded, want 3: %+v", len(got), got)
	}
	tests := []struct {
		name               string
		give               RecordedAnswer
		wantGuidance       string
		wantKey, wantError string
	}{
		{name: "signed", give: got[0], wantGuidance: "use the v2 API", wantKey: "alice"},
		{name: "plain", give: got[1], wantGuidance: "use the v1 API"},
		{name: "neither", give: got[2], wantError: "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.give
			if tt.wantError == "" && a.Error != "" {
				t.Fatalf("read with error %q", a.Error)
			}
			if tt.wantError != "" && !strings.Contains(a.Error, tt.wantError) {
				t.Fatalf("error %q, want one with %q", a.Error, tt.wantError)
			}
			if a.Request.Guidance != tt.wantGuidance {
				t.Errorf("guidance %q, want %q", a.Request.Guidance, tt.wantGuidance)
			}
			switch {
			case tt.wantKey == "" && a.Signed != nil:
				t.Errorf("read as signed by %q", a.Signed.KeyID)
			case tt.wantKey != "" && (a.Signed == nil || a.Signed.KeyID != tt.wantKey || a.Signed.HaltSeq != 1 || a.Request.By != "alice"):
				t.Errorf("signed answer read as %+v (request %+v), want key %s for halt 1 by alice", a.Signed, a.Request, tt.wantKey)
			}
		})
	}
}
