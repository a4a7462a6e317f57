package interceptor_test

import (
	"errors"
	"fmt"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
)

func ExampleNew() {
	guard, err := interceptor.New(interceptor.Options{
		MaxCycleIterations: 6,
		Nodes: map[string]interceptor.NodeOptions{
			"Verify":      {MetricField: "failing"}, // must improve within 3 steps
			"CheckStatus": {Exempt: true},           // a poller, never a loop
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Pass it to worker.New(c, queue, opts).
	opts := worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{guard}}
	fmt.Println(len(opts.Interceptors))

	_, err = interceptor.New(interceptor.Options{Window: 2})
	var oe *interceptor.OptionError
	fmt.Println(errors.As(err, &oe), oe.Field)
	// Output:
	// 1
	// true Window
}

func ExampleIsEscalated() {
	// A guarded call returns this error when its halted loop is escalated.
	err := temporal.NewNonRetryableApplicationError("loop escalated", interceptor.EscalatedErrorType, nil,
		interceptor.Escalation{Reason: "agent is stuck", By: "ana"})
	wrapped := fmt.Errorf("coder turn 4: %w", err)

	fmt.Println(interceptor.IsEscalated(wrapped))
	e, ok := interceptor.EscalationFrom(wrapped)
	fmt.Println(ok, e.Reason, e.By)
	// Output:
	// true
	// true agent is stuck ana
}

func ExampleOperatorCommands() {
	c := interceptor.OperatorCommands("default", "coder-42")
	fmt.Println(c.Resume)
	fmt.Println(c.Escalate)
	fmt.Println(c.Status)
	// Output:
	// temporal workflow signal --workflow-id coder-42 --name resume --input '{"reason":"reviewed the evidence","by":"your-name"}'
	// temporal workflow signal --workflow-id coder-42 --name escalate --input '{"reason":"stopping this loop","by":"your-name"}'
	// temporal workflow query --workflow-id coder-42 --type loop.status
}
