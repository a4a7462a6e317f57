package history

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Label is a run's label in a corpus: whether it is a loop, and the call
// (from 1) where the loop begins.
type Label struct {
	Loop  bool `json:"loop"`
	Onset int  `json:"onset,omitempty"`
}

// Labels are a corpus's labels by workflow ID, as a labels file holds
// them: {"agent-42": {"loop": true, "onset": 12}, "agent-43": {"loop": false}}.
type Labels map[string]Label

// ReadLabels reads a labels file.
func ReadLabels(path string) (Labels, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("history: read labels: %w", err)
	}
	var l Labels
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("history: labels file %s: %w", path, err)
	}
	return l, nil
}

// Score is how an options' first halts meet a corpus's labels: loops
// caught, progressing runs halted (false halts), and how soon.
type Score struct {
	Loops             int `json:"loops"`
	LoopsHalted       int `json:"loopsHalted"`
	Progressing       int `json:"progressing"`
	ProgressingHalted int `json:"progressingHalted"`
	// After are the calls from each caught loop's onset to its first
	// halt (negative: before the onset).
	After []int `json:"after,omitempty"`
}

// Add scores the execution ex if labels label it (by its workflow ID).
func (s *Score) Add(ex Execution, labels Labels) {
	l, ok := labels[ex.WorkflowID]
	if !ok || ex.Err != nil {
		return
	}
	first := 0
	for _, v := range ex.Verdicts {
		if v.Halt != nil {
			first = v.Call
			break
		}
	}
	if !l.Loop {
		s.Progressing++
		if first > 0 {
			s.ProgressingHalted++
		}
		return
	}
	s.Loops++
	if first > 0 {
		s.LoopsHalted++
		s.After = append(s.After, first-l.Onset)
	}
}

// MedianAfter is the median of After (0 with none).
func (s *Score) MedianAfter() int {
	if len(s.After) == 0 {
		return 0
	}
	a := append([]int(nil), s.After...)
	sort.Ints(a)
	return a[len(a)/2]
}
