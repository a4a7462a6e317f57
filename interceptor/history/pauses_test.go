package history

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/loopguard/loopguard/interceptor/protocol"
)

// TestPausesKeepWhatTheyAreGiven: a pause kept compact comes back as the
// history gave it, whatever its numbers, time, request id and names,
// including those too wide to pack (kept whole), and the pause in force
// stays whole.
func TestPausesKeepWhatTheyAreGiven(t *testing.T) {
	at := time.Date(2026, 11, 29, 3, 0, 0, 7, time.UTC)
	pause := func(event int64, seq int, requestID string) Pause {
		return Pause{Event: event, Identity: PauseIdentity, Reason: "loopguard: stalled on Think", RequestID: requestID,
			HaltSeq: seq, Ended: event + 1, Unpaused: true, UnpausedBy: "alice@ops", UnpauseReason: "looked at it",
			Called: 12, Time: at.Add(time.Duration(event) * time.Second), CalledBefore: 11}
	}
	with := func(p Pause, f func(*Pause)) Pause { f(&p); return p }
	tests := []struct {
		name string
		give []Pause
	}{
		{"a watcher's pauses and an operator's", []Pause{
			pause(10, 1, PauseRequestID("wf", "run-1", 1)),
			with(pause(20, 2, "ui-7f3"), func(p *Pause) { p.Identity, p.Superseded = "alice", []int{3, 4} }),
			pause(30, 5, PauseRequestID("wf", "run-1", 5)),
		}},
		{"someone else's pause, no halt", []Pause{with(pause(10, 0, "maint-1"), func(p *Pause) { p.Reason = "maintenance" })}},
		{"a pause ahead undone: the request id names a halt it did not answer", []Pause{pause(10, 0, PauseRequestID("wf", "run-1", 7))}},
		{"a request id with a seq not as Itoa writes it", []Pause{pause(10, 7, "loopguard-halt:run-1:007")}},
		{"ended by the run's close", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Unpaused, p.UnpausedBy, p.UnpauseReason = false, "", "" })}},
		{"the zero time", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Time = time.Time{} })}},
		{"the epoch", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Time = time.Unix(0, 0).UTC() })}},
		{"a time UnixNano cannot hold", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Time = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC) })}},
		{"an event past uint32", []Pause{pause(math.MaxUint32+1, 1, "x"), pause(10, 2, "y")}},
		{"a pause that held past 65535 events", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Ended = 10 + math.MaxUint16 + 1 }), pause(20, 2, "y")}},
		{"a pause that held past 65535 calls", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Called = p.CalledBefore + math.MaxUint16 + 1 }), pause(20, 2, "y")}},
		{"an end before the pause", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.Ended = 5 }), pause(20, 2, "y")}},
		{"calls past int32", []Pause{with(pause(10, 1, "x"), func(p *Pause) { p.CalledBefore, p.Called = math.MaxInt32+1, math.MaxInt32+2 }), pause(20, 2, "y")}},
		{"a halt seq past int32", []Pause{pause(10, math.MaxInt32+1, "x"), pause(20, 2, "y")}},
		{"many superseded, over blocks", []Pause{
			with(pause(10, 1, "x"), func(p *Pause) { p.Superseded = []int{2, 3, 4, 5, 6, 7} }),
			with(pause(20, 8, "y"), func(p *Pause) {
				for s := 9; s < 60; s++ {
					p.Superseded = append(p.Superseded, s)
				}
			}),
		}},
		{"the last in force", []Pause{pause(10, 1, "x"), with(pause(20, 2, "y"), func(p *Pause) {
			p.Ended, p.Unpaused, p.UnpausedBy, p.UnpauseReason, p.Called, p.Superseded = 0, false, "", "", 0, []int{3}
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PausesOf(tt.give...)
			if !reflect.DeepEqual(got.List(), tt.give) {
				t.Fatalf("kept as\n%+v\nwant\n%+v", got.List(), tt.give)
			}
			last := tt.give[len(tt.give)-1]
			if p := (&Execution{Pauses: got}).Paused(); (p != nil) != (last.Ended == 0) || p != nil && !reflect.DeepEqual(*p, last) {
				t.Errorf("in force %+v, want %+v", p, last)
			}
			for _, q := range tt.give {
				for _, seq := range append([]int{q.HaltSeq}, q.Superseded...) {
					if seq == 0 {
						continue
					}
					if a, ok := got.Answering(seq); !ok || !reflect.DeepEqual(a, q) {
						t.Errorf("Answering(%d) = %+v, %v; want %+v", seq, a, ok, q)
					}
				}
			}
			if _, ok := got.Answering(1 << 40); ok {
				t.Error("Answering a halt no pause answered: found one")
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var back Pauses
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.List(), tt.give) {
				t.Errorf("JSON %s read back as %+v (%v)", b, back.List(), err)
			}
		})
	}

	t.Run("more names than the table holds", func(t *testing.T) {
		var give []Pause
		for i := range math.MaxUint16 + 10 {
			give = append(give, pause(int64(10*i+10), i+1, fmt.Sprint("op-", i)))
		}
		if got := PausesOf(give...); !reflect.DeepEqual(got.List(), give) {
			t.Error("pauses past the name table's size not kept as given")
		}
	})

	keptSize(t, "history.Pauses", unsafe.Sizeof(keptPause{}))
}

// TestPausesViewStaysWhileTheReaderReadsOn: a Pauses taken from an
// Execution reads the same pauses after the reader read more pauses and
// changed the one in force (the watcher reads its snapshot on another
// goroutine).
func TestPausesViewStaysWhileTheReaderReadsOn(t *testing.T) {
	b := newBuilder(t).task()
	r, err := NewReader(Options{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	add := func() {
		for _, e := range b.evs[r.cursor:] {
			if err := r.Add(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.calls(4, "Think", "same").pause(PauseIdentity, PauseRequestID(testWorkflowID, testRunID, 1)).task()
	add()
	before := r.Execution().Pauses
	want := before.List()
	if len(want) != 1 || want[0].HaltSeq == 0 || before.IsZero() {
		t.Fatalf("pauses %+v: want the watcher's pause in force, answering a halt", want)
	}
	for i := range 40 {
		b.unpause("ops").calls(4, "Think", "same").pause(PauseIdentity, PauseRequestID(testWorkflowID, testRunID, i+2)).task()
		add()
	}
	if got := before.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("the view read %+v after the reader read on, %+v before", got, want)
	}
	if n := r.Execution().Pauses.Len(); n != 41 {
		t.Errorf("%d pauses read, want 41", n)
	}
}

// TestResumeKeptOnce: a halt, its pause and the unpause read in one page
// (a watcher restarted on a long history) hand the halt over with its
// resume noted; the halt kept compact reads the resume from its pause,
// and no second record of it is kept.
func TestResumeKeptOnce(t *testing.T) {
	b := newBuilder(t).task()
	b.calls(4, "Think", "same").pause(PauseIdentity, PauseRequestID(testWorkflowID, testRunID, 1)).unpause("ops").calls(1, "Think", "other").task()
	r, err := NewReader(Options{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(b.evs...); err != nil {
		t.Fatal(err)
	}
	ex := r.Execution()
	want := protocol.Decision{Action: protocol.ActionResume, Reason: "looked at it", By: "ops", HaltSeq: 1}
	var handed *protocol.Decision
	for _, v := range ex.Verdicts {
		if v.Halt != nil && v.Halt.Seq == 1 {
			handed = v.Decision
		}
	}
	if handed == nil || *handed != want {
		t.Fatalf("halt 1 handed over with decision %+v, want %+v", handed, want)
	}
	if ex.Halted.Len() == 0 {
		t.Fatal("no halt kept")
	}
	if got := ex.Halted.At(0).Decision; got == nil || *got != want {
		t.Errorf("halt 1 kept with decision %+v, want %+v", got, want)
	}
	if n := len(r.run.handed.decided); n != 0 {
		t.Errorf("%d decisions kept beside the pauses, want 0: %+v", n, r.run.handed.decided)
	}
}
