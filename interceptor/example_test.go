package interceptor_test

import (
	"errors"
	"fmt"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
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

func ExampleCheckWorkflows() {
	agentLoop := func(workflow.Context) error { return nil } // a workflow function, as the worker registers it
	opts := interceptor.Options{Workflows: []string{"AgentLoop", "toolAgent"}}
	err := interceptor.CheckWorkflows(opts, "AgentLoop", "ToolAgent", agentLoop)
	fmt.Println(err)
	// Output:
	// loopguard: invalid option Workflows[1]: names "toolAgent", which is not registered: did you mean "ToolAgent"? Its executions would not be guarded
}

func ExampleNoticeFor() {
	// In workflow code that builds its model's prompt itself:
	agent := func(ctx workflow.Context, conversation []string) ([]string, error) {
		prompt := conversation
		if n, ok := interceptor.NoticeFor(ctx, "CallModel"); ok {
			if n.Warning != nil {
				prompt = append(prompt, n.Warning.Directive+" ("+n.Budget.String()+")")
			}
			if n.Guidance != "" {
				prompt = append(prompt, "A reviewer says: "+n.Guidance)
			}
		}
		return prompt, nil // then: workflow.ExecuteActivity(ctx, "CallModel", prompt)
	}
	_ = agent
	fmt.Println(protocol.Budget{Node: "CallModel", Steps: 7, MaxSteps: 150, Iteration: 6, MaxIterations: 150, TotalCalls: 14, MaxTotalCalls: 1000})
	// Output:
	// Loop 6/150, CallModel 7/150 steps, 14/1000 calls
}
