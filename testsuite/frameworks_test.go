package testsuite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
)

// aiSDKAgent is an agent loop as the Vercel AI SDK's Temporal integration
// writes it: every model call is activity invokeModel, whose result is
// the SDK's generate result (content parts, usage, the request body it
// sent, response metadata), and the tool is an activity of its own type.
// It returns the turns it completed.
func aiSDKAgent(ctx workflow.Context, turns int, loop bool) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	for i := range turns {
		var resp json.RawMessage
		err := workflow.ExecuteActivity(ctx, "invokeModel", i, loop).Get(ctx, &resp)
		if interceptor.IsEscalated(err) {
			return i, nil
		}
		if err != nil {
			return i, err
		}
		var out string
		if err := workflow.ExecuteActivity(ctx, "readFile", toolPath(i, loop)).Get(ctx, &out); interceptor.IsEscalated(err) {
			return i, nil
		} else if err != nil {
			return i, err
		}
	}
	return turns, nil
}

func toolPath(i int, loop bool) string {
	if loop {
		return "config.yaml"
	}
	return fmt.Sprintf("src/module_%c%c.py", 'a'+i%26, 'a'+i/26)
}

// invokeModel is a scripted model in the AI SDK's result shape: it asks
// for readFile in other words each turn, with a fresh tool-call id (one
// in three without a digit), a growing prompt and usage.
func invokeModel(_ context.Context, i int, loop bool) (json.RawMessage, error) {
	words := []string{"Let me read the config.", "Let me try again.", "Reading it once more.", "Maybe the last read failed."}
	ids := []string{"Fth9CqRpsL5kBpwwyw6c7j4k", "a8ZkQ2mV0xTnR7bLw3YdE5sH", "KqTbWmZrPxYsLnVdHgFcJhQa"}
	args, _ := json.Marshal(fmt.Sprintf(`{"path":%q}`, toolPath(i, loop)))
	text, _ := json.Marshal(words[i%len(words)])
	history := strings.Repeat(`{"role":"tool","content":"port: 8080"},`, i)
	return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%s},{"type":"tool-call","toolCallId":"call_%s","toolName":"readFile","input":%s}],"finishReason":"tool-calls","usage":{"inputTokens":{"total":%d,"noCache":%d,"cacheRead":0},"outputTokens":{"total":9}},"request":{"body":{"messages":[%s{"role":"user","content":"fix it"}]}},"response":{"id":"aitxt-%s","timestamp":"2026-11-28T12:%02d:07.120Z","modelId":"mock-model-id"},"warnings":[]}`,
		text, ids[i%len(ids)], args, 900+400*i, 900+400*i, history, ids[(i+1)%len(ids)], i%60)), nil
}

func readFile(_ context.Context, path string) (string, error) {
	return "port: 8080 (" + path + ")", nil
}

// TestAISDKHistoryZeroConfig: the guard with GrainToolCall and no policy
// file (generation 5, what new executions pin) halts an AI SDK agent that
// asks for the same tool call in other words within three turns, and lets
// one that reads a new file every turn finish its 40 turns.
func TestAISDKHistoryZeroConfig(t *testing.T) {
	register := func(r worker.Registry) {
		r.RegisterActivityWithOptions(invokeModel, activity.RegisterOptions{Name: "invokeModel"})
		r.RegisterActivityWithOptions(readFile, activity.RegisterOptions{Name: "readFile"})
	}
	guard := interceptor.Options{Workflows: []string{"aiSDKAgent"}, Grain: interceptor.GrainToolCall}
	tests := []struct {
		name      string
		loop      bool
		wantHalts bool
		maxTurns  int // turns completed at most
	}{
		{name: "the same call in other words", loop: true, wantHalts: true, maxTurns: 3},
		{name: "a new file every turn", loop: false, wantHalts: false, maxTurns: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := testsuite.Run(t, testsuite.RunOptions{Guard: guard, Register: register}, aiSDKAgent, 40, tt.loop)
			require.NoError(t, rep.Err)
			assert.Equal(t, tt.wantHalts, len(rep.Halts) > 0, "halts: %v", rep.Halts)
			var turns int
			require.NoError(t, rep.Env.GetWorkflowResult(&turns))
			assert.LessOrEqual(t, turns, tt.maxTurns)
			if !tt.wantHalts {
				assert.Equal(t, 40, turns)
			}
			t.Logf("turns completed: %d; halts: %d", turns, len(rep.Halts))
		})
	}
}
