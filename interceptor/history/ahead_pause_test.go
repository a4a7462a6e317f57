package history

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// TestReaderForeseesTheHalt: once the third identical result is read and
// the workflow task that reads it has started, the Reader foresees halt
// 1 at the next call (Ahead), not before; no pause is foreseen while a
// halt waits or a pause holds.
func TestReaderForeseesTheHalt(t *testing.T) {
	b := newBuilder(t).task().calls(2, "Think", "same")
	r, err := NewReader(Options{})
	if err != nil {
		t.Fatal(err)
	}
	feed := func() {
		for _, e := range b.evs[r.Cursor():] {
			if err := r.Add(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed()
	if ev, _, ok := r.Ahead(); ok {
		t.Fatalf("foreseen after two identical results: %+v", ev)
	}
	// The third call, its result, and the task that reads it, started.
	n := len(b.evs)
	b.calls(1, "Think", "same")
	b.evs = b.evs[:len(b.evs)-1] // the task is in flight: not completed yet
	feed()
	ev, policy, ok := r.Ahead()
	if !ok || ev.Seq != 1 || ev.Detector != "identical_output" || ev.Node != "Think" || policy != protocol.OnHaltPause {
		t.Fatalf("Ahead = %+v, %s, %v: want halt 1, identical_output on Think, paused", ev, policy, ok)
	}
	if got := len(r.Execution().Verdicts); got != 0 {
		t.Fatalf("%d verdicts: Ahead must judge nothing (events from %d)", got, n)
	}
}

// TestAheadPauseAnswersTheHaltItForesaw: a watcher's pause asked while
// the task that reads the trip's results is in flight lands in the
// history after that task's commands (the server buffers it): it answers
// the halt the call raises, which then never waits for a pause of its
// own. A pause ahead whose halt did not come (the task scheduled no
// guarded call) answers nothing, and its unpause changes nothing: the
// halt, when it comes later, waits for its pause.
func TestAheadPauseAnswersTheHaltItForesaw(t *testing.T) {
	watcher := PauseRequestID(testWorkflowID, testRunID, 1)
	t.Run("the halt came", func(t *testing.T) {
		b := newBuilder(t).task().calls(3, "Think", "same")
		// The task that read the third result scheduled the tripping
		// call; the pause asked while it ran comes after its commands.
		b.schedule("Think")
		b.pause(PauseIdentity, watcher)
		ex := b.read(Options{})
		if ex.Pauses.Len() != 1 || ex.Pauses.At(0).HaltSeq != 1 {
			t.Fatalf("pauses %+v: want halt 1 answered by the pause ahead", ex.Pauses)
		}
		if p := ex.Pending(); p != nil {
			t.Fatalf("pending %+v: want none", p)
		}
		if len(ex.Verdicts) == 0 || ex.Verdicts[0].Call != 4 {
			t.Fatalf("verdicts %+v: want halt 1 at call 4", ex.Verdicts)
		}
	})
	t.Run("undone: the halt came later", func(t *testing.T) {
		b := newBuilder(t).task().calls(3, "Think", "same")
		// The task that read the third result scheduled nothing guarded
		// (it waits on a timer); the pause ahead is undone.
		b.pause(PauseIdentity, watcher).unpause(PauseIdentity)
		b.task()
		b.schedule("Think")
		b.task()
		ex := b.read(Options{})
		if ex.Pauses.Len() != 1 || ex.Pauses.At(0).HaltSeq != 0 || !ex.Pauses.At(0).Unpaused {
			t.Fatalf("pauses %+v: want the pause ahead answering nothing, unpaused", ex.Pauses)
		}
		p := ex.Pending()
		if p == nil || p.Seq != 1 {
			t.Fatalf("pending %+v: want halt 1 waiting for its pause", p)
		}
		if ex.Verdicts[0].Decision != nil {
			t.Fatalf("halt 1 decided %+v: the undone pause must not resume it", ex.Verdicts[0].Decision)
		}
	})
}

// schedule writes a call of activity typ scheduled, with no result yet.
func (b *builder) schedule(typ string) *builder {
	b.add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityId: "a", ActivityType: &commonpb.ActivityType{Name: typ}, Input: b.payloads("same question"),
		}}
	})
	return b
}
