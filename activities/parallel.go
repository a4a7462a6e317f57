package activities

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The scenarios of the parallel tool agent (workflows.ParallelToolAgent),
// whose model asks for several tool calls a turn.
const (
	// ParallelStuck: every turn the model asks for the same searches and
	// gets the same results; it ignores warnings and never answers.
	ParallelStuck = "parallel-stuck"
	// ParallelHeeds: as ParallelStuck until a call's notice warns the
	// model that it is looping (interceptor.NoticeFrom); then it narrows
	// every search to the release notes, and answers once it has read
	// what they say.
	ParallelHeeds = "parallel-heeds"
	// ParallelProgressing: every turn the model asks about another aspect
	// of each subject and learns something new; it answers after
	// ParallelProgressTurns turns of tool calls.
	ParallelProgressing = "parallel-progressing"
)

// ErrBadToolCall is the type of the error of a turn's width out of range,
// or of a tool given another tool's call. Non-retryable.
const ErrBadToolCall = "BadToolCall"

// ParallelScenarios are the parallel tool agent's scenarios, in a stable
// order.
func ParallelScenarios() []string {
	return []string{ParallelStuck, ParallelHeeds, ParallelProgressing}
}

// The tools of the parallel tool agent: its activity types, and the guard's
// node names with them.
const (
	ToolWebSearch = "WebSearch"
	ToolFetchPage = "FetchPage"
)

// MaxParallelCalls is the most tool calls the scripted model asks for in
// one turn.
const MaxParallelCalls = 16

// ParallelProgressTurns is how many turns of tool calls the progressing
// model makes before it answers.
const ParallelProgressTurns = 12

// ParallelTools are the scripted model and tools of
// workflows.ParallelToolAgent. Register them with
// w.RegisterActivity(&activities.ParallelTools{}): the activity types are
// ModelTurn, WebSearch and FetchPage.
type ParallelTools struct{}

// ToolCall is one tool call a model turn asks for.
type ToolCall struct {
	// Tool is ToolWebSearch or ToolFetchPage.
	Tool string `json:"tool"`
	// Query is the search terms, or the page to fetch.
	Query string `json:"query"`
}

// ToolResult is what one tool call returned.
type ToolResult struct {
	Call ToolCall `json:"call"`
	Text string   `json:"text"`
}

// ModelRequest is a model turn's prompt: the task, and every result of the
// previous turn's tool calls.
type ModelRequest struct {
	Scenario string `json:"scenario"`
	Task     string `json:"task,omitempty"`
	// Turn numbers the model's turns from 1.
	Turn int `json:"turn"`
	// Width is how many tool calls a turn asks for (1 to
	// MaxParallelCalls); Mixed makes every other one a FetchPage.
	Width   int          `json:"width"`
	Mixed   bool         `json:"mixed,omitempty"`
	Results []ToolResult `json:"results,omitempty"`
}

// ModelReply is a model turn's answer: the tool calls to run, all at once,
// or the final answer.
type ModelReply struct {
	Calls  []ToolCall `json:"calls,omitempty"`
	Answer string     `json:"answer,omitempty"`
	// Heeded is the warning that made the model change approach, on the
	// turn it did.
	Heeded string `json:"heeded,omitempty"`
}

// ModelTurn is the scripted model. It reads the guard's notice as a model
// would read it in its prompt: only the heeding scenario acts on a
// warning. A pure function of the request and the notice.
func (p *ParallelTools) ModelTurn(ctx context.Context, req ModelRequest) (ModelReply, error) {
	n, _ := interceptor.NoticeFrom(ctx)
	r, err := scriptModelTurn(req, n)
	if err != nil {
		return ModelReply{}, err
	}
	activity.GetLogger(ctx).Info("Model turn", "scenario", req.Scenario, "turn", req.Turn, "calls", len(r.Calls), "answered", r.Answer != "", "heeded", r.Heeded)
	return r, nil
}

// WebSearch searches, scripted: the same query finds the same thing.
func (p *ParallelTools) WebSearch(_ context.Context, call ToolCall) (ToolResult, error) {
	return scriptTool(ToolWebSearch, call)
}

// FetchPage fetches a page, scripted: the same page reads the same.
func (p *ParallelTools) FetchPage(_ context.Context, call ToolCall) (ToolResult, error) {
	return scriptTool(ToolFetchPage, call)
}

// ValidParallel checks a parallel scenario and width, as the workflow and
// the model both do.
func ValidParallel(scenario string, width int) error {
	if !slices.Contains(ParallelScenarios(), scenario) {
		return unknownScenario(scenario)
	}
	if width < 1 || width > MaxParallelCalls {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("width %d: a turn asks for 1 to %d tool calls", width, MaxParallelCalls), ErrBadToolCall, nil)
	}
	return nil
}

// The words the scripted searches are made of. Results differ in words,
// not only in numbers: the guard reads numbers as the same token.
var (
	subjects = []string{
		"postgres", "redis", "kafka", "nginx", "envoy", "etcd", "grpc", "protobuf",
		"kubernetes", "terraform", "prometheus", "grafana", "temporal", "vault", "consul", "traefik",
	}
	aspects = []string{
		"installation", "configuration", "replication", "upgrades", "backups", "metrics",
		"security", "tuning", "logging", "migrations", "scaling", "licensing",
	}
	findings = []string{
		"deprecated", "stable", "experimental", "breaking", "optional", "recommended",
		"removed", "renamed", "default", "documented", "undocumented", "required",
	}
)

// heededAspect is what the heeding model narrows every search to.
const heededAspect = "release notes"

func scriptModelTurn(req ModelRequest, n protocol.Notice) (ModelReply, error) {
	if err := ValidParallel(req.Scenario, req.Width); err != nil {
		return ModelReply{}, err
	}
	turn := max(req.Turn, 1)
	switch req.Scenario {
	case ParallelStuck:
		return ModelReply{Calls: toolCalls(req, "latest changes")}, nil
	case ParallelHeeds:
		switch {
		case len(req.Results) > 0 && strings.Contains(req.Results[0].Call.Query, heededAspect):
			return ModelReply{Answer: fmt.Sprintf("read the %s of %d projects: %s", heededAspect, len(req.Results), req.Results[0].Text)}, nil
		case n.Warning != nil:
			return ModelReply{Calls: toolCalls(req, heededAspect),
				Heeded: fmt.Sprintf("warning %d/%d: %s", n.Warning.N, n.Warning.Of, n.Warning.Directive)}, nil
		}
		return ModelReply{Calls: toolCalls(req, "latest changes")}, nil
	default: // ParallelProgressing
		if turn > ParallelProgressTurns {
			return ModelReply{Answer: fmt.Sprintf("surveyed %d aspects of %d projects", ParallelProgressTurns, req.Width)}, nil
		}
		return ModelReply{Calls: toolCalls(req, aspects[(turn-1)%len(aspects)])}, nil
	}
}

// toolCalls are a turn's calls: one per subject, about aspect.
func toolCalls(req ModelRequest, aspect string) []ToolCall {
	calls := make([]ToolCall, req.Width)
	for i := range calls {
		calls[i] = ToolCall{Tool: ToolWebSearch, Query: subjects[i] + " " + aspect}
		if req.Mixed && i%2 == 1 {
			calls[i] = ToolCall{Tool: ToolFetchPage, Query: "docs " + subjects[i] + " " + aspect}
		}
	}
	return calls
}

func scriptTool(tool string, call ToolCall) (ToolResult, error) {
	if call.Tool != tool || call.Query == "" {
		return ToolResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s cannot run %s %q", tool, call.Tool, call.Query), ErrBadToolCall, nil)
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(tool + "\x00" + call.Query))
	sum := h.Sum32()
	pick := func(shift uint32) string { return findings[int(sum>>shift)%len(findings)] }
	return ToolResult{Call: call, Text: fmt.Sprintf("%s: %s, %s and %s", call.Query, pick(0), pick(8), pick(16))}, nil
}
