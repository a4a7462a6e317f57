// Package frameworks maps histories of our own shape (one activity per
// model call returning the model's words or action, one per tool call)
// onto the shapes Temporal's agent integrations write: the Vercel AI
// SDK's (@temporalio/ai-sdk, model activity invokeModel) and OpenAI
// Agents' (@temporalio/openai-agents, invokeModelActivity). The corpus of
// real runs is judged in both shapes beside the native one, call for call.
package frameworks

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// Shape is an integration whose histories a native history is mapped onto.
type Shape string

const (
	// AISDK is @temporalio/ai-sdk: model calls are activity invokeModel,
	// whose result is the AI SDK's LanguageModelV4GenerateResult (content
	// parts, a finish reason, a nested usage block, response metadata).
	AISDK Shape = "ai-sdk"
	// OpenAIAgents is @temporalio/openai-agents: model calls are activity
	// invokeModelActivity, whose result is a serialized ModelResponse
	// (Responses output items, usage, a response id).
	OpenAIAgents Shape = "openai-agents"
)

// Shapes are the integrations, in the order tables print them.
var Shapes = []Shape{AISDK, OpenAIAgents}

// ModelNode is the native shape's model activity (internal/traces).
const ModelNode = "llm"

// modelActivity is the integration's model activity type.
func (s Shape) modelActivity() string {
	if s == AISDK {
		return "invokeModel"
	}
	return "invokeModelActivity"
}

// turn is one model call as the mapping reads it.
type turn struct {
	text string // the model's words: commentary beside a tool call, or the whole response
	tool string // the tool it calls, "" for a text-only response
	args string // the tool call's JSON arguments
}

// Map rewrites h, a native history, into the shape s, in place: each model
// call becomes the integration's model activity, whose input is the
// conversation so far and whose result is the integration's envelope; a
// model call followed by a tool call is that tool call (its action as the
// JSON argument "command"), with the model's words of the text-only call
// just before it, if any, as the text beside it; a model call that no tool
// call follows is a text-only response. Tool calls keep their activity
// type (one per tool, as both integrations register them) and result.
// Calls stay one for one, so a label's onset holds in every shape. Ids
// (tool-call, response) are fresh in every response, drawn from a source
// seeded by the workflow id, so a mapping is reproducible.
func Map(h *historypb.History, s Shape) error {
	events := h.GetEvents()
	if len(events) == 0 {
		return fmt.Errorf("frameworks: empty history")
	}
	wid := events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowId()
	seed := fnv.New64a()
	seed.Write([]byte(string(s) + "/" + wid))
	rng := rand.New(rand.NewPCG(seed.Sum64(), 37))

	// The scheduled calls in order, and each one's completion.
	var scheduled []*historypb.HistoryEvent
	completed := map[int64]*historypb.HistoryEvent{}
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled = append(scheduled, e)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			completed[e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] = e
		}
	}
	w := writer{shape: s, rng: rng}
	words := ""
	for i, e := range scheduled {
		a := e.GetActivityTaskScheduledEventAttributes()
		done := completed[e.GetEventId()]
		if a.GetActivityType().GetName() != ModelNode {
			w.tool(a, done)
			continue
		}
		out, err := decodeString(done.GetActivityTaskCompletedEventAttributes().GetResult())
		if err != nil {
			return fmt.Errorf("frameworks: %s: model call %d: %w", wid, e.GetEventId(), err)
		}
		t := turn{text: out}
		if i+1 < len(scheduled) {
			if next := scheduled[i+1].GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(); next != ModelNode {
				args, _ := json.Marshal(map[string]string{"command": out})
				t = turn{text: words, tool: next, args: string(args)}
			}
		}
		words = ""
		if t.tool == "" {
			words = t.text
		}
		a.ActivityType = &commonpb.ActivityType{Name: s.modelActivity()}
		a.Input = w.modelInput()
		if done != nil {
			done.GetActivityTaskCompletedEventAttributes().Result = w.response(t)
		}
	}
	return nil
}

// decodeString reads a payload holding one JSON string.
func decodeString(p *commonpb.Payloads) (string, error) {
	if len(p.GetPayloads()) != 1 {
		return "", fmt.Errorf("want one payload, got %d", len(p.GetPayloads()))
	}
	var s string
	err := json.Unmarshal(p.GetPayloads()[0].GetData(), &s)
	return s, err
}

// payloads encodes values as the default data converter does.
func payloads(vs ...any) *commonpb.Payloads {
	out := &commonpb.Payloads{}
	for _, v := range vs {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err) // maps and strings only
		}
		out.Payloads = append(out.Payloads, &commonpb.Payload{
			Metadata: map[string][]byte{"encoding": []byte("json/plain")},
			Data:     data,
		})
	}
	return out
}

// writer writes one history's model calls in its shape, keeping the
// conversation that each model call re-sends, as both integrations do.
type writer struct {
	shape Shape
	rng   *rand.Rand
	conv  []any  // the messages (AI SDK) or input items (OpenAI Agents) so far
	chars int    // their length, for the usage block
	call  string // the id of the tool call the last response made
	name  string // and its tool
	args  string
}

// id is a fresh provider id: prefix and 24 letters and digits.
func (w *writer) id(prefix string) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte(prefix)
	for range 24 {
		b = append(b, alnum[w.rng.IntN(len(alnum))])
	}
	return string(b)
}

func (w *writer) add(m any) {
	data, _ := json.Marshal(m)
	w.chars += len(data)
	w.conv = append(w.conv, m)
}

// modelInput is the model activity's input: the conversation so far.
func (w *writer) modelInput() *commonpb.Payloads {
	if len(w.conv) == 0 {
		if w.shape == AISDK {
			w.add(map[string]any{"role": "system", "content": "You are a software engineering agent. Use the tools."})
			w.add(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Resolve the issue."}}})
		} else {
			w.add(map[string]any{"type": "message", "role": "user", "content": "Resolve the issue."})
		}
	}
	conv := append([]any(nil), w.conv...)
	if w.shape == AISDK {
		return payloads(map[string]any{"modelId": "mock-model-id", "options": map[string]any{"prompt": conv, "maxOutputTokens": 4096}})
	}
	return payloads(map[string]any{"modelName": "scripted", "request": map[string]any{
		"systemInstructions": "You are a software engineering agent. Use the tools.",
		"input":              conv, "modelSettings": map[string]any{}, "tools": []any{}, "outputType": "text",
		"handoffs": []any{}, "tracing": false,
	}})
}

// response is the model activity's result for t, in the shape's envelope;
// it adds the response to the conversation.
func (w *writer) response(t turn) *commonpb.Payloads {
	in := w.chars / 4
	out := (len(t.text)+len(t.args))/4 + 1
	w.call, w.name, w.args = "", "", ""
	if t.tool != "" {
		w.call, w.name, w.args = w.id("call_"), t.tool, t.args
	}
	if w.shape == AISDK {
		var content []any
		if t.text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.text})
		}
		finish := map[string]any{"unified": "stop", "raw": "stop"}
		if t.tool != "" {
			content = append(content, map[string]any{"type": "tool-call", "toolCallId": w.call, "toolName": t.tool, "input": t.args})
			finish = map[string]any{"unified": "tool-calls", "raw": "tool_calls"}
		}
		msg := []any{}
		for _, c := range content {
			msg = append(msg, c)
		}
		w.add(map[string]any{"role": "assistant", "content": msg})
		return payloads(map[string]any{
			"content":      content,
			"finishReason": finish,
			"usage": map[string]any{
				"inputTokens":  map[string]any{"total": in, "noCache": in, "cacheRead": 0, "cacheWrite": 0},
				"outputTokens": map[string]any{"total": out, "text": out, "reasoning": 0},
			},
			"warnings": []any{},
			"response": map[string]any{"id": w.id("resp-"), "timestamp": fmt.Sprintf("2026-11-28T17:%02d:%02d.%03dZ", w.rng.IntN(60), w.rng.IntN(60), w.rng.IntN(1000)), "modelId": "mock-model-id"},
		})
	}
	var output []any
	if t.text != "" {
		output = append(output, map[string]any{"id": w.id("msg_"), "type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.text}}})
	}
	if t.tool != "" {
		output = append(output, map[string]any{"id": w.id("fc_"), "type": "function_call", "callId": w.call, "name": t.tool, "arguments": t.args, "status": "completed"})
	}
	for _, o := range output {
		w.add(o)
	}
	return payloads(map[string]any{
		"usage": map[string]any{"requests": 1, "inputTokens": in, "outputTokens": out, "totalTokens": in + out,
			"inputTokensDetails": []any{map[string]any{"cached_tokens": 0}}, "outputTokensDetails": []any{map[string]any{"reasoning_tokens": 0}}},
		"output":     output,
		"responseId": w.id("resp_"),
	})
}

// tool rewrites a tool call's input as the integration passes it (the
// call's arguments; the AI SDK adds the call id and the messages) and
// adds its result to the conversation.
func (w *writer) tool(a *historypb.ActivityTaskScheduledEventAttributes, done *historypb.HistoryEvent) {
	var args map[string]any
	_ = json.Unmarshal([]byte(w.args), &args)
	result := "(the tool failed)"
	if done != nil {
		if s, err := decodeString(done.GetActivityTaskCompletedEventAttributes().GetResult()); err == nil {
			result = s
		}
	}
	if w.shape == AISDK {
		a.Input = payloads(args, map[string]any{"toolCallId": w.call, "messages": append([]any(nil), w.conv...)})
		w.add(map[string]any{"role": "tool", "content": []any{map[string]any{"type": "tool-result", "toolCallId": w.call, "toolName": w.name,
			"output": map[string]any{"type": "text", "value": result}}}})
		return
	}
	a.Input = payloads(args)
	w.add(map[string]any{"type": "function_call_result", "callId": w.call, "name": w.name, "status": "completed",
		"output": map[string]any{"type": "text", "text": result}})
}
