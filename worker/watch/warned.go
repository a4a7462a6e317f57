package watch

import (
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/interceptor/history"
)

// A warning leaves no mark in a history unless a watcher signals it, so
// a restarted watcher knows it was counted from two marks alone: the
// watcher's own loop.warning signal for its call, and a watcher's pause
// of a later halt (that watcher read the verdicts before it, warnings
// included). Warnings after both are counted again by a new process.

// warningPrefix starts a watcher's warning request id (the run id and the
// call follow, history.WarningRequestID).
var warningPrefix = strings.TrimSuffix(history.WarningRequestID("", 0), ":0")

// signalledWarning returns the call of a watcher's loop.warning signal.
func signalledWarning(name, requestID string) (int, bool) {
	if name != WarningSignal || !strings.HasPrefix(requestID, warningPrefix) {
		return 0, false
	}
	i := strings.LastIndexByte(requestID, ':')
	call, err := strconv.Atoi(requestID[i+1:])
	return call, err == nil
}

// countedBefore is the newest call whose warning an earlier process
// counted: the newest a watcher signalled, or the call of the newest halt
// a watcher's pause answered.
func countedBefore(s snapshot) int {
	n := s.Signalled
	for _, h := range s.Halts {
		if h.Answered && (&history.Pause{RequestID: h.PausedBy}).ByWatcher() {
			n = max(n, h.Verdict.Call)
		}
	}
	return n
}
