package history_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
)

// TestRecordedFrameworkHistories judges histories written by Temporal's
// AI integrations themselves, recorded from the npm packages with a
// scripted model (worker/e2e/typescript TestFrameworkHistoriesRecorded,
// LOOPGUARD_WRITE_FIXTURES=1): @temporalio/ai-sdk 1.23.0 (ai 7.0.173,
// model activity invokeModel) and @temporalio/openai-agents 1.23.0
// (@openai/agents-core 0.11.8, invokeModelActivity), each agent reading a
// file with the tool activity readFile. As `worker analyze --policy
// tool_call` judges them (GrainToolCall, no policy file): the loop (the
// same file every turn, in other words each time, a fresh call id and a
// growing usage block in every response) is halted by its third read;
// the progressing run (a new file every turn) is not halted.
func TestRecordedFrameworkHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/frameworks/*.json.gz")
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json.gz")
		t.Run(name, func(t *testing.T) {
			ex, err := history.AnalyzeFile(f, history.Options{Guard: interceptor.Options{Grain: interceptor.GrainToolCall}})
			require.NoError(t, err)
			require.NoError(t, ex.Err)
			assert.Equal(t, 33, ex.Called, "16 turns of a model call and a tool call, and the final answer")
			var halts []string
			for _, v := range ex.Verdicts {
				if v.Halt != nil {
					halts = append(halts, fmt.Sprintf("call %d %s@%s", v.Call, v.Halt.Detector, v.Halt.Node))
				}
			}
			if strings.HasSuffix(name, "-loop") {
				require.NotEmpty(t, halts)
				model := map[string]string{"aiSdkAgent-loop": "invokeModel", "openAIAgent-loop": "invokeModelActivity"}[name]
				assert.Equal(t, "call 6 identical_output@"+model, halts[0], "the third read of the same file is held: the model asked for it three times")
			} else {
				assert.Empty(t, halts, "a progressing run is not halted")
			}
		})
	}
}
