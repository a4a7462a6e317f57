package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
)

// WorkflowParallelTool is ParallelToolAgent's workflow type.
const WorkflowParallelTool = "ParallelToolAgent"

// DefaultParallelWidth is ParallelInput.Width's default: the reproduction
// of issue 30 made 8 parallel searches a turn.
const DefaultParallelWidth = 8

// ParallelInput starts a ParallelToolAgent.
type ParallelInput struct {
	// Scenario is one of activities.ParallelScenarios.
	Scenario string `json:"scenario"`
	Task     string `json:"task,omitempty"`
	// Width is how many tool calls each model turn asks for, 1 to
	// activities.MaxParallelCalls. Default DefaultParallelWidth.
	Width int `json:"width,omitempty"`
	// Mixed makes every other tool call a FetchPage: two tools in one turn.
	Mixed bool `json:"mixed,omitempty"`
	// MaxTurns is the loop's own bound on model turns. Default
	// DefaultMaxTurns.
	MaxTurns int `json:"maxTurns,omitempty"`
}

// ParallelResult is ParallelToolAgent's result.
type ParallelResult struct {
	LoopResult
	// ToolCalls counts the tool calls the workflow started.
	ToolCalls int `json:"toolCalls"`
	// Heeded is the warning that made the model change approach, if one
	// did.
	Heeded string `json:"heeded,omitempty"`
}

// ParallelGuardOptions are the guard's options for ParallelToolAgent: the
// README's, a call being one model or one tool call, and a stuck loop
// warned once before it halts.
func ParallelGuardOptions() interceptor.Options {
	return interceptor.Options{
		Workflows: []string{WorkflowParallelTool},
		Grain:     interceptor.GrainToolCall,
		Warnings:  1,
	}
}

// ParallelToolAgent is an agent whose model asks for several tool calls a
// turn, as today's model APIs do (parallel function calling, several
// tool_use blocks): each turn it calls the model (ModelTurn) with every
// result of the previous turn, starts all the tool calls the model asked
// for at once (WebSearch, FetchPage), and waits for them all. The guard
// counts a turn's calls of one tool as one step of the loop.
func ParallelToolAgent(ctx workflow.Context, in ParallelInput) (ParallelResult, error) {
	if in.Width == 0 {
		in.Width = DefaultParallelWidth
	}
	if in.MaxTurns <= 0 {
		in.MaxTurns = DefaultMaxTurns
	}
	if err := activities.ValidParallel(in.Scenario, in.Width); err != nil {
		return ParallelResult{}, err
	}
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var tools *activities.ParallelTools
	res := ParallelResult{LoopResult: LoopResult{Scenario: in.Scenario, Outcome: OutcomeGaveUp, Failing: -1}}
	var results []activities.ToolResult
	for turn := 1; turn <= in.MaxTurns; turn++ {
		res.Iterations = turn
		var reply activities.ModelReply
		err := workflow.ExecuteActivity(ctx, tools.ModelTurn, activities.ModelRequest{
			Scenario: in.Scenario,
			Task:     in.Task,
			Turn:     turn,
			Width:    in.Width,
			Mixed:    in.Mixed,
			Results:  results,
		}).Get(ctx, &reply)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			continue
		}
		if reply.Heeded != "" && res.Heeded == "" {
			res.Heeded = reply.Heeded
		}
		if reply.Answer != "" {
			res.Outcome, res.Final = OutcomeCompleted, reply.Answer
			return res, nil
		}
		var stop bool
		if results, stop, err = res.runTools(ctx, reply.Calls); stop {
			return res, err
		}
	}
	return res, nil
}

// runTools runs a turn's tool calls in parallel: all started before any
// is awaited, their results in the order the model asked for them. A tool
// that fails gives the model its error as the result; a halt a human
// escalated ends the loop.
func (r *ParallelResult) runTools(ctx workflow.Context, calls []activities.ToolCall) (_ []activities.ToolResult, stop bool, _ error) {
	futures := make([]workflow.Future, len(calls))
	for i, c := range calls {
		futures[i] = workflow.ExecuteActivity(ctx, c.Tool, c)
	}
	r.ToolCalls += len(calls)
	results := make([]activities.ToolResult, len(calls))
	for i, f := range futures {
		if err := f.Get(ctx, &results[i]); err != nil {
			if stop, err := r.failed(ctx, err); stop {
				return nil, true, err
			}
			results[i] = activities.ToolResult{Call: calls[i], Text: "error: " + r.LastError}
		}
	}
	return results, false, nil
}
