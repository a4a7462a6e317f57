package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/temporalproto"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/internal/cputime"
)

// frameworkHistory writes the history of an agent run as the AI SDK
// integration writes it, until its payloads reach size bytes: each turn
// an invokeModel call whose input is the whole conversation so far and
// whose result is the SDK's content parts (the model's words, a tool call
// with a fresh id and JSON-string input), its nested usage, the request
// body it sent (the conversation again) and a response id and timestamp;
// then the tool, an activity of its own type, whose input carries the
// messages too and whose result is a new file's text. The conversation
// is re-sent at every call, so the history grows quadratically, as the
// framework histories did (25 MB seen). The agent reads a new file each
// turn: it makes progress. It returns the events, ending with the run's
// completion, and the number of calls.
func frameworkHistory(size int) ([]*historypb.HistoryEvent, int) {
	b := &builder{now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: "aiSDKAgent"}, TaskQueue: &taskqueuepb.TaskQueue{Name: "agents"},
			WorkflowId: "framework-agent", OriginalExecutionRunId: "run-framework", FirstExecutionRunId: "run-framework", Attempt: 1,
		}}
	})
	seed := uint64(1)
	id := func() string { // 24 letters and digits, as a provider's fresh ids
		const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		var s [24]byte
		for k := range s {
			seed = seed*6364136223846793005 + 1442695040888963407
			s[k] = abc[(seed>>33)%uint64(len(abc))]
		}
		return string(s[:])
	}
	messages := []string{`{"role":"system","content":"You are a coding agent. Read the files you need, then answer."}`,
		`{"role":"user","content":[{"type":"text","text":"Find where the retry budget is configured."}]}`}
	written, calls := 0, 0
	call := func(typ, input, result string) {
		b.task()
		s := b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityId: fmt.Sprint(calls + 1), ActivityType: &commonpb.ActivityType{Name: typ}, Input: jsonPayloads(input),
			}}
		})
		b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: s.EventId}}
		})
		b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: s.EventId, Result: jsonPayloads(result)}}
		})
		written += len(input) + len(result)
		calls++
	}
	for turn := 1; written < size; turn++ {
		prompt := "[" + strings.Join(messages, ",") + "]"
		callID, path := "call_"+id(), fmt.Sprintf("src/pkg%d/file%d.go", turn%7, turn)
		args := fmt.Sprintf(`{"path":%q}`, path)
		assistant := fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Let me read %s next."},{"type":"tool-call","toolCallId":%q,"toolName":"read_file","input":%q}]}`,
			path, callID, args)
		call("invokeModel", fmt.Sprintf(`{"modelId":"gpt-4o","options":{"prompt":%s,"tools":[{"type":"function","name":"read_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]}}`, prompt),
			fmt.Sprintf(`{"content":[{"type":"text","text":"Let me read %s next."},{"type":"tool-call","toolCallId":%q,"toolName":"read_file","input":%q}],"finishReason":"tool-calls","usage":{"inputTokens":{"total":%d,"noCache":%d,"cacheRead":0},"outputTokens":{"total":21,"text":21,"reasoning":0}},"request":{"body":{"model":"gpt-4o","messages":%s}},"response":{"id":"aitxt-%s","timestamp":"2026-11-28T12:%02d:%02d.120Z","modelId":"gpt-4o"},"warnings":[]}`,
				path, callID, args, len(prompt)/4, len(prompt)/4, prompt, id(), turn/60%60, turn%60))
		var text strings.Builder
		for line := range 40 {
			fmt.Fprintf(&text, "func f%d_%d(x int) int { return x * %d } // line %d of %s\n", turn, line, turn+line, line, path)
		}
		output := fmt.Sprintf(`{"path":%q,"text":%q}`, path, text.String())
		call("read_file", fmt.Sprintf(`{"input":%s,"messages":%s}`, args, prompt), output)
		messages = append(messages, assistant,
			fmt.Sprintf(`{"role":"tool","content":[{"type":"tool-result","toolCallId":%q,"toolName":"read_file","output":{"type":"json","value":%s}}]}`, callID, output))
	}
	b.task()
	b.add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, nil)
	return b.evs, calls
}

// jsonPayloads is data as one JSON payload, as the SDKs' converters
// write an object.
func jsonPayloads(data string) *commonpb.Payloads {
	return &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}}}
}

// frameworkSizes are the sizes of the framework histories the
// benchmarks read: up to the 25 MB seen.
var frameworkSizes = []struct {
	name string
	size int
}{{"1MB", 1 << 20}, {"5MB", 5 << 20}, {"25MB", 25 << 20}}

// BenchmarkFollowFramework weighs a followed execution on framework
// histories of 1, 5 and 25 MB (frameworkHistory): a Reader under
// Options.Follow fed the run a workflow task at a time, as the long poll
// hands it, up to the task before its last; each page a copy of its own,
// as a watcher's pages are, so that whatever the Reader keeps of the
// payloads it read stays in the heap. B/execution is the heap 8 such
// executions hold after a GC, divided by 8, weighed as
// BenchmarkFollowMemory weighs them (guard, reader, follow): it must not
// grow with the history's size.
//
//	go test ./interceptor/history/ -run '^$' -bench FollowFramework -benchtime 1x
func BenchmarkFollowFramework(b *testing.B) {
	for _, s := range frameworkSizes {
		evs, _ := frameworkHistory(s.size)
		pages := taskPages(evs)
		follow := func(opts Options) *Reader {
			r, err := NewReader(opts)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range pages {
				own := make([]*historypb.HistoryEvent, len(p))
				for j, e := range p {
					own[j] = proto.Clone(e).(*historypb.HistoryEvent)
				}
				if err := r.Add(own...); err != nil {
					b.Fatal(err)
				}
				r.Execution()
			}
			return r
		}
		for _, tc := range followKeepers(follow) {
			b.Run(s.name+"/"+tc.name, func(b *testing.B) { heldPer(b, 8, tc.keep) })
		}
	}
}

// BenchmarkAnalyzeFramework analyses framework histories of 1, 5 and 25
// MB from their JSON files, as `worker analyze` reads them: calls a
// second of wall time and per CPU-second, and MB of JSON read per
// CPU-second (the process's CPU, GC and decoding included).
//
//	go test ./interceptor/history/ -run '^$' -bench AnalyzeFramework -benchtime 3x
func BenchmarkAnalyzeFramework(b *testing.B) {
	for _, s := range frameworkSizes {
		data, calls := frameworkJSON(b, s.size)
		path := filepath.Join(b.TempDir(), "framework.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(s.name, func(b *testing.B) {
			cpu0, cpuOK := cputime.Process()
			b.ResetTimer()
			for range b.N {
				ex, err := AnalyzeFile(path, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if ex.Called != calls {
					b.Fatalf("%d calls judged, want %d", ex.Called, calls)
				}
			}
			b.StopTimer()
			cpu1, _ := cputime.Process()
			b.ReportMetric(float64(calls*b.N)/b.Elapsed().Seconds(), "calls/s")
			if cpuOK {
				b.ReportMetric(float64(calls*b.N)/(cpu1-cpu0).Seconds(), "calls/cpu-s")
				b.ReportMetric(float64(len(data)*b.N)/(1<<20)/(cpu1-cpu0).Seconds(), "MB/cpu-s")
			}
			b.ReportMetric(float64(calls), "calls")
		})
	}
}

// BenchmarkDecodeFramework decodes the JSON of framework histories with
// the proto decoder alone (plain) and as DecodeHistory does, long
// payloads lifted out first (lifted): the two in one run, for their
// ratio (liftdata.go).
//
//	go test ./interceptor/history/ -run '^$' -bench DecodeFramework -benchmem -benchtime 5x
func BenchmarkDecodeFramework(b *testing.B) {
	for _, s := range frameworkSizes {
		data, _ := frameworkJSON(b, s.size)
		for _, d := range []struct {
			name   string
			decode func([]byte) error
		}{
			{"plain", func(data []byte) error { _, err := plainUnmarshal(data); return err }},
			{"lifted", func(data []byte) error { _, err := DecodeHistory(data); return err }},
		} {
			b.Run(s.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for range b.N {
					if err := d.decode(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// frameworkJSON is frameworkHistory(size) as a JSON file holds it, and
// its number of calls.
func frameworkJSON(b *testing.B, size int) ([]byte, int) {
	evs, calls := frameworkHistory(size)
	data, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(&historypb.History{Events: evs})
	if err != nil {
		b.Fatal(err)
	}
	return data, calls
}
