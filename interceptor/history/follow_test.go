package history

import (
	"reflect"
	"testing"

	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// followed feeds runs, event by event, to a Reader under Options.Follow,
// acting as a watcher does on each Execution (the verdicts it has not
// seen are the last VerdictsSeen-n of Verdicts), and checks that it
// hands over every verdict of want in full, once and in order, and ends
// with the same calls counted, halts (call, seq, detector, node and
// decision), pauses, savings and problems.
func followed(t testing.TB, opts Options, runs [][]*historypb.HistoryEvent, want []Execution) {
	t.Helper()
	if opts.AsRecorded {
		return
	}
	opts.Follow = true
	r, err := NewReader(opts)
	if err != nil {
		t.Fatal(err)
	}
	for n, evs := range runs {
		var acted []interceptor.Verdict
		var ex Execution
		for _, e := range evs {
			if err := r.Add(e); err != nil {
				break
			}
			ex = r.Execution()
			fresh := ex.VerdictsSeen - len(acted)
			if fresh < 0 || fresh > len(ex.Verdicts) {
				t.Fatalf("run %d, event %d: %d verdicts seen, %d acted on, %d held", n, e.GetEventId(), ex.VerdictsSeen, len(acted), len(ex.Verdicts))
			}
			acted = append(acted, ex.Verdicts[len(ex.Verdicts)-fresh:]...)
		}
		if n == len(runs)-1 {
			ex = r.Close()
			acted = append(acted, ex.Verdicts[len(ex.Verdicts)-(ex.VerdictsSeen-len(acted)):]...)
		}
		w := want[n]
		if (ex.Err == nil) != (w.Err == nil) {
			t.Fatalf("run %d: error %v, want %v", n, ex.Err, w.Err)
		}
		if w.Err != nil {
			continue
		}
		if len(ex.Calls) != 0 || ex.Called != len(w.Calls) {
			t.Fatalf("run %d: %d calls held, %d counted: want none held, %d counted", n, len(ex.Calls), ex.Called, len(w.Calls))
		}
		if len(acted) != len(w.Verdicts) || ex.WarningsSeen != len(w.Warnings()) {
			t.Fatalf("run %d: %d verdicts (%d warnings) handed over, want %d (%d)", n, len(acted), ex.WarningsSeen, len(w.Verdicts), len(w.Warnings()))
		}
		for i, v := range acted {
			wv := w.Verdicts[i]
			v.Decision, wv.Decision = nil, nil // noted on a halt when it comes
			if !reflect.DeepEqual(v, wv) {
				t.Fatalf("run %d: verdict %d is %+v, want %+v", n, i, v, wv)
			}
		}
		type halt struct {
			call, seq int
			detector  string
			node      string
			decision  *protocol.Decision
		}
		var got, wanted []halt
		for i := range ex.Halted.Len() {
			v := ex.Halted.At(i)
			got = append(got, halt{v.Call, v.Halt.Seq, string(v.Halt.Detector), v.Halt.Node, v.Decision})
		}
		for _, v := range w.Verdicts {
			if v.Halt != nil {
				wanted = append(wanted, halt{v.Call, v.Halt.Seq, string(v.Halt.Detector), v.Halt.Node, v.Decision})
			}
		}
		if !reflect.DeepEqual(got, wanted) {
			t.Fatalf("run %d: halts %+v, want %+v", n, got, wanted)
		}
		// Each halt kept compact is the batch's, stripped of its evidence,
		// message and warnings (what an unpause resumes).
		k := 0
		for _, v := range w.Verdicts {
			if v.Halt == nil {
				continue
			}
			ev := *v.Halt
			ev.Evidence, ev.Warnings, ev.SuggestedActions, ev.Message = protocol.Evidence{}, nil, nil, ""
			ev.WorkflowTime = ev.WorkflowTime.UTC()
			kv := ex.Halted.At(k)
			if !reflect.DeepEqual(*kv.Halt, ev) || kv.Period != v.Period || kv.OnHalt != v.OnHalt {
				t.Fatalf("run %d: halt %d kept as %+v, want %+v", n, k, kv, ev)
			}
			k++
		}
		if !reflect.DeepEqual(ex.Pauses.List(), w.Pauses.List()) || ex.Saved != w.Saved || ex.Closed != w.Closed ||
			ex.Pausable != w.Pausable || !reflect.DeepEqual(ex.Problems, w.Problems) {
			t.Fatalf("run %d: pauses %+v, saved %d, closed %v, problems %v: want %+v, %d, %v, %v",
				n, ex.Pauses.List(), ex.Saved, ex.Closed, ex.Problems, w.Pauses.List(), w.Saved, w.Closed, w.Problems)
		}
	}
}

// TestFollowAgreesWithBatch: every fixture history (and chain) followed
// under Options.Follow hands over the verdicts of the whole history's
// analysis, each once and in full, and ends with the same halts, pauses
// and counts, under each options a watcher may judge with. The cases of
// TestWorkflowPauseAnswersHalts check the same on runs with Workflow
// Pauses (builder.read).
func TestFollowAgreesWithBatch(t *testing.T) {
	cs := chains(t)
	for name, opts := range readerOptions() {
		if opts.AsRecorded {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, chain := range cs {
				if testing.Short() && len(chain[0].GetEvents()) > 2000 {
					continue
				}
				var runs [][]*historypb.HistoryEvent
				for _, h := range chain {
					runs = append(runs, h.GetEvents())
				}
				followed(t, opts, runs, batch(t, opts, chain))
			}
		})
	}
}
