package watch_test

import (
	"context"
	"fmt"
	"log"

	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/watch"
)

// A watcher over the agent loops of a namespace, judged with a call being
// one tool call; where the server refuses Workflow Pause, a halt requests
// cancellation.
func Example() {
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w, err := watch.New(watch.Options{
		Client:         c,
		Query:          `WorkflowType="AgentLoop"`,
		Guard:          interceptor.Options{Grain: interceptor.GrainToolCall},
		OnPauseRefused: watch.FallbackCancel,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Run follows the executions until its context is done.
	if err := w.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// The pause of a halt has a request id derived from the halt alone, and
// a short reason that says where the evidence is.
func ExamplePauseReason() {
	ev := protocol.HaltEvent{Detector: "identical_output", Node: "WebSearch", Iteration: 3, MaxIterations: 3, Seq: 1}
	fmt.Println(watch.PauseRequestID("agent-7", "0199a2c4", ev.Seq))
	fmt.Println(watch.PauseReason(ev))
	// Output:
	// loopguard-halt:0199a2c4:1
	// loopguard: identical_output on WebSearch, loop 3/3; evidence: watcher log and /status, or worker analyze
}
