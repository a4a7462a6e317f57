package testsuite_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// The v3- fixtures record what guard version 3 changed. The generic replay
// tests show that they replay; these show that they hold the behaviour
// itself, and that it is version 3's: the same history claiming version 2
// does not replay.

func fixtureEntry(t *testing.T, file string) fixtures.Fixture {
	t.Helper()
	for _, f := range manifest(t).Fixtures {
		if f.File == file {
			return f
		}
	}
	t.Fatalf("%s is not in the manifest", file)
	return fixtures.Fixture{}
}

// signalIndex is the index of the first signal named name in h, or -1.
func signalIndex(h *historypb.History, name string) int {
	for i, e := range h.GetEvents() {
		if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == name {
			return i
		}
	}
	return -1
}

// between lists the event types of h strictly between indexes i and j.
func between(h *historypb.History, i, j int) []enumspb.EventType {
	var out []enumspb.EventType
	for _, e := range h.GetEvents()[i+1 : j] {
		out = append(out, e.GetEventType())
	}
	return out
}

// haltedEvent decodes the payload of the n-th (from 0) loop.halted signal.
func haltedEvent(t *testing.T, h *historypb.History, n int) protocol.HaltEvent {
	t.Helper()
	for _, e := range h.GetEvents() {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a.GetSignalName() != protocol.DefaultHaltedSignal {
			continue
		}
		if n--; n < 0 {
			var ev protocol.HaltEvent
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(a.GetInput().GetPayloads()[0], &ev))
			return ev
		}
	}
	t.Fatal("no such loop.halted signal")
	return protocol.HaltEvent{}
}

// memos decodes the guard's memo entries the history upserts, in order.
func memos[T any](t *testing.T, h *historypb.History) []T {
	t.Helper()
	var out []T
	for _, e := range h.GetEvents() {
		p := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()["loopguard"]
		if p == nil {
			continue
		}
		var m T
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &m))
		out = append(out, m)
	}
	return out
}

// memoStates lists the guard's memo states the history upserts, in order.
func memoStates(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var out []string
	for _, m := range memos[struct {
		State  string `json:"state"`
		Reason string `json:"haltReason"`
	}](t, h) {
		out = append(out, m.State+":"+m.Reason)
	}
	return out
}

// scheduled lists the activity types scheduled in events[from:to].
func scheduled(h *historypb.History, from, to int) []string {
	var out []string
	for _, e := range h.GetEvents()[from:to] {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			out = append(out, a.GetActivityType().GetName())
		}
	}
	return out
}

// workflowResult decodes the workflow's result.
func workflowResult(t *testing.T, h *historypb.History, into any) {
	t.Helper()
	evs := h.GetEvents()
	a := evs[len(evs)-1].GetWorkflowExecutionCompletedEventAttributes()
	require.NotNil(t, a, "the workflow completed")
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), into))
}

func readFixture(t *testing.T, file string) *historypb.History {
	t.Helper()
	h, err := testsuite.ReadHistoryFile(filepath.Join(historiesDir, file))
	require.NoError(t, err)
	return h
}

// TestV3ObserveUserStop: with OnHalt observe, a human's halt pauses the
// workflow (before version 3 it was only observed): the loop.halted payload
// says user_stop, not observed; the memo shows the pause; no call is made
// between the halt and the resume signal.
func TestV3ObserveUserStop(t *testing.T) {
	const file = "observe-user-stop.json"
	f := fixtureEntry(t, file)
	opts, ok := fixtures.GuardOptions(f.Guard)
	require.True(t, ok)
	assert.Equal(t, protocol.OnHaltObserve, opts.OnHalt, "recorded in shadow mode")

	h := readFixture(t, file)
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals)

	ev := haltedEvent(t, h, 0)
	assert.Equal(t, protocol.ReasonUserStop, ev.HaltReason, "the recorded loop.halted payload")
	assert.EqualValues(t, "user_stop", ev.Detector)
	assert.False(t, ev.Observed, "a human's halt is not merely observed in shadow mode")
	assert.Equal(t, 1, ev.Seq)

	stop, halted, resume := signalIndex(h, protocol.DefaultHaltSignal), signalIndex(h, protocol.DefaultHaltedSignal), signalIndex(h, protocol.DefaultResumeSignal)
	require.True(t, stop >= 0 && halted >= 0 && resume >= 0, "halt, loop.halted and resume signals")
	assert.Less(t, stop, halted)
	assert.Less(t, halted, resume)
	assert.Contains(t, between(h, 0, stop), enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, "the loop was mid-way when the human stopped it")
	assert.Contains(t, between(h, stop, halted), enumspb.EVENT_TYPE_TIMER_FIRED, "it stopped at the call after the sleep")
	assert.Empty(t, scheduled(h, halted, resume), "paused: no call until the human resumes")
	assert.Equal(t, []string{"halted:user_stop", "running:"}, memoStates(t, h), "the memo shows the pause and the resume")
	assert.NotEmpty(t, scheduled(h, resume, len(h.GetEvents())), "the loop goes on after the resume")

	var res fixtures.Result
	workflowResult(t, h, &res)
	assert.Equal(t, 6, res.Calls)
	assert.False(t, res.Escalated)
}

// TestV3ParallelBranches: while one branch is paused on its halt, the other
// branch's next call waits for the same decision instead of raising a halt
// of its own (before version 3 each branch raised its own): one halt, and
// the other branch wakes during the pause (its timer fires) but calls only
// after the resume.
func TestV3ParallelBranches(t *testing.T) {
	const file = "parallel-branches.json"
	h := readFixture(t, file)
	info := testsuite.Inspect(h)
	assert.Equal(t, interceptor.GuardVersion, info.GuardVersion)
	assert.Equal(t, 1, info.HaltedSignals, "one halt for both branches")

	ev := haltedEvent(t, h, 0)
	assert.Equal(t, protocol.ReasonStalled, ev.HaltReason)
	assert.Equal(t, "Code", ev.Node, "the looping branch halted")
	assert.False(t, ev.Observed)

	halted, resume := signalIndex(h, protocol.DefaultHaltedSignal), signalIndex(h, protocol.DefaultResumeSignal)
	require.True(t, halted >= 0 && resume > halted, "loop.halted, then resume")
	assert.Contains(t, between(h, halted, resume), enumspb.EVENT_TYPE_TIMER_FIRED, "the other branch woke during the pause")
	assert.Empty(t, scheduled(h, halted, resume), "and its call waited for the decision")
	after := scheduled(h, resume, len(h.GetEvents()))
	assert.Contains(t, after, "Code", "the looping branch goes on after the resume")
	assert.Contains(t, after, "Research", "and so does the other")
	assert.Equal(t, []string{"halted:stalled", "running:"}, memoStates(t, h), "one pause, one resume")

	var res fixtures.ParallelResult
	workflowResult(t, h, &res)
	require.Len(t, res.Branches, 2)
	assert.Equal(t, 5, res.Branches[0].Calls, "the looping branch completes")
	assert.Equal(t, 4, res.Branches[1].Calls, "the other branch completes")
	assert.False(t, res.Escalated)
}

// withGuardVersion returns a copy of h whose loopguard version marker (and
// its TemporalChangeVersion search attribute) says version v.
func withGuardVersion(t testing.TB, h *historypb.History, v int) *historypb.History {
	t.Helper()
	orig := testsuite.Inspect(h).GuardVersion
	h = proto.Clone(h).(*historypb.History)
	dc := converter.GetDefaultDataConverter()
	var marker, attr bool
	for _, e := range h.GetEvents() {
		if a := e.GetMarkerRecordedEventAttributes(); a != nil && a.GetMarkerName() == "Version" {
			var id string
			if p := a.GetDetails()["change-id"]; p != nil && dc.FromPayload(p.GetPayloads()[0], &id) == nil && id == "loopguard" {
				p, err := dc.ToPayload(v)
				require.NoError(t, err)
				a.GetDetails()["version"] = &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}
				marker = true
			}
		}
		if a := e.GetUpsertWorkflowSearchAttributesEventAttributes(); a != nil {
			f := a.GetSearchAttributes().GetIndexedFields()
			if old, ok := f["TemporalChangeVersion"]; ok {
				var versions []string
				require.NoError(t, dc.FromPayload(old, &versions))
				require.Equal(t, []string{"loopguard-" + strconv.Itoa(orig)}, versions)
				p, err := dc.ToPayload([]string{"loopguard-" + strconv.Itoa(v)})
				require.NoError(t, err)
				p.Metadata["type"] = old.GetMetadata()["type"]
				f["TemporalChangeVersion"] = p
				attr = true
			}
		}
	}
	require.True(t, marker && attr, "the history has the guard's version marker and search attribute")
	require.Equal(t, v, testsuite.Inspect(h).GuardVersion)
	return h
}
