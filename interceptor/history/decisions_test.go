package history_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loopguard/loopguard/interceptor/history"
)

// TestAsRecordedDecisionsOfDifferentialShapes: histories of the
// differential test (worker/e2e/differential) where the analysis as
// recorded gave a halt's decision to the halt handler or judged it at
// another call, while the live guard took a human's: each halt is judged
// at the call the guard halted, with the human's decision.
func TestAsRecordedDecisionsOfDifferentialShapes(t *testing.T) {
	tests := []struct {
		name  string
		files []string // one chain, in order
		want  []string
	}{
		{
			// A resume by update ends halt 2; its held call raises halt 3
			// in the same task, and the guard's running memo comes first.
			name:  "seed 7: a second halt at the held call, resumed by update",
			files: []string{"seed-7-0.json", "seed-7-1.json"},
			want:  []string{"24 #1 resume by differential-driver", "30 #2 resume by differential-driver", "30 #3 resume by differential-driver"},
		},
		{
			// The resume signal is taken in the next task, which raises
			// halt 2 before the memo of the resume.
			name:  "seed 104: a second halt at the held call, resumed by signal",
			files: []string{"seed-104-0.json"},
			want: []string{"28 #1 resume by differential-driver guidance \"try another way (36)\"",
				"28 #2 resume by differential-driver guidance \"try another way (75)\""},
		},
		{
			// The escalated child call is refused, never scheduled; the
			// next call is another node's.
			name:  "seed 2: an escalated node budget",
			files: []string{"seed-2-0.json", "seed-2-1.json", "seed-2-2.json"},
			want:  []string{"26 #1 resume by differential-driver", "28 #2 escalate by differential-driver"},
		},
		{
			// The workflow's own signals come while halt 1 holds call 7:
			// the guard tells them after call 7, which asks again in the
			// same admit rounds; told before it, they cut the repetition
			// another way, and call 13 met repeated_error before the
			// budget the guard halted on (then a third halt the guard
			// never raised, at the same call).
			name:  "seed 30091: signals during a halt told after the held call",
			files: []string{"seed-30091-0.json"},
			want: []string{"7 #1 resume by differential-driver", "13 #2 resume by differential-driver", "20 #3 resume by differential-driver",
				"30 #4 resume by differential-driver", "35 #5 resume by differential-driver"},
		},
		{
			// A parallel branch's call fails while halt 2 holds the
			// other: the guard, waiting in its own Await, reads it only
			// after the held call asks again; read at the idle task
			// during the halt, it made the held call meet repeated_error
			// again (a halt the guard never raised, read as a halt
			// handler's).
			name:  "seed 30385: a result that comes during a halt read after the held call",
			files: []string{"seed-30385-0.json", "seed-30385-1.json"},
			want:  []string{"14 #1 resume by differential-driver", "18 #2 resume by differential-driver", "22 #3 resume by differential-driver"},
		},
		{
			// A parallel branch's child fails while halt 7 holds a call,
			// in the task that brings the signed resume: the guard's
			// answer coroutine takes the resume and waits again, reading
			// the failure there, before the held call asks again, which
			// then meets repeated_error (halt 8). Read after the held
			// call, there was no halt 8.
			name:  "seed 32655: a signed resume's task reads the results that are in",
			files: []string{"seed-32655-0.json"},
			want: []string{"8 #1 resume by differential-driver", "10 #2 resume by differential-driver guidance \"try another way (95)\"",
				"21 #3 resume by differential-driver guidance \"try another way (95)\"",
				"29 #4 resume by differential-driver guidance \"try another way (95)\"",
				"33 #5 resume by differential-driver guidance \"try another way (95)\"",
				"35 #6 resume by differential-driver guidance \"try another way (95)\"",
				"41 #7 resume by differential-driver guidance \"try another way (95)\"",
				"41 #8 resume by differential-driver guidance \"try another way (95)\""},
		},
		{
			// The reset run replays the operator's resume by update of
			// halt 4 from the base run: an admitted event holds the
			// request, and the accepted event only names it. Read from
			// the accepted event alone, the update was nameless and the
			// halt's end read as a halt handler's.
			name:  "seed 10104: a reset run's reapplied resume by update",
			files: []string{"seed-10104-0.json", "seed-10104-1.json", "seed-10104-3.json"},
			want: []string{"18 #1 resume by differential-driver guidance \"try another way (13)\"",
				"34 #2 resume by differential-driver guidance \"try another way (14)\"",
				"43 #3 resume by differential-driver guidance \"try another way (14)\"",
				"50 #4 resume by differential-driver guidance \"try another way (14)\""},
		},
		{
			// A reset fails the workflow task that took the resume of
			// halt 2 and re-applies the signals after it, among them the
			// base run's resume with guidance of halt 3. The SDK applies
			// a failed task's events with the next task's, so both
			// resumes came while halt 2 held its call: the second was
			// refused, and the operator answered halt 3 anew. Read with
			// the failed task as a task of its own, the held call asked
			// again before the second resume, which then ended halt 3.
			name:  "seed 60020: a task a reset failed runs nothing",
			files: []string{"seed-60020-0.json", "seed-60020-2.json"},
			want: []string{"7 #1 resume by differential-driver", "15 #2 resume by differential-driver",
				"15 #3 resume by differential-driver", "18 #4 resume by differential-driver",
				"24 #5 resume by differential-driver", "26 #6 resume by differential-driver"},
		},
		{
			// Halt 2 (a detector's, on Verify) holds a call of Lookup;
			// resumed, the call asks again and meets halt 3, the loop's
			// budget, which is escalated: the call is refused and in no
			// event. Its node was taken from halt 2 (Verify), so the
			// analysis met Verify's budget instead; a budget's halt names
			// the call it trips on.
			name:  "seed 102956: a held call in no event, named by the budget it met",
			files: []string{"seed-102956-0.json", "seed-102956-1.json"},
			want: []string{"7 #1 resume by differential-driver guidance \"try another way (68)\"", "24 #2 resume by differential-driver",
				"24 #3 escalate by differential-driver", "25 #4 escalate by differential-driver",
				"27 #5 escalate by differential-driver", "43 #6 escalate by differential-driver"},
		},
		{
			// Halt 3 (the loop's budget, on a call of Plan) is escalated:
			// the call is refused, and the next call, of Lookup, meets
			// halt 4. That halt is the next call's, not the held call
			// asking again: the held call of an escalated halt is not
			// named by the halt after it (it was, by the rule of seed
			// 102956, and the analysis met Lookup's budget at halt 3).
			name:  "seed 104224: the halt after an escalation is the next call's",
			files: []string{"seed-104224-0.json", "seed-104224-1.json", "seed-104224-2.json"},
			want: []string{"31 #1 escalate by differential-driver", "35 #2 resume by differential-driver guidance \"try another way (92)\"",
				"50 #3 escalate by differential-driver", "50 #4 escalate by differential-driver"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := history.NewAnalyzer(history.Options{AsRecorded: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range tt.files {
				ex := a.File(filepath.Join("testdata", "differential", f))
				if ex.Err != nil || len(ex.Problems) > 0 {
					t.Fatalf("%s: %v %v", f, ex.Err, ex.Problems)
				}
				for _, v := range ex.Verdicts {
					if v.Halt == nil {
						continue
					}
					line := fmt.Sprintf("%d #%d", v.Call, v.Halt.Seq)
					if d := v.Decision; d != nil {
						line += fmt.Sprintf(" %s by %s", d.Action, d.By)
						if d.Guidance != "" {
							line += fmt.Sprintf(" guidance %q", d.Guidance)
						}
					}
					got = append(got, line)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("halts:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
