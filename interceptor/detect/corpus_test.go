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
	Name         string   `json:"name"`
	Source       string   `json:"source"`
	Note         string   `json:"note,omitempty"`
	Loop         bool     `json:"loop"`
	Onset        int      `json:"onset"`
	WantReason   Reason   `json:"wantReason,omitempty"`
	WantDetector Detector `json:"wantDetector,omitempty"`
	// Ported: the trace is one of the peers' scenarios (testdata/corpus/peers).
	Ported bool `json:"-"`
	// Peer says whose rule the label rests on alone, when it does (a
	// threshold of the peer's own); such traces are reported, not failed.
	Peer   string          `json:"peer,omitempty"`
	Policy json.RawMessage `json:"policy,omitempty"`
	Calls  []corpusCall    `json:"calls"`
}

type corpusCall struct {
	Node     string          `json:"node"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	DT       float64         `json:"dt,omitempty"`
	Parallel bool            `json:"parallel,omitempty"`
	// Timer: the workflow set a durable timer (Sleep, NewTimer,
	// AwaitWithTimeout) after the previous call, before this one.
	Timer bool `json:"timer,omitempty"`
	// Input is outside input, not a call: a signal or an update the
	// workflow received (State.Input).
	Input bool `json:"input,omitempty"`
}

var corpusSources = []string{"seed000", "seed001", "seed002", "seed003", "seed004", "openhands", "cline", "swe-agent", "temporal", "loopguard"}

// loadCorpus reads every trace of testdata/corpus.
func loadCorpus(t testing.TB) []corpusTrace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	require.NoError(t, err)
	ported, err := filepath.Glob(filepath.Join("testdata", "corpus", "peers", "*.json"))
	require.NoError(t, err)
	files = append(files, ported...)
	require.NotEmpty(t, files)
	var traces []corpusTrace
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		var tr corpusTrace
		require.NoError(t, dec.Decode(&tr), f)
		tr.Ported = filepath.Base(filepath.Dir(f)) == "peers"
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

// policy is DefaultPolicy with the trace's overrides.
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
		return Observation{Failed: true, ErrorSig: ErrorSignature(kind, msg), ErrorHash: ErrorHash(kind, msg)}
	}
	return Extract(p, c.Node, c.Output)
}

// replay feeds a trace to a State: a call and the parallel calls after it
// are all Begun, then all Ended, each after its dt (default 1 s) of
// workflow time. It returns the index of the first call refused (len(calls)
// if a trip is pending at the end; -1 if none) and the trip.
func replay(p Policy, calls []corpusCall) (int, *Trip) {
	return replayWith(p, calls, nil)
}

// rung is what replayWith asks at a trip: warned (true) lets the call go
// ahead after the rung reset the State; call hears every call that went
// ahead.
type rung interface {
	warned(s *State, t *Trip) bool
	call(node string)
}

// replayWith is replay with a warning rung (nil: none).
func replayWith(p Policy, calls []corpusCall, r rung) (int, *Trip) {
	s := NewState(p)
	now := t0
	for i := 0; i < len(calls); {
		if calls[i].Input {
			s.Input(now)
			i++
			continue
		}
		j := i + 1
		for j < len(calls) && calls[j].Parallel {
			j++
		}
		refs := make([]StepRef, 0, j-i)
		if calls[i].Timer {
			s.Timer(now)
		}
		for k := i; k < j; k++ {
			ref, trip := s.Begin(calls[k].Node, now)
			for trip != nil && r != nil && r.warned(s, trip) {
				ref, trip = s.Begin(calls[k].Node, now)
			}
			if trip != nil {
				return k, trip
			}
			if r != nil {
				r.call(calls[k].Node)
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
	if t := s.Pending(); t != nil && (r == nil || !r.warned(s, t)) {
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

// corpusResult is the outcome of one trace under one generation.
type corpusResult struct {
	at   int // detection index, -1: no halt
	trip *Trip
}

// raiseBudgets turns every budget off (through the budget table), so that
// only the stall, repeat, error and oscillation detectors can halt.
func raiseBudgets(p *Policy) {
	for _, b := range Budgets() {
		b.Set(p, 0)
	}
}

// want returns the reason and detector a trace is labelled with.
func (tr *corpusTrace) want() (Reason, Detector) {
	return tr.WantReason, tr.WantDetector
}

// corpusStats are the numbers of one run over a set of traces.
type corpusStats struct {
	loops, caught, progressing, falseHalts int
	latencies                              []int
}

func (c *corpusStats) add(tr *corpusTrace, at int, trip *Trip, onlyStuck bool) (ok bool) {
	if !tr.Loop {
		c.progressing++
		if trip != nil {
			c.falseHalts++
			return false
		}
		return true
	}
	c.loops++
	if trip == nil || at < tr.Onset || (onlyStuck && trip.Reason == ReasonBudgetExceeded) {
		return false
	}
	c.caught++
	c.latencies = append(c.latencies, at-tr.Onset)
	return true
}

func (c *corpusStats) String() string {
	return fmt.Sprintf("stuck caught %d/%d, not-stuck halted %d/%d, median latency %s",
		c.caught, c.loops, c.falseHalts, c.progressing, median(c.latencies))
}

func median(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	w := slices.Clone(v)
	slices.Sort(w)
	if len(w)%2 == 1 {
		return fmt.Sprint(w[len(w)/2])
	}
	return fmt.Sprintf("%.1f", float64(w[len(w)/2-1]+w[len(w)/2])/2)
}

// TestCorpus runs every labelled trace with DefaultPolicy (plus the trace's
// overrides). It fails on a missed loop, a halt before a loop's onset, a
// false halt of a progressing trace, or a wrong reason, and reports
// recall, false halts and detection latency (calls from onset to the
// halted call).
func TestCorpus(t *testing.T) {
	runCorpus(t, loadCorpus(t))
}

func runCorpus(t *testing.T, traces []corpusTrace) {
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
		wantReason, wantDetector := tr.want()
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
		case trip.Reason != wantReason || (wantDetector != "" && trip.Detector != wantDetector):
			t.Errorf("%s: halted with %s/%s, want %s/%s: %s", tr.Name, trip.Reason, trip.Detector, wantReason, wantDetector, trip.Message)
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
		"detection latency (calls from onset to the halted call) median %s, mean %.2f, max %d; stall/oscillation/error detectors only: mean %.2f, max %d; halts by reason %v",
		loops, progressing, detected, loops, 100*float64(detected)/float64(max(loops, 1)), falseHalts, progressing,
		median(latencies), mean, most, bmean, bmost, byReason)
	t.Log("\n" + report.String())
	t.Log(summary)
	if testing.Verbose() {
		fmt.Println(summary)
	}
	require.GreaterOrEqual(t, loops, 20)
	require.GreaterOrEqual(t, progressing, 20)
}
