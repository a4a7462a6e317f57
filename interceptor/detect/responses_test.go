package detect

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model response as the test writes it into each provider's envelope.
type turn struct {
	text   string // the model's words
	reason string // its reasoning
	args   string // the tool call's arguments (JSON), "" for a text-only response
	id     string // the provider's fresh ids are built from it
	usage  int    // input tokens: grows with the conversation
}

// q writes s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// envelopes builds each provider's response envelope, by hand, from the
// shapes in the providers' published API references and SDK source:
// OpenAI Responses (also what the Python OpenAI Agents integration's
// invoke_model_activity returns: output items, usage, response_id), the
// TypeScript @openai/agents-core ModelResponse (invokeModelActivity),
// Chat Completions, Anthropic Messages, the Vercel AI SDK's
// LanguageModelV2 result (invokeModel), Gemini generateContent, and a
// LangChain AIMessage.
var envelopes = []struct {
	name  string
	build func(t turn) string
}{
	{"openai responses", func(t turn) string {
		items := []string{
			fmt.Sprintf(`{"type":"reasoning","id":"rs_%s","summary":[{"type":"summary_text","text":%s}]}`, t.id, q(t.reason)),
			fmt.Sprintf(`{"type":"message","id":"msg_%s","role":"assistant","status":"completed","content":[{"type":"output_text","text":%s,"annotations":[]}]}`, t.id, q(t.text)),
		}
		if t.args != "" {
			items = append(items, fmt.Sprintf(`{"type":"function_call","id":"fc_%s","call_id":"call_%s","name":"read_file","arguments":%s,"status":"completed"}`, t.id, t.id, q(t.args)))
		}
		return fmt.Sprintf(`{"output":[%s],"usage":{"requests":1,"input_tokens":%d,"output_tokens":12,"total_tokens":%d,"input_tokens_details":{"cached_tokens":0}},"response_id":"resp_%s"}`,
			strings.Join(items, ","), t.usage, t.usage+12, t.id)
	}},
	{"openai agents-core", func(t turn) string {
		items := []string{fmt.Sprintf(`{"type":"message","role":"assistant","status":"completed","id":"msg_%s","content":[{"type":"output_text","text":%s}]}`, t.id, q(t.text))}
		if t.args != "" {
			items = append(items, fmt.Sprintf(`{"type":"function_call","callId":"call_%s","name":"read_file","arguments":%s,"status":"completed","providerData":{"id":"fc_%s"}}`, t.id, q(t.args), t.id))
		}
		return fmt.Sprintf(`{"usage":{"requests":1,"inputTokens":%d,"outputTokens":9,"totalTokens":%d},"output":[%s],"responseId":"resp_%s"}`,
			t.usage, t.usage+9, strings.Join(items, ","), t.id)
	}},
	{"chat completions", func(t turn) string {
		calls, finish := "", "stop"
		if t.args != "" {
			calls, finish = fmt.Sprintf(`,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":"read_file","arguments":%s}}]`, t.id, q(t.args)), "tool_calls"
		}
		return fmt.Sprintf(`{"id":"chatcmpl-%s","object":"chat.completion","created":17643%05d,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":%s%s},"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":9,"total_tokens":%d}}`,
			t.id, t.usage, q(t.text), calls, finish, t.usage, t.usage+9)
	}},
	{"anthropic messages", func(t turn) string {
		blocks := []string{
			fmt.Sprintf(`{"type":"thinking","thinking":%s,"signature":"Eq%sQ=="}`, q(t.reason), t.id),
			fmt.Sprintf(`{"type":"text","text":%s}`, q(t.text)),
		}
		stop := "end_turn"
		if t.args != "" {
			blocks, stop = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%s","name":"read_file","input":%s}`, t.id, t.args)), "tool_use"
		}
		return fmt.Sprintf(`{"id":"msg_%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[%s],"stop_reason":%q,"usage":{"input_tokens":%d,"output_tokens":5}}`,
			t.id, strings.Join(blocks, ","), stop, t.usage)
	}},
	{"ai sdk", func(t turn) string {
		parts := []string{
			fmt.Sprintf(`{"type":"reasoning","text":%s}`, q(t.reason)),
			fmt.Sprintf(`{"type":"text","text":%s}`, q(t.text)),
		}
		finish := "stop"
		if t.args != "" {
			parts, finish = append(parts, fmt.Sprintf(`{"type":"tool-call","toolCallId":"call_%s","toolName":"read_file","input":%s}`, t.id, q(t.args))), "tool-calls"
		}
		return fmt.Sprintf(`{"content":[%s],"finishReason":%q,"usage":{"inputTokens":{"total":%d,"noCache":%d,"cacheRead":0},"outputTokens":{"total":5,"text":5,"reasoning":0}},"response":{"id":"aitxt-%s","timestamp":"2026-11-28T12:%02d:07.120Z","modelId":"mock-model-id"},"warnings":[]}`,
			strings.Join(parts, ","), finish, t.usage, t.usage, t.id, t.usage%60)
	}},
	{"ai sdk, a real provider's", func(t turn) string {
		// @ai-sdk/openai's doGenerate also returns the request body it
		// sent (the whole conversation: it grows) and the raw response
		// with its headers.
		parts := []string{fmt.Sprintf(`{"type":"text","text":%s}`, q(t.text))}
		finish, raw := "stop", ""
		if t.args != "" {
			parts, finish = append(parts, fmt.Sprintf(`{"type":"tool-call","toolCallId":"call_%s","toolName":"read_file","input":%s}`, t.id, q(t.args))), "tool-calls"
			raw = fmt.Sprintf(`,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":"read_file","arguments":%s}}]`, t.id, q(t.args))
		}
		history := strings.Repeat(`{"role":"assistant","content":"earlier turn","tool_calls":[{"id":"call_x","function":{"name":"read_file","arguments":"{}"}}]},`, t.usage/1000)
		return fmt.Sprintf(`{"content":[%s],"finishReason":%q,"usage":{"inputTokens":{"total":%d}},"request":{"body":{"model":"gpt-4o","messages":[%s{"role":"user","content":"go"}]}},"response":{"id":"chatcmpl-%s","modelId":"gpt-4o","headers":{"x-request-id":"req_%s","openai-processing-ms":"%d","x-ratelimit-remaining-requests":"%d"},"body":{"id":"chatcmpl-%s","choices":[{"message":{"role":"assistant","content":%s%s},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":%d}}}}`,
			strings.Join(parts, ","), finish, t.usage, history, t.id, t.id, t.usage%977, 5000-t.usage/100, t.id, q(t.text), raw, t.usage)
	}},
	{"gemini", func(t turn) string {
		parts := []string{fmt.Sprintf(`{"text":%s,"thought":true}`, q(t.reason)), fmt.Sprintf(`{"text":%s}`, q(t.text))}
		if t.args != "" {
			parts = append(parts, fmt.Sprintf(`{"functionCall":{"name":"read_file","args":%s},"thoughtSignature":"Cs%sA"}`, t.args, t.id))
		}
		return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":7,"totalTokenCount":%d},"modelVersion":"gemini-2.5-flash","responseId":"%s"}`,
			strings.Join(parts, ","), t.usage, t.usage+7, t.id)
	}},
	{"langchain", func(t turn) string {
		calls := `[]`
		if t.args != "" {
			calls = fmt.Sprintf(`[{"name":"read_file","args":%s,"id":"call_%s","type":"tool_call"}]`, t.args, t.id)
		}
		return fmt.Sprintf(`{"type":"ai","id":"run-%s","content":%s,"tool_calls":%s,"usage_metadata":{"input_tokens":%d,"output_tokens":9,"total_tokens":%d},"response_metadata":{"model_name":"gpt-4o","finish_reason":"tool_calls","id":"chatcmpl-%s"}}`,
			t.id, q(t.text), calls, t.usage, t.usage+9, t.id)
	}},
}

// Fresh provider ids: 24 letters and digits, as OpenAI's tool-call ids;
// the last has no digit, as about one random id in 60 has not.
const (
	id1 = "Fth9CqRpsL5kBpwwyw6c7j4k"
	id2 = "a8ZkQ2mV0xTnR7bLw3YdE5sH"
	id3 = "KqTbWmZrPxYsLnVdHgFcJhQa" // no digit
)

// actionKey is what the sequence compares: the action hash, or the whole
// result when nothing was set aside.
func actionKey(body string) uint64 {
	var c canonical
	readCanonical([]byte(body), &c)
	if c.action != 0 {
		return c.action
	}
	return c.sum
}

// TestResponseEnvelopes: in every provider's envelope, generation 5
// reads a response that calls a tool as its tool call and one that does
// not as its text.
func TestResponseEnvelopes(t *testing.T) {
	base := turn{text: "Let me read the config.", reason: "The config holds the port.", args: `{"path":"config.yaml"}`, id: id1, usage: 1200}
	with := func(f func(*turn)) turn { x := base; f(&x); return x }
	tests := []struct {
		name string
		give turn // compared with base
		want bool // the same action
	}{
		{name: "same action reworded", give: with(func(x *turn) {
			x.text, x.reason = "Let me try again: reading the config once more.", "Maybe it failed last time."
		}), want: true},
		{name: "fresh ids", give: with(func(x *turn) { x.id = id2 }), want: true},
		{name: "fresh ids without a digit", give: with(func(x *turn) { x.id = id3 }), want: true},
		{name: "growing usage", give: with(func(x *turn) { x.usage = 5831 }), want: true},
		{name: "all of it at once", give: with(func(x *turn) {
			x.text, x.id, x.usage = "Retrying.", id3, 9001
		}), want: true},
		{name: "arguments written differently", give: with(func(x *turn) { x.args = `{ "path" : "config.yaml" }` }), want: true},
		{name: "different arguments", give: with(func(x *turn) { x.args = `{"path":"main.go"}` }), want: false},
		{name: "different arguments, same words", give: with(func(x *turn) { x.args = `{"path":"config.yaml","offset":40}` }), want: false},
		{name: "text only instead of a call", give: with(func(x *turn) { x.args = "" }), want: false},
	}
	textBase := with(func(x *turn) { x.args = "" })
	textTests := []struct {
		name string
		give turn // compared with textBase
		want bool
	}{
		{name: "text only: same text, fresh ids and usage", give: with(func(x *turn) { x.args, x.id, x.usage = "", id3, 4000 }), want: true},
		{name: "text only: same text, other reasoning", give: with(func(x *turn) { x.args, x.reason = "", "Now I am sure." }), want: true},
		{name: "text only: different text", give: with(func(x *turn) { x.args, x.text = "", "The port is 8080." }), want: false},
	}
	for _, env := range envelopes {
		for _, tt := range tests {
			t.Run(env.name+"/"+tt.name, func(t *testing.T) {
				a, b := env.build(base), env.build(tt.give)
				assert.True(t, json.Valid([]byte(a)) && json.Valid([]byte(b)), "fixture is not JSON")
				assert.Equal(t, tt.want, actionKey(a) == actionKey(b), "%s\n%s", a, b)
			})
		}
		for _, tt := range textTests {
			t.Run(env.name+"/"+tt.name, func(t *testing.T) {
				a, b := env.build(textBase), env.build(tt.give)
				assert.Equal(t, tt.want, actionKey(a) == actionKey(b), "%s\n%s", a, b)
			})
		}
	}
}

// TestReaderInArrays: the reader's rules apply inside array elements as
// inside objects: commentary keys, a JSON string read as JSON, usage.
func TestReaderInArrays(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool // the same action
	}{
		{name: "thought in an object", a: `{"tool":"ls","thought":"first"}`, b: `{"tool":"ls","thought":"again"}`, want: true},
		{name: "thought in an array element", a: `[{"tool":"ls","thought":"first"}]`, b: `[{"tool":"ls","thought":"again"}]`, want: true},
		{name: "thought two arrays deep", a: `{"steps":[[{"tool":"ls","thought":"a"}],[{"tool":"cat"}]]}`, b: `{"steps":[[{"tool":"ls","thought":"b"}],[{"tool":"cat"}]]}`, want: true},
		{name: "JSON string arguments in an element", a: `[{"name":"ls","arguments":"{\"dir\":\"/\",\"thought\":\"x\"}"}]`, b: `[{"name":"ls","arguments":"{\"thought\":\"y\",\"dir\":\"/\"}"}]`, want: true},
		{name: "usage in an element", a: `[{"out":"ok","usage":{"inputTokens":{"total":10}}}]`, b: `[{"out":"ok","usage":{"inputTokens":{"total":99}}}]`, want: true},
		{name: "action in an element differs", a: `[{"tool":"ls","thought":"a"}]`, b: `[{"tool":"cat","thought":"a"}]`, want: false},
		{name: "order of elements", a: `[{"tool":"ls"},{"tool":"cat"}]`, b: `[{"tool":"cat"},{"tool":"ls"}]`, want: false},
		{name: "a request in a tool's result is news", a: `{"request":{"page":1},"items":[]}`, b: `{"request":{"page":2},"items":[]}`, want: false},
		{name: "headers in a tool's result are news", a: `{"headers":{"etag":"a"},"body":"x"}`, b: `{"headers":{"etag":"b"},"body":"x"}`, want: false},
		{name: "arguments in an element differ", a: `[{"name":"ls","arguments":"{\"dir\":\"/\"}"}]`, b: `[{"name":"ls","arguments":"{\"dir\":\"/tmp\"}"}]`, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, actionKey(tt.a) == actionKey(tt.b))
		})
	}
}

// TestProviderID: generated ids are masked with or without a digit;
// names are not.
func TestProviderID(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{give: "call_" + id1, want: true},
		{give: "call_" + id3, want: true},
		{give: "toolu_01A09q90qw90lq917835lq9", want: true},
		{give: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", want: true},
		{give: `"msg_` + id3 + `",`, want: true},
		{give: "get_userAccountInformation", want: false},
		{give: "test_parseHTTPResponseWithRetry", want: false},
		{give: "call_abcdefghijklmnopqrstuvwx", want: false}, // one case: a word
		{give: "MyHandlerClass2023Version", want: false},     // no prefix
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, ok := providerID([]byte(tt.give))
			assert.Equal(t, tt.want, ok)
		})
	}
}

// frameworkRun is an agent loop as an integration writes it: a model call
// (one generic activity) whose result is a provider's envelope calling
// read_file, then the tool's own activity. With loop, the model asks for
// the same file every turn, in other words each time, with fresh ids and
// a growing prompt; otherwise it reads a new file every turn.
func frameworkRun(build func(turn) string, turns int, loop bool) []corpusCall {
	words := []string{
		"Let me read the config.", "Let me try again.", "I will look at the file once more.",
		"Reading it again to be sure.", "Maybe the last read failed; retrying.", "One more look.",
		"Checking the config again.", "Let me re-read it.", "Again, the config.", "Trying once more.",
	}
	ids := []string{id1, id2, id3}
	var calls []corpusCall
	for i := range turns {
		file := "config.yaml"
		if !loop {
			file = fmt.Sprintf("src/module_%c%c.py", 'a'+i%26, 'a'+i/26)
		}
		args := fmt.Sprintf(`{"path":%q}`, file)
		calls = append(calls,
			corpusCall{Node: "invokeModel", Output: json.RawMessage(build(turn{
				text: words[i%len(words)], reason: words[(i+3)%len(words)], args: args,
				id: ids[i%len(ids)], usage: 1000 + 350*i,
			}))},
			corpusCall{Node: "read_file", Output: json.RawMessage(fmt.Sprintf(`{"content":"port: 8080 (%s)"}`, file))})
	}
	return calls
}

// TestFrameworkLoops: with the tool-call grain's budgets and no policy
// file, the guard halts an agent that asks for the same tool call in
// other words, in every envelope, by call 8, and halts no agent that
// reads a new file every turn. Without the reading of model responses
// (responses.go) the words beside the call are news, and the budgets
// halt the loop long after.
func TestFrameworkLoops(t *testing.T) {
	for _, env := range envelopes {
		t.Run(env.name, func(t *testing.T) {
			p := ToolCallPolicy()
			at, trip := replay(p, frameworkRun(env.build, 40, true))
			require.NotNil(t, trip, "the loop must halt")
			assert.LessOrEqual(t, at, 2*4, "halted at call %d: %s", at, trip.Message)

			fresh, trip := replay(p, frameworkRun(env.build, 60, false))
			assert.Nil(t, trip, "halted a progressing run at call %d", fresh)
			t.Logf("the loop halts at call %d", at)
		})
	}
}

// FuzzReadResponses: the reader reads any bytes without a panic, and
// the same way twice.
//
//	go test ./interceptor/detect/ -run '^$' -fuzz FuzzReadResponses -fuzztime 60s
func FuzzReadResponses(f *testing.F) {
	for _, env := range envelopes {
		f.Add([]byte(env.build(turn{text: "a", reason: "b", args: `{"x":[1,{"thought":"c"}]}`, id: id3, usage: 7})))
		f.Add([]byte(env.build(turn{text: "a", id: id1})))
	}
	f.Add([]byte(`[[{"thought":"a","x":[{"usage":1}]}],"s",{"type":"thinking"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a, b canonical
		readCanonical(data, &a)
		readCanonical(data, &b)
		if a.sum != b.sum || a.action != b.action || a.nums != b.nums {
			t.Fatalf("not deterministic")
		}
	})
}
