package history

import (
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Summary sums up the analysis of a set of histories.
type Summary struct {
	Executions int `json:"executions"`
	Guarded    int `json:"guarded"`
	Calls      int `json:"calls"`
	// WouldWarn and WouldHalt count the executions with at least one
	// warning or halt; Warnings and Halts count them all.
	WouldWarn int `json:"wouldWarn"`
	WouldHalt int `json:"wouldHalt"`
	Warnings  int `json:"warnings"`
	Halts     int `json:"halts"`
	// ByReason and ByDetector count the halts.
	ByReason   map[protocol.HaltReason]int `json:"byReason"`
	ByDetector map[string]int              `json:"byDetector"`
	// Saved counts the calls halts that pause or fail would have saved.
	Saved int `json:"saved"`
	// RecordedGuarded and RecordedHalts count the histories recorded with
	// the guard and the halts it really raised.
	RecordedGuarded int `json:"recordedGuarded"`
	RecordedHalts   int `json:"recordedHalts"`
	// Problems counts the events that could not be read; Failed the
	// histories that could not be judged at all.
	Problems int `json:"problems"`
	Failed   int `json:"failed"`
}

func (s *Summary) add(ex *Execution) {
	s.Executions++
	if ex.Err != nil {
		s.Failed++
		return
	}
	if ex.Guarded {
		s.Guarded++
	}
	s.Calls += len(ex.Calls)
	s.Problems += len(ex.Problems)
	s.Saved += ex.Saved
	if ex.Recorded.Guarded {
		s.RecordedGuarded++
		s.RecordedHalts += len(ex.Recorded.Halts)
	}
	warned, halted := false, false
	for _, v := range ex.Verdicts {
		if v.Warning != nil {
			s.Warnings++
			warned = true
			continue
		}
		s.Halts++
		halted = true
		if s.ByReason == nil {
			s.ByReason, s.ByDetector = map[protocol.HaltReason]int{}, map[string]int{}
		}
		s.ByReason[v.Halt.HaltReason]++
		s.ByDetector[string(v.Halt.Detector)]++
	}
	if warned {
		s.WouldWarn++
	}
	if halted {
		s.WouldHalt++
	}
}
