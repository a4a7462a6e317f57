package differential_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// TestLiveWarnings: histories of the differential test where the live
// reading put a warning at the first call whose notice carried it, or
// missed it, while the analysis put it at the call whose admission issued
// it. The guard warned there (its memo lists the warning before that
// call's command, or the halt raised at the same admission lists it): the
// live reading and the analysis give the same warnings.
func TestLiveWarnings(t *testing.T) {
	tests := []struct {
		name  string
		files []string // one chain, in order
		want  []string
	}{
		{
			// Plan's second warning is issued at a call of Code, and the
			// next call of Plan comes after halt 2.
			name:  "seed 118: a warning issued at a call of another node",
			files: []string{"seed-118-0.json"},
			want: []string{
				"call 11: warning 1/2 repeated_error/repeated_error@Verify",
				"call 17: warning 1/2 repeated_error/repeated_error@Plan",
				"call 20: warning 2/2 repeated_error/repeated_error@Plan",
			},
		},
		{
			// The admission that warns also halts on the node's budget:
			// the held call runs after the resume, which answered the
			// warning, without it.
			name:  "seed 100: a warning at the call a halt held",
			files: []string{"seed-100-0.json", "seed-100-1.json", "seed-100-2.json"},
			want:  []string{"call 24: warning 1/1 oscillating/output_oscillation@SubAgent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chain []*historypb.History
			for _, f := range tt.files {
				h, err := history.ReadHistoryFile(filepath.Join("testdata", f))
				if err != nil {
					t.Fatal(err)
				}
				chain = append(chain, h)
			}
			live, err := liveLines(newDriver(nil, differential.Plan{}, "fixture"), chain, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := warningLines(live); !slices.Equal(got, tt.want) {
				t.Errorf("live warnings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			a, err := history.NewAnalyzer(history.Options{AsRecorded: true})
			if err != nil {
				t.Fatal(err)
			}
			var judged []string
			for i, h := range chain {
				ex := a.History(h, tt.files[i])
				if ex.Err != nil || len(ex.Problems) > 0 {
					t.Fatalf("%s: %v %v", tt.files[i], ex.Err, ex.Problems)
				}
				for _, v := range ex.Verdicts {
					judged = append(judged, verdictLine(v.Call, v.Warning, v.Halt, v.Decision))
				}
			}
			if got := warningLines(judged); !slices.Equal(got, tt.want) {
				t.Errorf("analysis warnings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// warningLines are the warnings of lines.
func warningLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, ": warning ") {
			out = append(out, l)
		}
	}
	return out
}

// TestUnechoedHaltNotJudged: a live halt whose loop.halted the guard
// could not send (its local activity failed, seed 203985 in a long run)
// has no echo to read the halt from: the live reading says so with an
// unechoedError, which the test counts as not judged, not as a
// disagreement; the analysis still reads the halt from the guard's
// marker and memo.
func TestUnechoedHaltNotJudged(t *testing.T) {
	h, err := history.ReadHistoryFile(filepath.Join("testdata", "seed-203985-0.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = liveLines(newDriver(nil, differential.Plan{}, "fixture"), []*historypb.History{h}, 0)
	var ue *unechoedError
	if !errors.As(err, &ue) || ue.event != 15 {
		t.Fatalf("live reading: %v, want the unechoed halt at event 15", err)
	}
	a, err := history.NewAnalyzer(history.Options{AsRecorded: true})
	if err != nil {
		t.Fatal(err)
	}
	ex := a.History(h, "seed-203985-0.json")
	if ex.Err != nil || len(ex.Halts()) != 1 || ex.Halts()[0].Detector != "user_stop" {
		t.Errorf("analysis: error %v, halts %+v; want the user's stop", ex.Err, ex.Halts())
	}
}
