package interceptor

import (
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/workflow"
)

// TestSignedSignalTakenAtItsTask: a signed answer sent as a signal is
// judged at the time of the workflow task that delivers it, not at the time the signal handler's clock shows, which is the
// time of the task before it: for a workflow paused at a halt an hour old,
// the halt's task.
func TestSignedSignalTakenAtItsTask(t *testing.T) {
	hourAgo := -time.Hour
	tests := []struct {
		name    string
		version int
		give    string        // the payload, from signedGuard's good answer
		handler time.Duration // the signal handler's clock, from the answer's time
		task    time.Duration // the delivering task's clock
		held    bool
		want    string // "" taken, else the refusal
	}{
		{name: "an hour-old halt, answered now", version: 13, handler: hourAgo, held: true},
		{name: "answered at once", version: 13, held: true},
		{name: "the task comes after the window", version: 13, handler: hourAgo, task: 10 * time.Minute, held: true, want: "expired: valid until"},
		{name: "unsigned: refused at once", version: 13, give: `{"reason":"trust me"}`, want: "unsigned or malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, good, now := signedGuard(t)
			g.version = workflow.Version(tt.version)
			give := good
			if tt.give != "" {
				give = []byte(tt.give)
			}
			err := g.takeInput(protocol.DefaultResumeSignal, jsonPayload(give), now.Add(tt.handler))
			if got := len(g.held) > 0; got != tt.held {
				t.Fatalf("held %v, want %v (err %v)", got, tt.held, err)
			}
			var refusals []string
			g.core.deliver(now.Add(tt.task), func(_ string, _ *commonpb.Payload, err error) { refusals = append(refusals, err.Error()) })
			if err != nil {
				refusals = append(refusals, err.Error())
			}
			if len(g.held) != 0 {
				t.Fatalf("%d answers still held after the task", len(g.held))
			}
			switch {
			case tt.want == "" && len(refusals) > 0:
				t.Fatalf("refused: %v", refusals)
			case tt.want == "":
				if d := g.pause.decision; d == nil || d.KeyID != "alice" || d.Guidance != "use the cache" {
					t.Fatalf("decision %+v, want alice's resume", d)
				}
			case len(refusals) != 1 || !strings.Contains(refusals[0], tt.want):
				t.Fatalf("refusals %q, want one with %q", refusals, tt.want)
			case g.pause.decision != nil:
				t.Fatalf("refused, yet decided %+v", g.pause.decision)
			}
		})
	}
}
