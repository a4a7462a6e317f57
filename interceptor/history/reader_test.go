package history

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor"
)

// fixtureDir holds the recorded histories the analysis tests read: runs of
// every guard version, with and without the guard, halts answered by
// humans, the halt handler and the guard itself, children,
// continue-as-new chains and two 1,000-call workloads.
var fixtureDir = filepath.Join("..", "..", "testsuite", "testdata", "histories")

// readerOptions are the options the equivalence is checked under: the
// defaults, the recorded decisions, another grain, the warning rung, and
// a node namer that reads the arguments.
func readerOptions() map[string]Options {
	return map[string]Options{
		"defaults":          {},
		"as-recorded":       {AsRecorded: true},
		"tool-call":         {Guard: interceptor.Options{Grain: interceptor.GrainToolCall}},
		"warnings":          {Guard: interceptor.Options{Warnings: 1}},
		"recorded-warnings": {AsRecorded: true, Guard: interceptor.Options{Warnings: 2}},
		"node-name": {Guard: interceptor.Options{NodeName: func(c interceptor.Call) string {
			return fmt.Sprint(c.Type, "/", len(c.Args))
		}}},
	}
}

// chains reads the fixture histories and groups them into executions: a
// run, or the runs of a continue-as-new chain in order.
func chains(t testing.TB) [][]*historypb.History {
	t.Helper()
	cs, err := readChains()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// readChains reads the fixtures once for every test.
var readChains = sync.OnceValues(func() ([][]*historypb.History, error) {
	files, err := HistoryFiles(fixtureDir)
	if err != nil {
		return nil, err
	}
	var out [][]*historypb.History
	at := map[string]int{} // the chain a run continued into belongs to, by that run's id
	for _, f := range OrderChains(files) {
		h, err := ReadHistoryFile(f)
		if err != nil {
			return nil, err
		}
		evs := h.GetEvents()
		run := evs[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()
		c, ok := at[run]
		if !ok {
			c = len(out)
			out = append(out, nil)
		}
		out[c] = append(out[c], h)
		if can := evs[len(evs)-1].GetWorkflowExecutionContinuedAsNewEventAttributes(); can != nil {
			at[can.GetNewExecutionRunId()] = c
		}
	}
	return out, nil
})

// batch is the analysis of a chain's runs from whole histories.
func batch(t testing.TB, opts Options, chain []*historypb.History) []Execution {
	a, err := NewAnalyzer(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []Execution
	for _, h := range chain {
		out = append(out, a.History(h, ""))
	}
	return out
}

// feed reads a chain's events through one Reader in chunks of the sizes
// size gives, checking after each chunk that what is judged so far is a
// prefix of want and (without AsRecorded) that the Reader holds no event
// of a workflow task before the last one started.
func feed(t *testing.T, opts Options, chain []*historypb.History, want []Execution, size func() int) []Execution {
	t.Helper()
	r, err := NewReader(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []Execution
	for n, h := range chain {
		if n > 0 {
			got = append(got, r.Execution()) // the run before, closed
		}
		evs := h.GetEvents()
		// lastTask is the last workflow task scheduled or started fed
		// after the first completed one (whose markers the run's start
		// reads).
		lastTask, completed := -1, false
		// Checked some 50 times a run: a snapshot copies what is judged.
		adds, stride := 0, max(1, len(evs)/50)
		for i := 0; i < len(evs); {
			k := min(len(evs), i+size())
			for j := i; j < k; j++ {
				switch evs[j].GetEventType() {
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
					completed = true
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
					if completed {
						lastTask = j
					}
				}
			}
			err := r.Add(evs[i:k]...)
			i = k
			if err != nil {
				break
			}
			if got := r.Cursor(); got != evs[k-1].GetEventId() {
				t.Fatalf("cursor %d after adding up to event %d", got, evs[k-1].GetEventId())
			}
			if r.final != nil {
				continue
			}
			if !opts.AsRecorded && lastTask > 0 && r.run.off < lastTask {
				t.Fatalf("run %d: fed %d events, the last workflow task at %d: holds events from %d", n, k, lastTask, r.run.off)
			}
			if adds++; adds%stride == 0 {
				prefix(t, r.Execution(), want[n])
			}
		}
	}
	return append(got, r.Close())
}

// prefix checks that so far is what is judged of want up to its last
// event.
func prefix(t *testing.T, so, want Execution) {
	t.Helper()
	if want.Err != nil {
		return
	}
	if len(so.Calls) > len(want.Calls) || !slices.Equal(so.Calls, want.Calls[:len(so.Calls)]) {
		t.Fatalf("up to event %d: calls %v are not a prefix of %v", so.LastEvent, so.Calls, want.Calls)
	}
	if len(so.Verdicts) > len(want.Verdicts) {
		t.Fatalf("up to event %d: %d verdicts, %d in the end", so.LastEvent, len(so.Verdicts), len(want.Verdicts))
	}
	for i, v := range so.Verdicts {
		w := want.Verdicts[i]
		// A recorded decision is noted on its halt when it comes.
		v.Decision, w.Decision = nil, nil
		if !reflect.DeepEqual(v, w) {
			t.Fatalf("up to event %d: verdict %d is %+v, in the end %+v", so.LastEvent, i, v, w)
		}
	}
}

func sameExecutions(t *testing.T, got, want []Execution) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d runs read, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if (g.Err == nil) != (w.Err == nil) || g.Err != nil && g.Err.Error() != w.Err.Error() {
			t.Fatalf("run %d: error %v, want %v", i, g.Err, w.Err)
		}
		g.Err, w.Err = nil, nil
		// Pauses compare as the pauses they list, not as the tables that
		// hold them.
		if gp, wp := g.Pauses.List(), w.Pauses.List(); !reflect.DeepEqual(gp, wp) {
			t.Fatalf("run %d: the Reader's pauses differ from the whole history's:\n got %+v\nwant %+v", i, gp, wp)
		}
		g.Pauses, w.Pauses = Pauses{}, Pauses{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("run %d: the Reader's analysis differs from the whole history's:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestReaderAgreesWithBatch: every fixture history (and chain), fed to a
// Reader event by event and in random chunks, gets the analysis of the
// whole history: the same verdicts, calls, halts, warnings, recorded
// halts and answers, problems and errors, under each options. At every
// step what is judged so far is a prefix of the end's, and without
// AsRecorded the Reader holds only the events of the last workflow task.
func TestReaderAgreesWithBatch(t *testing.T) {
	cs := chains(t)
	for name, opts := range readerOptions() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 31))
			for _, chain := range cs {
				if testing.Short() && len(chain[0].GetEvents()) > 2000 {
					continue
				}
				want := batch(t, opts, chain)
				one := func() int { return 1 }
				sameExecutions(t, feed(t, opts, chain, want, one), want)
				chunks := func() int { return 1 + rng.IntN(40) }
				sameExecutions(t, feed(t, opts, chain, want, chunks), want)
			}
		})
	}
}

// damage drops, repeats or swaps events of h (kind 0, 1, 2) at random.
func damage(rng *rand.Rand, h *historypb.History, kind int) *historypb.History {
	d := proto.Clone(h).(*historypb.History)
	ev := d.Events
	i, j := rng.IntN(len(ev)), rng.IntN(len(ev))
	switch kind % 3 {
	case 0:
		ev = append(ev[:i:i], ev[i+1:]...)
	case 1:
		ev = append(ev[:i:i], append([]*historypb.HistoryEvent{ev[j]}, ev[i:]...)...)
	case 2:
		ev[i], ev[j] = ev[j], ev[i]
	}
	d.Events = ev
	return d
}

// TestAnalyzeDamagedHistories: histories with events dropped, repeated or
// swapped are analysed to the end or get an error naming the file and
// the event: never a panic. A Reader fed them event by event reaches the
// same analysis, but where a close event moved before others: the Reader
// ends the run there (the analysis of a whole history reads on), and
// those are only read without a panic.
func TestAnalyzeDamagedHistories(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 25))
	for _, chain := range chains(t) {
		h := chain[0]
		if len(h.GetEvents()) > 2000 {
			continue // the 1,000-call workloads: the rest keep the test fast
		}
		for k := 0; k < 6; k++ {
			d := damage(rng, h, k)
			early := false
			for _, e := range d.Events[:len(d.Events)-1] {
				early = early || closes(e)
			}
			for _, opts := range []Options{{}, {AsRecorded: true}} {
				a, err := NewAnalyzer(opts)
				if err != nil {
					t.Fatal(err)
				}
				want := a.History(d, "damaged.json")
				if err := want.Err; err != nil {
					for _, part := range []string{"damaged.json", "event "} {
						if !strings.Contains(err.Error(), part) {
							t.Errorf("error %q does not name %q", err, part)
						}
					}
					if strings.Contains(err.Error(), "cannot be judged") {
						t.Errorf("a damaged history must be read without a panic: %v", err)
					}
					want.Err = errors.New(strings.TrimPrefix(err.Error(), "damaged.json: "))
				}
				want.File = ""
				r, err := NewReader(opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range d.Events {
					if r.Add(e) != nil {
						break
					}
				}
				got := r.Close()
				if !early {
					sameExecutions(t, []Execution{got}, []Execution{want})
				}
			}
		}
	}
}

// TestReaderBadInput: a Reader given no history, a history that does not
// start with its run, a nil event, or an event after its run closed gets
// an error that says so, never a panic; a closed Reader takes no more.
func TestReaderBadInput(t *testing.T) {
	started := newBuilder(t).evs[0]
	completed := &historypb.HistoryEvent{EventId: 2, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED}
	signal := &historypb.HistoryEvent{EventId: 3, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED}
	tests := []struct {
		name   string
		events []*historypb.HistoryEvent
		want   string
	}{
		{"nothing", nil, "no history events"},
		{"no start", []*historypb.HistoryEvent{signal}, "does not start with WorkflowExecutionStarted"},
		{"nil event", []*historypb.HistoryEvent{nil}, "does not start with WorkflowExecutionStarted"},
		{"after the close", []*historypb.HistoryEvent{started, completed, signal}, "event 3 (WorkflowExecutionSignaled) after the run closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(Options{})
			if err != nil {
				t.Fatal(err)
			}
			addErr := r.Add(tt.events...)
			ex := r.Close()
			err = cmp.Or(addErr, ex.Err)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if again := r.Add(started); again == nil {
				t.Fatalf("a closed Reader took more events")
			}
		})
	}
	if _, err := NewReader(Options{Guard: interceptor.Options{MaxCycleIterations: -1}}); err == nil {
		t.Fatal("invalid guard options: no error")
	}
}
