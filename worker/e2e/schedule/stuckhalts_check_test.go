package schedule_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// TestStuckHaltsCheck shows, without a server, that stuck-halts fails on a
// stuck loop halted more than B calls after its onset, on one never
// halted though it ran past B, and on one that never trips; and passes on
// a loop halted within B, on one whose run ended first, on a halt at the
// onset (Warnings 0), and when the calls it must not count (a warning in
// force from before the loop, the halt handler's calls, a halt before the
// loop) would have made it fail.
func TestStuckHaltsCheck(t *testing.T) {
	opts := schedule.WithLiveness(schedule.Profiles[schedule.ProfileDefault](), 1)
	b1, err := interceptor.HaltBound(opts, 1)
	require.NoError(t, err)
	b4, err := interceptor.HaltBound(opts, 4)
	require.NoError(t, err)
	onset := schedule.OnsetRounds(opts)
	require.Equal(t, 10, b1, "(1 × (RetripRounds 8 + 1) + 1) × 1")
	require.Equal(t, 9, onset)

	one := schedule.Stuck{Rounds: 100, Round: []schedule.Group{{Call: schedule.Call{Kind: schedule.KindActivity, Node: "Code", Tag: "t9"}, Width: 1}}}
	wide := schedule.Stuck{Rounds: 100, Round: []schedule.Group{{Call: schedule.Call{Kind: schedule.KindActivity, Node: "Code", Tag: "t9"}, Width: 4}}}
	// warnedLoop is n calls of the stuck loop from call number from,
	// warned from the warned-th (-1: none) with warning n of loop Code.
	warnedLoop := func(from, n, warned, nth int) []event {
		var evs []event
		for i := from; i < from+n; i++ {
			var w *protocol.Warning
			if warned >= 0 && i >= warned {
				w = &protocol.Warning{Detector: detect.DetectorIdenticalOutput, N: nth, Of: 1, Node: "Code", Nodes: []string{"Code"}, Loop: "Code"}
			}
			evs = append(evs, taggedCall(schedule.StuckTag("t9", i, 0), "Code", w))
		}
		return evs
	}
	loop := func(from, n, warned int) []event { return warnedLoop(from, n, warned, 1) }
	halt := func(seq int) []event { return []event{halted(seq), echo(seq, detect.DetectorIdenticalOutput)} }
	cat := func(parts ...[]event) []event {
		var out []event
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name      string
		stuck     schedule.Stuck
		give      []event
		wantN     int
		halted    bool
		wantAfter int
	}{
		{name: "halted within B", stuck: one, give: cat(loop(0, 9, 3), halt(1)), halted: true, wantAfter: 6},
		{name: "halted exactly B after the onset", stuck: one, give: cat(loop(0, 3+b1, 3), halt(1)), halted: true, wantAfter: b1},
		{name: "halted one call past B", stuck: one, give: cat(loop(0, 4+b1, 3), halt(1)), wantN: 1, halted: true, wantAfter: b1 + 1},
		{name: "never halted, past B", stuck: one, give: loop(0, 20, 3), wantN: 1, wantAfter: 17},
		{name: "the run ended first", stuck: one, give: loop(0, 10, 3), wantAfter: 7},
		{name: "never tripped", stuck: one, give: loop(0, onset+1, -1), wantN: 1},
		{name: "not tripped yet when the run ended", stuck: one, give: loop(0, onset, -1)},
		{name: "tripped late", stuck: one, give: cat(loop(0, onset+2, onset+1), halt(1)), wantN: 1, halted: true, wantAfter: 1},
		{name: "halted at the onset (Warnings 0)", stuck: one, give: cat(loop(0, 3, -1), halt(1)), halted: true},
		{name: "a warning in force from before is not the onset", stuck: one,
			give:   cat([]event{taggedCall("t1", "Code", &protocol.Warning{N: 1, Of: 1, Node: "Code", Nodes: []string{"Code"}, Loop: "Code"})}, loop(0, 5, 0), warnedLoop(5, b1, 5, 2), halt(1)),
			halted: true, wantAfter: b1},
		{name: "the halt handler's calls are not counted", stuck: one,
			give: cat(loop(0, 5, 3), handlerCalls(2*b1), loop(5, 3, 3), halt(1)), halted: true, wantAfter: 5},
		{name: "a halt before the loop is not its halt", stuck: one,
			give: cat(halt(1), []event{running(), taggedCall("t1", "Code", nil)}, loop(0, onset+1, -1)), wantN: 1},
		{name: "rounds of parallel calls: B grows with them", stuck: wide, give: cat(loop(0, 4+b4, 4), halt(1)), halted: true, wantAfter: b4},
		{name: "rounds of parallel calls: past B", stuck: wide, give: cat(loop(0, 5+b4, 4), halt(1)), wantN: 1, halted: true, wantAfter: b4 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, got := stuckHaltViolations(runOf(t, tt.give), converter.GetDefaultDataConverter(), tt.stuck, opts)
			assert.Len(t, got, tt.wantN, "%q", got)
			assert.Equal(t, tt.halted, out.halted, "halted")
			assert.Equal(t, tt.wantAfter, out.after, "calls after the onset")
		})
	}
}

// TestExtendedBound: each resume-extend answer lengthens the bound by the
// rounds its edge budget adds, from the default budget when the options
// leave it unset.
func TestExtendedBound(t *testing.T) {
	opts := schedule.WithLiveness(schedule.Profiles[schedule.ProfileDefault](), 2)
	base, err := interceptor.HaltBound(opts, 1)
	require.NoError(t, err)
	ext, err := interceptor.HaltBound(extended(opts, 2), 1)
	require.NoError(t, err)
	edge := detect.DefaultPolicy().MaxEdgeWithoutProgress + 2*resumeExtension["maxEdgeWithoutProgress"]
	assert.Equal(t, 2*(edge+1+1)+1, ext, "Warnings 2: (2 × (edge budget + 1 + 1) + 1)")
	assert.Greater(t, ext, base)
	assert.Zero(t, extended(opts, 0).MaxEdgeWithoutProgress, "no extension, no change")
}

// taggedCall is an activity call of node whose input carries tag, and
// whose notice header carries w (nil: no header).
func taggedCall(tag, node string, w *protocol.Warning) event {
	return func(t *testing.T) *historypb.HistoryEvent {
		e := call(node)(t)
		a := e.GetActivityTaskScheduledEventAttributes()
		a.Input = &commonpb.Payloads{Payloads: []*commonpb.Payload{payload(t, schedule.AgentInput{Tag: tag})}}
		if w != nil {
			a.Header = &commonpb.Header{Fields: map[string]*commonpb.Payload{protocol.NoticeHeader: payload(t, protocol.Notice{Warning: w})}}
		}
		return e
	}
}

// handlerCalls are n calls a halt handler of kind repeat makes of Code.
func handlerCalls(n int) []event {
	var evs []event
	for i := range n {
		evs = append(evs, taggedCall(fmt.Sprintf("%s1-repeat-%d", schedule.HandlerTagPrefix, i), "Code", nil))
	}
	return evs
}
