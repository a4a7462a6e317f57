package main

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/workflows"
)

// startWorker starts a worker on taskQueue with the guard configured by
// opts and the sample workflows and activities registered. A workflow type
// the policy's workflows name that the worker does not register is a WARN
// line naming it: its executions would go unguarded, silently.
func startWorker(c client.Client, taskQueue string, opts interceptor.Options, logger *zap.Logger) (worker.Worker, error) {
	guard, err := interceptor.New(opts)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, taskQueue, worker.Options{
		Interceptors: []sdkinterceptor.WorkerInterceptor{guard},
	})
	workflows.Register(w)
	warnUnregistered(opts, logger)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker on task queue %q: %w", taskQueue, err)
	}
	return w, nil
}

// ensureSupervisor starts the Supervisor workflow unless it is running.
func ensureSupervisor(ctx context.Context, c client.Client, id, taskQueue string) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.Supervisor)
	if err != nil {
		return nil, fmt.Errorf("start the supervisor workflow %q: %w", id, err)
	}
	return run, nil
}

// warnUnregistered logs a WARN line naming each workflow type the guard's
// Options.Workflows names that this worker does not register.
func warnUnregistered(opts interceptor.Options, logger *zap.Logger) {
	if err := interceptor.CheckWorkflows(opts, workflows.Workflows()...); err != nil {
		logger.Warn("the policy's workflows name a workflow type this worker does not register: nothing of that type is guarded", zap.Error(err))
	}
}
