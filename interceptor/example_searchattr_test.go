package interceptor_test

import (
	"context"
	"fmt"
	"log"

	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
)

// The listing of every halt waiting for an answer: the guard's, through
// its search attribute, and Temporal's Workflow Pause.
func ExampleHaltsQuery() {
	fmt.Println(interceptor.HaltsQuery("LoopGuardState"))
	fmt.Println(interceptor.HaltsQuery("")) // a guard without the attribute: the paused executions only
	// Output:
	// (LoopGuardState STARTS_WITH "halted" AND ExecutionStatus = "Running") OR ExecutionStatus = "Paused"
	// ExecutionStatus = "Paused"
}

// Register the guard's attributes before the worker starts, so that the
// first halt's upsert finds them.
func ExampleRegisterSearchAttributes() {
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	opts := interceptor.Options{SearchAttribute: "LoopGuardState", PausedSinceAttribute: "LoopGuardPausedSince"}
	if err := interceptor.RegisterSearchAttributes(context.Background(), c, "default", opts); err != nil {
		log.Fatal(err) // names the CLI command an operator runs where the server refuses
	}
}
