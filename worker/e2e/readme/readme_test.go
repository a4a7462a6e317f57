// Package readme runs the README's own registration on the embedded
// server: the guard it registers halts a stuck AgentLoop, and the listing
// the README gives finds it, beside an execution paused with Temporal's
// Workflow Pause, as the watcher pauses the workflows it halts.
package readme

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
)

// The README's Go blocks and the agent loop of docs/ladder.md, verbatim
// (TestReadmeBlocksAreHere): block 3, the README's test, runs as this
// package's TestAgentLoop.

// README block 1 begin
var guardOptions = interceptor.Options{
	Workflows:       []string{"AgentLoop"},     // only these workflow types are guarded
	Grain:           interceptor.GrainToolCall, // one guarded call is one model or tool call
	Warnings:        1,                         // warn a stuck loop once before halting it
	SearchAttribute: "LoopGuardState",          // lists halted workflows (see "Answer a halt")
}

func startWorker(ctx context.Context, c client.Client) (worker.Worker, error) {
	guard, err := interceptor.New(guardOptions)
	if err != nil {
		return nil, err // invalid options name the field: *interceptor.OptionError
	}
	// A halt sets LoopGuardState: register it first (Temporal Cloud refuses; its error says what to run).
	if err := interceptor.RegisterSearchAttributes(ctx, c, "default", guardOptions); err != nil {
		return nil, err
	}
	w := worker.New(c, "agents", worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{guard}})
	w.RegisterWorkflow(AgentLoop)
	w.RegisterActivity(CallModel)
	if err := interceptor.CheckWorkflows(guardOptions, AgentLoop); err != nil {
		log.Printf("WARN %v", err) // a type Workflows names that the worker does not register is not guarded
	}
	return w, nil // w.Run(worker.InterruptCh()) runs it
}

// README block 1 end

// README block 2 begin
func AgentLoop(ctx workflow.Context, task string) (string, error) {
	// Rung 2: at a halt, before a human is asked, workflow code may recover.
	if err := interceptor.SetHaltHandler(ctx, askReviewer); err != nil {
		return "", err // interceptor.ErrNotGuarded: Options.Workflows does not name this workflow
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	conversation := []string{task}
	for {
		prompt := conversation
		// Rung 1: the warning (and later a reviewer's guidance) for the next model call.
		if n, ok := interceptor.NoticeFor(ctx, "CallModel"); ok {
			if n.Warning != nil {
				prompt = append(prompt, n.Warning.Directive+" ("+n.Budget.String()+")")
			}
			if n.Guidance != "" {
				prompt = append(prompt, "A reviewer says: "+n.Guidance)
			}
		}
		var reply string
		err := workflow.ExecuteActivity(ctx, CallModel, prompt).Get(ctx, &reply)
		if interceptor.IsEscalated(err) {
			return "stopped by a human", nil // Rung 3: a human escalated the halt
		}
		if err != nil || reply == "DONE" {
			return reply, err
		}
		conversation = append(conversation, reply)
	}
}

func askReviewer(ctx workflow.Context, h protocol.HaltEvent) (interceptor.HandlerDecision, error) {
	var advice string
	if err := workflow.ExecuteActivity(ctx, "Review", h.Message).Get(ctx, &advice); err != nil || advice == "" {
		return interceptor.HandlerDecision{}, err // no decision: a human decides
	}
	return interceptor.HandlerDecision{Action: protocol.ActionResume, Guidance: advice}, nil
}

// README block 2 end

// README block 3 begin
func TestAgentLoop(t *testing.T) {
	rep := testsuite.Run(t, testsuite.RunOptions{
		Guard:    guardOptions,
		Register: func(r worker.Registry) { r.RegisterActivity(CallModel) },
		Answer:   testsuite.ResumeWithGuidance("read config/prod.yaml"), // the human, when it halts
	}, AgentLoop, "fix the flaky test")
	require.NoError(t, rep.Err) // a refused answer is an error here, with the guard's reason
}

// README block 3 end

// CallModel is a model that proposes the same patch again and again: a
// stuck loop.
func CallModel(ctx context.Context, prompt []string) (string, error) {
	return "patch: retry the flaky test", nil
}

// review is the README's "Review" activity, with no advice: a human decides.
func review(ctx context.Context, message string) (string, error) { return "", nil }

// readme returns the README.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	require.NoError(t, err)
	return string(data)
}

// TestReadmeBlocksAreHere: the code this package runs is the README's
// (its registration and its test) and docs/ladder.md's (the README's
// agent loop, the first Go block there), so what they promise is what is
// tested here.
func TestReadmeBlocksAreHere(t *testing.T) {
	here, err := os.ReadFile("readme_test.go")
	require.NoError(t, err)
	goBlock := regexp.MustCompile("(?s)```go\n(.*?)```")
	blocks := goBlock.FindAllStringSubmatch(readme(t), -1)
	require.Len(t, blocks, 2)
	ladder, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "ladder.md"))
	require.NoError(t, err)
	first := goBlock.FindStringSubmatch(string(ladder))
	require.NotNil(t, first, "docs/ladder.md has no Go block")
	blocks = [][]string{blocks[0], first, blocks[1]}
	for i, b := range blocks {
		code := b[1]
		_, decls, ok := strings.Cut(code, "\n)\n") // after the imports
		require.True(t, ok, "README Go block %d has no import block", i+1)
		assert.Contains(t, string(here), strings.Trim(decls, "\n"), "README Go block %d is not this package's copy", i+1)
	}
}

// readmeQuery is the README's `temporal workflow list --query` argument.
func readmeQuery(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`temporal workflow list --query '([^']+)'`).FindStringSubmatch(readme(t))
	require.NotNil(t, m, "the README gives no temporal workflow list query")
	return m[1]
}

// TestReadmeListingFindsEveryHalt: on a server with Workflow Pause enabled
// and no search attribute registered, the README's startWorker registers
// LoopGuardState, its guard halts the README's AgentLoop when the model
// repeats itself, and the README's list query finds that workflow and an
// execution paused with Workflow Pause, and nothing else.
func TestReadmeListingFindsEveryHalt(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	query := readmeQuery(t)
	require.Equal(t, interceptor.HaltsQuery("LoopGuardState"), query, "the README's listing is interceptor.HaltsQuery")

	srv := devtest.StartServer(t, devserver.Options{
		UIDisabled: true, StartTimeout: 60 * time.Second,
		DynamicConfig: map[string]any{"frontend.WorkflowPauseEnabled": true},
	})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	require.NotContains(t, attrs.GetCustomAttributes(), "LoopGuardState", "the server must start without it")

	w, err := startWorker(ctx, c)
	require.NoError(t, err)
	w.RegisterActivityWithOptions(review, activity.RegisterOptions{Name: "Review"})
	require.NoError(t, w.Start())
	defer w.Stop()

	stuck, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "readme-stuck", TaskQueue: "agents"}, AgentLoop, "fix the flaky test")
	require.NoError(t, err)
	// No worker polls "nobody": the execution waits for its first task
	// when it is paused, as an agent of another SDK would.
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "readme-paused", TaskQueue: "nobody"}, "PythonAgent")
	require.NoError(t, err)
	_, err = c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "readme-paused", Identity: "test", Reason: "loop: repeated_error", RequestId: "readme-paused-1",
	})
	require.NoError(t, err)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "readme-waiting", TaskQueue: "nobody"}, "PythonAgent")
	require.NoError(t, err)

	var listed []string
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		if err != nil {
			t.Logf("list: %v", err)
			return false
		}
		listed = listed[:0]
		for _, e := range resp.GetExecutions() {
			listed = append(listed, e.GetExecution().GetWorkflowId()+" "+e.GetStatus().String())
		}
		return len(listed) == 2
	}, time.Minute, 200*time.Millisecond, "the README's listing never found both halts")
	assert.ElementsMatch(t, []string{"readme-stuck Running", "readme-paused Paused"}, listed)

	var st protocol.Status
	v, err := c.QueryWorkflow(ctx, stuck.GetID(), "", protocol.DefaultStatusQuery)
	require.NoError(t, err)
	require.NoError(t, v.Get(&st))
	assert.Equal(t, protocol.StateHalted, st.State, "the guard's state")
}

// TestRegisterSearchAttributes: registering is idempotent, does nothing
// without attributes, and refuses an attribute registered with another
// type, naming both.
func TestRegisterSearchAttributes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the embedded Temporal server (skipped with -short)")
	}
	srv := devtest.StartServer(t, devserver.Options{
		UIDisabled: true, StartTimeout: 60 * time.Second,
		SearchAttributes: map[string]enumspb.IndexedValueType{"LoopGuardPausedSince": enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	c := devtest.NewClient(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	require.NoError(t, interceptor.RegisterSearchAttributes(ctx, c, "default", interceptor.Options{}))
	opts := interceptor.Options{SearchAttribute: "LoopGuardState"}
	require.NoError(t, interceptor.RegisterSearchAttributes(ctx, c, "default", opts))
	require.NoError(t, interceptor.RegisterSearchAttributes(ctx, c, "default", opts), "again")
	opts.PausedSinceAttribute = "LoopGuardPausedSince"
	err := interceptor.RegisterSearchAttributes(ctx, c, "default", opts)
	require.Error(t, err)
	assert.Equal(t, `loopguard: search attribute "LoopGuardPausedSince" is registered on namespace "default" as Keyword, not Datetime`, err.Error())
}
