package watch

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
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
	haltAt := func(call int, pausedBy string) halt {
		return halt{
			Verdict:  interceptor.Verdict{Call: call, Halt: &interceptor.HaltEvent{Seq: 1}},
			Answered: pausedBy != "", PausedBy: pausedBy,
		}
	}
	tests := []struct {
		name string
		give snapshot
		want int
	}{
		{"nothing in the history", snapshot{}, 0},
		{"a signalled warning", snapshot{Signalled: 9}, 9},
		{"a watcher's pause", snapshot{Halts: []halt{haltAt(20, PauseRequestID("wf", "run", 1))}}, 20},
		{"an operator's pause", snapshot{Halts: []halt{haltAt(20, "operator")}}, 0},
		{"an unanswered halt", snapshot{Halts: []halt{haltAt(20, "")}}, 0},
		{"the newest of both", snapshot{Signalled: 31, Halts: []halt{haltAt(20, PauseRequestID("wf", "run", 1))}}, 31},
		// The calls that ran between the trip and the pause, and those of
		// the task in flight when it landed: the watchers following the
		// run read them before the pause ended.
		{"calls after the halt, before the pause ended", snapshot{PausedThrough: 24,
			Halts: []halt{haltAt(20, PauseRequestID("wf", "run", 1))}}, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countedBefore(tt.give); got != tt.want {
				t.Errorf("countedBefore = %d, want %d", got, tt.want)
			}
		})
	}
}
