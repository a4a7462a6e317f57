package watch

import (
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/interceptor/history"
)

// A warning leaves no mark in a history unless a watcher signals it, so
// a restarted watcher knows it was counted from three marks alone: the
// watcher's own loop.warning signal for its call; a watcher's pause of a
// later halt (that watcher read the verdicts before it, warnings
// included); and the end of a watcher's pause: a watcher following the
// run while the pause held read every call scheduled before it ended
// (the calls between the trip and the pause, and those of the workflow
// task in flight when it landed: none is scheduled while it holds).
// Counting from the halt's call alone counted twice the warnings of the
// calls that ran between the trip and the pause. A pause that still
// holds is no mark: a second watcher following the run at once may not
// have read those calls yet. Warnings after the marks are counted by a
// new process.

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
// counted: the newest a watcher signalled, the newest scheduled before a
// watcher's pause ended, or the call of the newest halt a watcher's
// pause answered.
func countedBefore(s snapshot) int {
	n := max(s.Signalled, s.PausedThrough)
	for _, p := range s.Pauses.All() {
		if !p.ByWatcher() {
			continue
		}
		for _, seq := range append([]int{p.HaltSeq}, p.Superseded...) {
			if k := s.haltIndex(seq); k >= 0 {
				n = max(n, s.Halted.Call(k))
			}
		}
	}
	return n
}
