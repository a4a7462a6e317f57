// Package traces runs the development corpus's real agent traces
// (interceptor/detect/testdata/real) as workflows, so that their histories
// can be recorded on a server with and without the guard: the input of the
// analysis of past histories and of its agreement test with the live
// guard.
package traces

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkflowType is the workflow that runs a trace.
const WorkflowType = "TraceLoop"

// UserSignal carries a trace's user message: outside input to the loop.
const UserSignal = "user"

// Step is one guarded call of a trace, or a user message (Input).
type Step struct {
	Node   string `json:"node,omitempty"`
	Output string `json:"output,omitempty"`
	Err    string `json:"err,omitempty"`
	Input  bool   `json:"input,omitempty"`
}

// Trace is a trace of the real corpus, as calls.
type Trace struct {
	Name string
	// Half is the corpus half the trace belongs to: "tune" or "check".
	Half string
	// Loop is the corpus's label; Onset is the call (from 1) where the
	// loop begins, 0 for a progressing run.
	Loop  bool
	Onset int
	Steps []Step
}

// Calls counts the trace's guarded calls.
func (t Trace) Calls() int {
	n := 0
	for _, s := range t.Steps {
		if !s.Input {
			n++
		}
	}
	return n
}

// realTrace is the corpus's file format (the fields used here).
type realTrace struct {
	Name  string `json:"name"`
	Half  string `json:"half"`
	Loop  bool   `json:"loop"`
	Onset int    `json:"onset"`
	Steps []struct {
		Kind        string `json:"kind"`
		Text        string `json:"text"`
		Tool        string `json:"tool"`
		Action      string `json:"action"`
		Observation string `json:"observation"`
		Error       bool   `json:"error"`
	} `json:"steps"`
}

// Load reads the traces in dir (*.json.gz), sorted by name, as an agent
// loop's calls: a user step is a user message (a signal), a tool step is
// a model call (node "llm", the action as its result) and the tool's call
// (its observation as the result, or as the error when it failed), an
// llm step a model call.
func Load(dir string) ([]Trace, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("traces: no *.json.gz traces in %s", dir)
	}
	sort.Strings(files)
	out := make([]Trace, 0, len(files))
	for _, f := range files {
		tr, err := read(f)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

func read(path string) (Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return Trace{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Trace{}, fmt.Errorf("traces: %s: %w", path, err)
	}
	var rt realTrace
	if err := json.NewDecoder(zr).Decode(&rt); err != nil {
		return Trace{}, fmt.Errorf("traces: %s: %w", path, err)
	}
	tr := Trace{Name: rt.Name, Half: rt.Half, Loop: rt.Loop}
	for i, s := range rt.Steps {
		if rt.Loop && i == rt.Onset {
			tr.Onset = tr.Calls() + 1
		}
		switch s.Kind {
		case "user":
			tr.Steps = append(tr.Steps, Step{Input: true, Output: s.Text})
		case "llm":
			tr.Steps = append(tr.Steps, Step{Node: "llm", Output: s.Text})
		case "tool":
			tr.Steps = append(tr.Steps, Step{Node: "llm", Output: s.Action})
			st := Step{Node: s.Tool, Output: s.Observation}
			if s.Error {
				st = Step{Node: s.Tool, Err: nonEmpty(s.Observation)}
			}
			tr.Steps = append(tr.Steps, st)
		}
	}
	return tr, nil
}

func nonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// Nodes are the activity names the traces call.
func Nodes(traces []Trace) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range traces {
		for _, s := range t.Steps {
			if !s.Input && !seen[s.Node] {
				seen[s.Node] = true
				out = append(out, s.Node)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Register registers TraceLoop and the tool activity under each node name.
func Register(r worker.Registry, nodes []string) {
	r.RegisterWorkflowWithOptions(TraceLoop, workflow.RegisterOptions{Name: WorkflowType})
	for _, n := range nodes {
		r.RegisterActivityWithOptions(Tool, activity.RegisterOptions{Name: n})
	}
}

// Tool answers a step as the trace recorded it.
func Tool(_ context.Context, s Step) (string, error) {
	if s.Err != "" {
		return "", temporal.NewNonRetryableApplicationError(s.Err, "ToolError", nil)
	}
	return s.Output, nil
}

// TraceLoop makes the trace's calls in order, each result read before the
// next call, and waits for each user message as a signal.
func TraceLoop(ctx workflow.Context, steps []Step) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	user := workflow.GetSignalChannel(ctx, UserSignal)
	calls := 0
	for _, s := range steps {
		if s.Input {
			var msg string
			user.Receive(ctx, &msg)
			continue
		}
		var out string
		err := workflow.ExecuteActivity(ctx, s.Node, s).Get(ctx, &out)
		calls++
		if err != nil && !strings.Contains(err.Error(), "ToolError") {
			return calls, err // escalated, canceled: the loop ends
		}
	}
	return calls, nil
}

// Run runs tr as workflow id on queue and sends its user messages, each
// once the calls before it have their results (read from the history as
// it grows, without queries, which would cost the worker a task each); it
// returns the run id once the workflow is closed.
func Run(ctx context.Context, c client.Client, queue, id string, tr Trace) (string, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute,
	}, WorkflowType, tr.Steps)
	if err != nil {
		return "", err
	}
	// before[k] counts the calls before user step k.
	var inputs, before []int
	calls := 0
	for k, s := range tr.Steps {
		if s.Input {
			inputs, before = append(inputs, k), append(before, calls)
			continue
		}
		calls++
	}
	sent, done := 0, 0
	send := func() error {
		for sent < len(inputs) && before[sent] <= done {
			if err := c.SignalWorkflow(ctx, id, run.GetRunID(), UserSignal, tr.Steps[inputs[sent]].Output); err != nil {
				return err
			}
			sent++
		}
		return nil
	}
	if err := send(); err != nil {
		return "", err
	}
	it := c.GetWorkflowHistory(ctx, id, run.GetRunID(), true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", err
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED,
			enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			done++
			if err := send(); err != nil {
				return "", err
			}
		}
	}
	return run.GetRunID(), run.Get(ctx, nil)
}
