package watch

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestSignalledWarning(t *testing.T) {
	tests := []struct {
		name, signal, id string
		want             int
		wantOK           bool
	}{
		{"the watcher's", WarningSignal, history.WarningRequestID("run-1", 17), 17, true},
		{"a run id with colons", WarningSignal, history.WarningRequestID("a:b", 3), 3, true},
		{"another signal", "loop.resume", history.WarningRequestID("run-1", 17), 0, false},
		{"someone else's loop.warning", WarningSignal, "operator-42", 0, false},
		{"no request id", WarningSignal, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := signalledWarning(tt.signal, tt.id)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("signalledWarning(%q, %q) = %d, %v; want %d, %v", tt.signal, tt.id, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCountedBefore(t *testing.T) {
	// haltAt is a snapshot with one halt at call, answered by a pause of
	// request id pausedBy ("": none).
	haltAt := func(call int, pausedBy string) snapshot {
		s := snapshot{Halted: history.HaltedOf(interceptor.Verdict{Call: call, Halt: &protocol.HaltEvent{Seq: 1}})}
		if pausedBy != "" {
			s.Pauses = history.PausesOf(history.Pause{Event: 30, RequestID: pausedBy, HaltSeq: 1})
		}
		return s
	}
	with := func(s snapshot, signalled, pausedThrough int) snapshot {
		s.Signalled, s.PausedThrough = signalled, pausedThrough
		return s
	}
	tests := []struct {
		name string
		give snapshot
		want int
	}{
		{"nothing in the history", snapshot{}, 0},
		{"a signalled warning", snapshot{Signalled: 9}, 9},
		{"a watcher's pause", haltAt(20, PauseRequestID("wf", "run", 1)), 20},
		{"an operator's pause", haltAt(20, "operator"), 0},
		{"an unanswered halt", haltAt(20, ""), 0},
		{"the newest of both", with(haltAt(20, PauseRequestID("wf", "run", 1)), 31, 0), 31},
		// The calls that ran between the trip and the pause, and those of
		// the task in flight when it landed: the watchers following the
		// run read them before the pause ended.
		{"calls after the halt, before the pause ended", with(haltAt(20, PauseRequestID("wf", "run", 1)), 0, 24), 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countedBefore(tt.give); got != tt.want {
				t.Errorf("countedBefore = %d, want %d", got, tt.want)
			}
		})
	}
}
