package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// ChatInput is the input of ChatAgent.
type ChatInput struct {
	Task     string `json:"task"`
	MaxTurns int    `json:"maxTurns"`
	// Stubborn makes the scripted model ignore warnings, so that the loop
	// halts and a human's (or a halt handler's) guidance must steer it.
	Stubborn bool `json:"stubborn,omitempty"`
}

// ChatResult is ChatAgent's result: the loop's, and what the guard told
// the workflow for its prompts.
type ChatResult struct {
	LoopResult
	// Told lists, in order, the first warning and the first guidance the
	// workflow put in its model's prompt, and the budget it showed then.
	Told []string `json:"told,omitempty"`
}

// ChatGuidance is the guidance a human gives the stubborn ChatAgent in the
// tests and fixtures: the scripted model follows guidance that names the
// file.
const ChatGuidance = "The tests are right: read " + activities.GuidanceFile + " and fix the TTL arithmetic."

// ChatGuardOptions are the guard's options for ChatAgent: a call is one
// model or tool call, and a stuck loop is warned once before it halts.
func ChatGuardOptions() interceptor.Options {
	return interceptor.Options{
		Workflows: []string{"ChatAgent"},
		Grain:     interceptor.GrainToolCall,
		Warnings:  1,
	}
}

// ChatAgent is an LLM↔tool agent whose conversation lives in the workflow:
// each turn it sends the whole conversation to its model (the Chat
// activity), runs the tool call the model asks for (RunTool) and appends
// both. Before each model call it asks the guard what that call would be
// told (interceptor.NoticeFor) and puts the warning's directive, the
// guidance and the budget left in the prompt itself: no activity imports
// the guard.
func ChatAgent(ctx workflow.Context, in ChatInput) (ChatResult, error) {
	if in.MaxTurns <= 0 {
		in.MaxTurns = 40
	}
	ctx = workflow.WithActivityOptions(ctx, activityOptions())
	var tools *activities.ChatTools
	res := ChatResult{LoopResult: LoopResult{Scenario: "chat", Outcome: OutcomeGaveUp, Failing: -1}}
	conversation := []activities.ChatMessage{{Role: "user", Text: in.Task}}
	for turn := 1; turn <= in.MaxTurns; turn++ {
		res.Iterations = turn
		prompt := append([]activities.ChatMessage(nil), conversation...)
		if n, ok := interceptor.NoticeFor(ctx, "Chat"); ok {
			prompt = append(prompt, res.heed(n)...)
		}

		var reply activities.ChatReply
		err := workflow.ExecuteActivity(ctx, tools.Chat, activities.ChatRequest{Messages: prompt, Stubborn: in.Stubborn}).Get(ctx, &reply)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			continue
		}
		if reply.Answer != "" {
			res.Outcome, res.Final = OutcomeCompleted, reply.Answer
			return res, nil
		}
		var out string
		err = workflow.ExecuteActivity(ctx, tools.RunTool, reply.Tool).Get(ctx, &out)
		if err != nil {
			if stop, err := res.failed(ctx, err); stop {
				return res, err
			}
			out = "error: " + res.LastError
		}
		conversation = append(conversation,
			activities.ChatMessage{Role: "assistant", Text: reply.Tool},
			activities.ChatMessage{Role: "tool", Text: out})
	}
	return res, nil
}

// heed turns what the guard has to tell the model's next call into system
// messages of its prompt, with the budget left, and records the first of
// each kind.
func (r *ChatResult) heed(n protocol.Notice) []activities.ChatMessage {
	left := ""
	if n.Budget != nil {
		left = " (" + n.Budget.String() + ")"
	}
	var msgs []activities.ChatMessage
	if w := n.Warning; w != nil {
		msgs = append(msgs, activities.ChatMessage{Role: "system", Text: activities.WarningPrefix + w.Directive + left})
		r.tell("warning", w.Directive+left)
	}
	if n.Guidance != "" {
		msgs = append(msgs, activities.ChatMessage{Role: "system", Text: activities.GuidancePrefix + n.Guidance})
		r.tell("guidance", n.Guidance+left)
	}
	return msgs
}

// tell records what the workflow told its model, once per kind.
func (r *ChatResult) tell(kind, text string) {
	for _, t := range r.Told {
		if strings.HasPrefix(t, kind+": ") {
			return
		}
	}
	r.Told = append(r.Told, kind+": "+text)
}
