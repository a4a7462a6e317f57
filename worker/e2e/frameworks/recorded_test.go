package frameworks

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/history"
)

// recorded are histories the integrations wrote themselves, from npm
// (worker/e2e/typescript TestFrameworkHistoriesRecorded).
var recorded = map[Shape]string{
	AISDK:        "../../../interceptor/history/testdata/frameworks/aiSdkAgent-loop.json.gz",
	OpenAIAgents: "../../../interceptor/history/testdata/frameworks/openAIAgent-loop.json.gz",
}

// TestMapAsRecorded: the model results Map writes have the keys, nesting
// and JSON types of the results the integrations' own model activities
// recorded (values aside), so the corpus mapped in Go is read as the
// frameworks' real histories are. The recorded results may hold more
// (what a provider adds); every key Map writes is one they hold. The AI
// SDK's request echo (request.body) is left out of the comparison: a
// provider's client adds it (the OpenAI one does; the AI SDK's mock model,
// which recorded these, does not).
func TestMapAsRecorded(t *testing.T) {
	for _, shape := range Shapes {
		t.Run(string(shape), func(t *testing.T) {
			real, err := history.ReadHistoryFile(recorded[shape])
			require.NoError(t, err)
			h := native()
			require.NoError(t, Map(h, shape))
			want := modelResultKeys(t, real, shape)
			got := modelResultKeys(t, h, shape)
			require.NotEmpty(t, got)
			var extra []string
			for _, k := range got {
				if !slices.Contains(want, k) && k != ".request.body:object" {
					extra = append(extra, k)
				}
			}
			assert.Empty(t, extra, "keys Map writes that the integration does not (recorded: %v)", want)
			for _, k := range essentialKeys[shape] {
				assert.Contains(t, want, k, "recorded")
				assert.Contains(t, got, k, "mapped")
			}
		})
	}
}

// essentialKeys are the keys the reader's rules (docs/detection.md) act
// on in each envelope: the words, the tool call, its id, the usage.
var essentialKeys = map[Shape][]string{
	AISDK: {".content[].type:string", ".content[].text:string", ".content[].toolCallId:string", ".content[].toolName:string",
		".content[].input:string", ".usage.inputTokens.total:number", ".response.id:string"},
	OpenAIAgents: {".output[].type:string", ".output[].content[].text:string", ".output[].callId:string", ".output[].name:string",
		".output[].arguments:string", ".usage.inputTokens:number", ".responseId:string"},
}

// modelResultKeys are the key paths of the model activity's results in
// h, with the JSON type of each leaf, arrays read as one element.
func modelResultKeys(t *testing.T, h *historypb.History, shape Shape) []string {
	t.Helper()
	model := map[int64]bool{}
	seen := map[string]bool{}
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == shape.modelActivity() {
			model[e.GetEventId()] = true
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && model[a.GetScheduledEventId()] {
			var v any
			require.NoError(t, json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), &v))
			keyPaths(v, "", seen)
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func keyPaths(v any, at string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keyPaths(x, at+"."+k, out)
		}
	case []any:
		for _, x := range v {
			keyPaths(x, at+"[]", out)
		}
	case nil:
		out[at+":null"] = true
	default:
		out[fmt.Sprintf("%s:%s", at, jsonType(v))] = true
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}
