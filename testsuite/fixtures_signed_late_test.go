package testsuite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

// The v13- fixtures are histories of guard version 13: a signed answer sent
// as a signal is judged at the time of the task that delivers it.

const v13Late = "signed-late-answers.json"

// TestV13AnswersAnHourLate: the same history with its answers sent an
// hour after the halts they answer (every event from the first answer on
// an hour later, each answer signed again by the fixtures' operator key
// for a window an hour later) replays as recorded, and the analysis takes
// the same answers, from the same key, with the same guidance, by signal
// and by update.
func TestV13AnswersAnHourLate(t *testing.T) {
	f := fixtureEntry(t, v13Late)
	recorded, ok := fixtures.GuardOptions(f.Guard)
	require.True(t, ok)
	h := readFixture(t, v13Late)
	late := answeredLater(t, h, time.Hour)
	require.NoError(t, testsuite.ReplayHistory(late, replayOpts(t, f, recorded)), "an hour late, as recorded")

	decisions := func(h *historypb.History) []protocol.Decision {
		a, err := testsuite.NewAnalyzer(testsuite.AnalyzeOptions{Guard: recorded, AsRecorded: true})
		require.NoError(t, err)
		var out []protocol.Decision
		for _, v := range a.History(h, "").Verdicts {
			if v.Halt != nil && v.Decision != nil {
				out = append(out, *v.Decision)
			}
		}
		return out
	}
	want := decisions(h)
	require.Len(t, want, 2, "the analysis of the fixture as recorded answers both halts")
	assert.Equal(t, fixtures.OperatorKeyID, want[0].KeyID)
	assert.Equal(t, "read the failing test first", want[0].Guidance)
	assert.Equal(t, protocol.ActionEscalate, want[1].Action)
	assert.Equal(t, want, decisions(late))
}

// answeredLater returns a copy of h in which every event from the first
// signed answer on happens by later, and each signed answer (signal or
// update) is signed again by the fixtures' operator key for its window
// moved by later, and each halt's echo (loop.halted) tells of the time
// moved by later.
func answeredLater(t *testing.T, h *historypb.History, later time.Duration) *historypb.History {
	t.Helper()
	h = proto.Clone(h).(*historypb.History)
	dc := converter.GetDefaultDataConverter()
	resign := func(ps *commonpb.Payloads) bool {
		if len(ps.GetPayloads()) != 1 {
			return false
		}
		var sa protocol.SignedAnswer
		if dc.FromPayload(ps.GetPayloads()[0], &sa) != nil || sa.Answer.KeyID != fixtures.OperatorKeyID {
			return false
		}
		a := sa.Answer
		a.NotBefore, a.NotAfter = a.NotBefore.Add(later), a.NotAfter.Add(later)
		again, err := protocol.SignAnswer(a, fixtures.OperatorKey())
		require.NoError(t, err)
		p, err := dc.ToPayload(again)
		require.NoError(t, err)
		ps.Payloads[0] = p
		return true
	}
	moving, answers := false, 0
	for _, e := range h.GetEvents() {
		var in *commonpb.Payloads
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
			in = a.GetInput()
		} else if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			in = a.GetAcceptedRequest().GetInput().GetArgs()
		}
		if in != nil && resign(in) {
			moving = true
			answers++
		}
		if a := e.GetWorkflowExecutionSignaledEventAttributes(); moving && a.GetSignalName() == protocol.DefaultHaltedSignal {
			// A halt's echo carries the workflow time it was raised at.
			var ev protocol.HaltEvent
			require.NoError(t, dc.FromPayload(a.GetInput().GetPayloads()[0], &ev))
			ev.WorkflowTime = ev.WorkflowTime.Add(later)
			p, err := dc.ToPayload(ev)
			require.NoError(t, err)
			a.Input.Payloads[0] = p
		}
		if moving {
			e.EventTime = timestamppb.New(e.GetEventTime().AsTime().Add(later))
		}
	}
	require.Equal(t, 2, answers, "a signed signal and a signed update")
	return h
}
