package typescript_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/worker/devserver/devtest"
	"github.com/loopguard/loopguard/worker/e2e/typescript"
)

// frameworkFixtures is where TestFrameworkHistoriesRecorded writes the
// histories it records, with LOOPGUARD_WRITE_FIXTURES=1, for the
// history package's tests, which need no Node.js.
const frameworkFixtures = "../../../interceptor/history/testdata/frameworks"

// frameworkRun is one agent run of the frameworks project
// (typescript/frameworks): its workflow, the scripted model's scenario
// and turns, and the framework's step or turn cap.
type frameworkRun struct {
	workflow string // aiSdkAgent, openAIAgent
	scenario string // loop, progress
	turns    int
	limit    int // stepCountIs(limit), maxTurns
}

func (r frameworkRun) id() string {
	return fmt.Sprintf("%s-%s", r.workflow, r.scenario)
}

// frameworkRuns are the agents recorded: in each framework a loop (the
// same file read every turn, the model's words different each time) and
// a progressing run (a new file every turn), both well under the cap a
// team would set.
var frameworkRuns = []frameworkRun{
	{"aiSdkAgent", "loop", 16, 20},
	{"aiSdkAgent", "progress", 16, 20},
	{"openAIAgent", "loop", 16, 20},
	{"openAIAgent", "progress", 16, 20},
}

// TestFrameworkHistoriesRecorded runs agents written with Temporal's AI
// integrations from npm (@temporalio/ai-sdk with the AI SDK's mock
// language model, @temporalio/openai-agents with a scripted model
// provider) on the embedded server, and judges each history as `worker
// analyze --policy tool_call` does (GrainToolCall, no policy file): each
// loop is halted, at its fourth tool call at the latest; no progressing
// run is. The histories are the frameworks' own: the model activity
// (invokeModel, invokeModelActivity) returns the provider's envelope with
// fresh ids, usage and the model's words beside its tool call.
func TestFrameworkHistoriesRecorded(t *testing.T) {
	t.Parallel()
	typescript.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	project, err := typescript.FrameworksDir()
	require.NoError(t, err)
	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
	c := devtest.NewClient(t, srv)
	w, err := typescript.StartWith(ctx, t, typescript.Options{HostPort: srv.FrontendHostPort(), Namespace: srv.Namespace(),
		TaskQueue: "ts-frameworks", Project: project})
	require.NoError(t, err)

	runs := map[string]client.WorkflowRun{}
	for _, r := range frameworkRuns {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: r.id(), TaskQueue: w.TaskQueue},
			r.workflow, fmt.Sprintf("%s:%d", r.scenario, r.turns), r.limit)
		require.NoError(t, err)
		runs[r.id()] = run
	}
	for _, r := range frameworkRuns {
		var answer string
		require.NoError(t, runs[r.id()].Get(ctx, &answer), "%s\n%s", r.id(), w.Output())
		assert.Equal(t, fmt.Sprintf("Done after %d turns.", r.turns), answer, r.id())
		h, err := history.ExportHistory(ctx, c, r.id(), "")
		require.NoError(t, err)
		checkFrameworkHistory(t, r, h)
		if os.Getenv("LOOPGUARD_WRITE_FIXTURES") == "1" {
			writeFixture(t, filepath.Join(frameworkFixtures, r.id()+".json.gz"), h)
		}
	}
}

// checkFrameworkHistory checks that h is what the framework writes (its
// model activity, the tool's) and judges it under GrainToolCall.
func checkFrameworkHistory(t *testing.T, r frameworkRun, h *historypb.History) {
	t.Helper()
	model := map[string]string{"aiSdkAgent": "invokeModel", "openAIAgent": "invokeModelActivity"}[r.workflow]
	types := map[string]int{}
	for _, e := range h.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			types[e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()]++
		}
	}
	assert.Equal(t, map[string]int{model: r.turns + 1, "readFile": r.turns}, types, "%s: the framework's model activity and the tool's", r.id())

	a, err := history.NewAnalyzer(history.Options{Guard: interceptor.Options{Grain: interceptor.GrainToolCall}})
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	var halts []string
	first := 0
	for _, v := range ex.Verdicts {
		if v.Halt != nil {
			if first == 0 {
				first = v.Call
			}
			halts = append(halts, fmt.Sprintf("call %d %s@%s", v.Call, v.Halt.Detector, v.Halt.Node))
		}
	}
	t.Logf("%s: %d calls, %d events, %d bytes of history; halts %v", r.id(), ex.Called, len(h.GetEvents()), historySize(t, h), halts)
	switch r.scenario {
	case "loop":
		// Calls alternate model, tool: the fourth read of the same file
		// is call 8.
		require.NotEmpty(t, halts, "%s: the loop is halted", r.id())
		assert.LessOrEqual(t, first, 8, "%s: halted by the fourth tool call", r.id())
	default:
		assert.Empty(t, halts, "%s: a progressing run is not halted", r.id())
	}
}

func historySize(t *testing.T, h *historypb.History) int {
	b, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
	require.NoError(t, err)
	return len(b)
}

// writeFixture writes h as gzipped JSON, as `temporal workflow show
// --output json` writes a history.
func writeFixture(t *testing.T, path string, h *historypb.History) {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(h)
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	t.Logf("wrote %s (%s)", path, strings.TrimSpace(fmt.Sprintf("%d bytes", buf.Len())))
}
