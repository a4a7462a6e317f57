package testsuite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/scripted"
	"github.com/loopguard/loopguard/testsuite"
)

const stalledFixture = "testdata/histories/unguarded-identical-patch.json"

// TestAnalyzeBadInput: a truncated file, a history of another workflow
// type, an unknown event and a payload the converter cannot decode each
// get an error or a problem naming the file and the event, and the rest
// of the batch is analysed.
func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(stalledFixture)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "a-truncated.json")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))
	good := filepath.Join(dir, "b-good.json")
	require.NoError(t, os.WriteFile(good, data, 0o644))

	h, err := testsuite.ReadHistoryFile(stalledFixture)
	require.NoError(t, err)
	h.Events[5].EventType = enumspb.EventType(999)
	unknown := filepath.Join(dir, "c-unknown-event.json")
	require.NoError(t, testsuite.WriteHistoryFile(unknown, h))
	other := filepath.Join(dir, "d-other-type.json")
	require.NoError(t, os.WriteFile(other, mustRead(t, "testdata/histories/unguarded-scripted-stall.json"), 0o644))

	var got []testsuite.Execution
	sum, err := testsuite.AnalyzeFiles([]string{truncated, good, unknown, other},
		testsuite.AnalyzeOptions{Guard: interceptor.Options{Workflows: []string{"CoderVerifierLoop"}}},
		func(ex testsuite.Execution) { got = append(got, ex) })
	require.NoError(t, err)
	require.Len(t, got, 4)

	require.Error(t, got[0].Err)
	assert.Contains(t, got[0].Err.Error(), truncated, "the error names the file")
	assert.Equal(t, 1, sum.Failed)

	assert.NoError(t, got[1].Err)
	assert.NotEmpty(t, got[1].Halts(), "the rest of the batch is analysed")

	require.NoError(t, got[2].Err)
	require.Len(t, got[2].Problems, 1)
	assert.Contains(t, got[2].Problems[0], "event 6 (999): unknown event type")
	assert.Equal(t, len(got[1].Calls), len(got[2].Calls), "the unknown event is skipped, the rest judged")

	assert.False(t, got[3].Guarded)
	assert.Contains(t, got[3].NotGuarded, `workflow type "ScriptedLoop"`)
}

// TestAnalyzeCodec: a history recorded through a payload codec is judged
// alike with the workers' data converter, and without it every payload it
// cannot decode is a problem naming its event.
func TestAnalyzeCodec(t *testing.T) {
	h, err := testsuite.ReadHistoryFile(stalledFixture)
	require.NoError(t, err)
	plain := analyzeHistory(t, h, testsuite.AnalyzeOptions{})
	require.NotEmpty(t, plain.Verdicts)

	enc := proto.Clone(h).(*historypb.History)
	encodePayloads(t, enc.ProtoReflect())
	withCodec := analyzeHistory(t, enc, testsuite.AnalyzeOptions{DataConverter: scripted.EncryptingDataConverter()})
	assert.Empty(t, withCodec.Problems)
	assert.Equal(t, plain.Verdicts, withCodec.Verdicts, "the codec's data converter reads what the plain history says")

	without := analyzeHistory(t, enc, testsuite.AnalyzeOptions{})
	require.NotEmpty(t, without.Problems)
	assert.True(t, strings.HasPrefix(without.Problems[0], "event "), without.Problems[0])
	assert.Contains(t, without.Problems[0], "does not decode with the data converter")
}

func analyzeHistory(t *testing.T, h *historypb.History, opts testsuite.AnalyzeOptions) testsuite.Execution {
	t.Helper()
	a, err := testsuite.NewAnalyzer(opts)
	require.NoError(t, err)
	ex := a.History(h, "")
	require.NoError(t, ex.Err)
	return ex
}

// encodePayloads runs the test codec over every payload in m, as a worker
// with the codec would have written them.
func encodePayloads(t *testing.T, m protoreflect.Message) {
	dc := scripted.EncryptingDataConverter()
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind:
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				encodeMessage(t, dc, v.List().Get(i).Message())
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					encodeMessage(t, dc, mv.Message())
				}
				return true
			})
		default:
			encodeMessage(t, dc, v.Message())
		}
		return true
	})
}

func encodeMessage(t *testing.T, dc converter.DataConverter, m protoreflect.Message) {
	p, ok := m.Interface().(*commonpb.Payload)
	if !ok {
		encodePayloads(t, m)
		return
	}
	// A RawValue goes through the converter as it is: only the codec runs.
	enc, err := dc.ToPayload(converter.NewRawValue(proto.Clone(p).(*commonpb.Payload)))
	require.NoError(t, err)
	proto.Reset(p)
	proto.Merge(p, enc)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestSweep: the same histories under several options side by side; the
// tool-call grain's budgets halt fewer of them than the agent-turn
// defaults, and each options' summary is that options' own analysis.
func TestSweep(t *testing.T) {
	files := smallHistories(t)
	opts := []testsuite.AnalyzeOptions{{}, {Guard: interceptor.Options{Grain: interceptor.GrainToolCall}}}
	sums, err := testsuite.Sweep(files, opts, nil)
	require.NoError(t, err)
	require.Len(t, sums, 2)
	assert.Equal(t, sums[0].Calls, sums[1].Calls, "the same calls judged")
	assert.Greater(t, sums[0].ByReason[protocol.ReasonBudgetExceeded], sums[1].ByReason[protocol.ReasonBudgetExceeded])
	for i, o := range opts {
		alone, err := testsuite.AnalyzeFiles(files, o, func(testsuite.Execution) {})
		require.NoError(t, err)
		assert.Equal(t, alone, sums[i])
	}
}

// smallHistories are the fixture histories but the 1,000-call workloads,
// to keep the tests that read them many times fast.
func smallHistories(t *testing.T) []string {
	files, err := testsuite.HistoryFiles("testdata/histories")
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "workload-") {
			out = append(out, f)
		}
	}
	return out
}

// TestAnalyzeNodeName: Options.NodeName names the calls, with the call's
// arguments decoded into plain values.
func TestAnalyzeNodeName(t *testing.T) {
	var kinds []interceptor.CallKind
	opts := testsuite.AnalyzeOptions{Guard: interceptor.Options{NodeName: func(c interceptor.Call) string {
		kinds = append(kinds, c.Kind)
		turn, ok := c.Args[0].(map[string]any)
		if !ok {
			return ""
		}
		return fmt.Sprintf("%s/%v", c.Type, turn["node"])
	}}}
	ex, err := testsuite.AnalyzeFile("testdata/histories/unguarded-scripted-stall.json", opts)
	require.NoError(t, err)
	require.NotEmpty(t, ex.Calls)
	for _, n := range ex.Calls {
		assert.Contains(t, []string{"Code/Code", "Plan/Plan", "Verify/Verify"}, n)
	}
	assert.Contains(t, kinds, interceptor.KindActivity)
}

// TestScore: labels score an options' first halts: loops caught and how
// soon after their onset, progressing runs halted.
func TestScore(t *testing.T) {
	labels := testsuite.Labels{
		"fixture-unguarded-identical-patch": {Loop: true, Onset: 3},
		"fixture-unguarded-converging":      {Loop: false},
	}
	var sc testsuite.Score
	_, err := testsuite.AnalyzeFiles([]string{
		"testdata/histories/unguarded-identical-patch.json",
		"testdata/histories/unguarded-converging.json",
		"testdata/histories/unguarded-scripted-stall.json", // not labelled
	}, testsuite.AnalyzeOptions{}, func(ex testsuite.Execution) { sc.Add(ex, labels) })
	require.NoError(t, err)
	assert.Equal(t, testsuite.Score{Loops: 1, LoopsHalted: 1, Progressing: 1, After: []int{3}}, sc)
	assert.Equal(t, 3, sc.MedianAfter())

	path := filepath.Join(t.TempDir(), "labels.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"a": {"loop": true, "onset": 4}, "b": {"loop": false}}`), 0o644))
	got, err := testsuite.ReadLabels(path)
	require.NoError(t, err)
	assert.Equal(t, testsuite.Labels{"a": {Loop: true, Onset: 4}, "b": {}}, got)
	require.NoError(t, os.WriteFile(path, []byte(`{"a": true}`), 0o644))
	_, err = testsuite.ReadLabels(path)
	assert.ErrorContains(t, err, path)
}
