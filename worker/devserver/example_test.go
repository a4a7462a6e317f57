package devserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/worker/devserver"
)

func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// An in-memory server on free ports, with the guard's search attribute.
	// Leave Ephemeral and FreePorts out to keep state in ./loopguard-data and
	// listen on 127.0.0.1:7233 (UI on http://127.0.0.1:8233).
	srv, err := devserver.Start(ctx, devserver.Options{
		Ephemeral:  true,
		FreePorts:  true,
		UIDisabled: true,
		SearchAttributes: map[string]enumspb.IndexedValueType{
			"LoopGuardState": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()

	c, err := srv.NewClient(client.Options{
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	w := worker.New(c, "example", worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, name string) (string, error) {
		return "hello " + name, nil
	}, workflow.RegisterOptions{Name: "hello"})
	if err := w.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "example"}, "hello", "loopguard")
	if err != nil {
		fmt.Println(err)
		return
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out, "in namespace", srv.Namespace())
	// Output: hello loopguard in namespace default
}
