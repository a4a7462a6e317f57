package detect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// corpusTrace is one labelled trace of testdata/corpus (see its README.md).
type corpusTrace struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	Note         string          `json:"note,omitempty"`
	Loop         bool            `json:"loop"`
	Onset        int             `json:"onset"`
	WantReason   Reason          `json:"wantReason,omitempty"`
	WantDetector Detector        `json:"wantDetector,omitempty"`
	Policy       json.RawMessage `json:"policy,omitempty"`
	Calls        []corpusCall    `json:"calls"`
}

type corpusCall struct {
	Node     string          `json:"node"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	DT       float64         `json:"dt,omitempty"`
	Parallel bool            `json:"parallel,omitempty"`
}

var corpusSources = []string{"seed000", "seed001", "seed002", "seed003", "seed004", "openhands", "cline"}

// loadCorpus reads every trace of testdata/corpus.
func loadCorpus(t *testing.T) []corpusTrace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var traces []corpusTrace
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		var tr corpusTrace
		require.NoError(t, dec.Decode(&tr), f)
		require.NotEmpty(t, tr.Name, f)
		require.Contains(t, corpusSources, tr.Source, f)
		require.NotEmpty(t, tr.Calls, f)
		if tr.Loop {
			require.NotEmpty(t, tr.WantReason, f)
			require.True(t, tr.Onset >= 0 && tr.Onset < len(tr.Calls), "%s: onset", f)
		}
		traces = append(traces, tr)
	}
	return traces
}

// corpusPolicy is DefaultPolicy with the trace's overrides.
func (tr *corpusTrace) policy() (Policy, error) {
	p := DefaultPolicy()
	if len(tr.Policy) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(tr.Policy)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// observe turns a corpus call into an Observation the way the interceptor
// does: ErrorSignature for errors ("Kind: message"), Extract for results.
func observe(p Policy, c corpusCall) Observation {
	if c.Error != "" {
		kind, msg, ok := strings.Cut(c.Error, ": ")
		if !ok {
			kind, msg = "", c.Error
		}
		return Observation{Failed: true, ErrorSig: ErrorSignature(kind, msg)}
	}
	return Extract(p, c.Node, c.Output)
}

// replay feeds a trace to a State: a call and the parallel calls after it
// are all Begun, then all Ended, each after its dt (default 1 s) of
// workflow time. It returns the index of the first call refused (len(calls)
// if a trip is pending at the end; -1 if none) and the trip.
func replay(p Policy, calls []corpusCall) (int, *Trip) {
	s := NewState(p)
	now := t0
	for i := 0; i < len(calls); {
		j := i + 1
		for j < len(calls) && calls[j].Parallel {
			j++
		}
		refs := make([]StepRef, 0, j-i)
		for k := i; k < j; k++ {
			ref, trip := s.Begin(calls[k].Node, now)
			if trip != nil {
				return k, trip
			}
			refs = append(refs, ref)
		}
		end := now
		for k := i; k < j; k++ {
			dt := time.Second
			if calls[k].DT > 0 {
				dt = time.Duration(calls[k].DT * float64(time.Second))
			}
			s.End(refs[k-i], observe(p, calls[k]), now.Add(dt))
			end = later(end, now.Add(dt))
		}
		now = end
		i = j
	}
	if t := s.Pending(); t != nil {
		return len(calls), t
	}
	return -1, nil
}

func meanMax(v []int) (float64, int) {
	if len(v) == 0 {
		return 0, 0
	}
	sum := 0
	for _, x := range v {
		sum += x
	}
	return float64(sum) / float64(len(v)), slices.Max(v)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// TestCorpus runs every labelled trace with DefaultPolicy (plus the trace's
// overrides). It fails on a missed loop, a halt before a loop's onset, a
// false halt of a progressing trace, or a wrong reason, and reports recall,
// false halts and detection latency (calls from onset to the halted call).
func TestCorpus(t *testing.T) {
	traces := loadCorpus(t)
	var loops, detected, falseHalts int
	var progressing int
	var latencies, behavioural []int
	byReason := map[Reason]int{}
	var report strings.Builder
	for _, tr := range traces {
		p, err := tr.policy()
		require.NoError(t, err, tr.Name)
		at, trip := replay(p, tr.Calls)
		line := fmt.Sprintf("%-48s %-9s ", tr.Name, tr.Source)
		if !tr.Loop {
			progressing++
			if trip != nil {
				falseHalts++
				t.Errorf("%s: false halt at call %d: %s (%s)", tr.Name, at, trip.Message, trip.Detector)
				line += fmt.Sprintf("FALSE HALT at %d: %s", at, trip.Detector)
			} else {
				line += fmt.Sprintf("ok, %d calls, no halt", len(tr.Calls))
			}
			fmt.Fprintln(&report, line)
			continue
		}
		loops++
		switch {
		case trip == nil:
			t.Errorf("%s: loop missed (onset %d, %d calls)", tr.Name, tr.Onset, len(tr.Calls))
			line += "MISSED"
		case at < tr.Onset:
			t.Errorf("%s: halted at call %d, before the loop's onset %d: %s", tr.Name, at, tr.Onset, trip.Message)
			line += fmt.Sprintf("EARLY at %d: %s", at, trip.Detector)
		case trip.Reason != tr.WantReason || (tr.WantDetector != "" && trip.Detector != tr.WantDetector):
			t.Errorf("%s: halted with %s/%s, want %s/%s: %s", tr.Name, trip.Reason, trip.Detector, tr.WantReason, tr.WantDetector, trip.Message)
			line += fmt.Sprintf("WRONG %s/%s", trip.Reason, trip.Detector)
		default:
			detected++
			byReason[trip.Reason]++
			latencies = append(latencies, at-tr.Onset)
			if trip.Reason != ReasonBudgetExceeded {
				behavioural = append(behavioural, at-tr.Onset)
			}
			line += fmt.Sprintf("halted at %d (onset %d, +%d): %s/%s — %s", at, tr.Onset, at-tr.Onset, trip.Reason, trip.Detector, trip.Message)
		}
		fmt.Fprintln(&report, line)
	}
	mean, most := meanMax(latencies)
	bmean, bmost := meanMax(behavioural)
	summary := fmt.Sprintf("corpus: %d looping, %d progressing traces; recall %d/%d (%.0f%%); false halts %d/%d; "+
		"detection latency (calls from onset to the halted call) mean %.2f, max %d; stall/oscillation/error detectors only: mean %.2f, max %d; halts by reason %v",
		loops, progressing, detected, loops, 100*float64(detected)/float64(max(loops, 1)), falseHalts, progressing,
		mean, most, bmean, bmost, byReason)
	t.Log("\n" + report.String())
	t.Log(summary)
	if testing.Verbose() {
		fmt.Println(summary)
	}
	require.GreaterOrEqual(t, loops, 20)
	require.GreaterOrEqual(t, progressing, 20)
}
