package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// actionList lists the runs waiting for an answer.
const actionList protocol.Action = "list"

// maxListed bounds what list prints: a namespace with more halts waiting
// than this wants a visibility query of its own (HaltsQuery).
const maxListed = 1000

// listHalts prints the runs waiting for an answer, as
// interceptor.HaltsQuery selects them: those a guard holds halted (its
// search attribute attr says so; "" or "none": not asked) and those
// Temporal's Workflow Pause holds, which worker watch pauses. A server
// without attr registered gets the second kind, with a note that says so.
func listHalts(ctx context.Context, c client.Client, namespace, attr string, stdout io.Writer) error {
	if attr == searchAttributeNone {
		attr = ""
	}
	execs, err := listExecutions(ctx, c, namespace, interceptor.HaltsQuery(attr))
	var invalid *serviceerror.InvalidArgument
	if attr != "" && errors.As(err, &invalid) {
		fmt.Fprintf(stdout, "(the search attribute %s is not registered here: listing the runs Temporal's Workflow Pause holds only; --search-attribute names another)\n", attr)
		attr = ""
		execs, err = listExecutions(ctx, c, namespace, interceptor.HaltsQuery(""))
	}
	if err != nil {
		return fmt.Errorf("list the halts: %w", err)
	}
	if len(execs) == 0 {
		fmt.Fprintln(stdout, "no run is waiting for an answer")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW ID\tRUN ID\tTYPE\tWAITING")
	for _, e := range execs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), e.GetType().GetName(), waiting(e, attr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(execs) == maxListed {
		fmt.Fprintf(stdout, "(the first %d; the query: %s)\n", maxListed, interceptor.HaltsQuery(attr))
	}
	fmt.Fprintf(stdout, "show one's halt and how to answer it: %s %s --workflow-id ID status\n", progName, answerCommand)
	return nil
}

// waiting says what holds a listed run: Temporal's Workflow Pause, else
// the guard's state as its search attribute holds it ("halted:stalled").
func waiting(e *workflowpb.WorkflowExecutionInfo, attr string) string {
	if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED {
		return "paused (Workflow Pause)"
	}
	var state string
	if p := e.GetSearchAttributes().GetIndexedFields()[attr]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &state)
	}
	if state == "" {
		return "halted"
	}
	return state
}

// listExecutions lists the executions query selects, page by page, at
// most maxListed.
func listExecutions(ctx context.Context, c client.Client, namespace, query string) ([]*workflowpb.WorkflowExecutionInfo, error) {
	var out []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			if len(out) == maxListed {
				return out, nil
			}
			out = append(out, e)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}
