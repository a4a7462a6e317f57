package differential_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/loopguard/loopguard/worker/e2e/differential"
)

// TestGenerate: a shape is a function of its seed and features, uses
// only the features asked for, and every feature is drawn in some seed.
func TestGenerate(t *testing.T) {
	all := differential.All
	a, _ := json.Marshal(differential.Generate(7, all))
	b, _ := json.Marshal(differential.Generate(7, all))
	if string(a) != string(b) {
		t.Fatal("seed 7 gave two shapes")
	}
	if c, _ := json.Marshal(differential.Generate(8, all)); string(c) == string(a) {
		t.Fatal("seeds 7 and 8 gave the same shape")
	}
	// Without features: activity loops only, unsigned answers by signal.
	for seed := range int64(200) {
		p := differential.Generate(seed, nil)
		if p.Keys || p.Warnings > 0 || p.ResetAt > 0 || p.HaltAfter > 0 || len(p.Runs) != 1 || p.Signals+p.Updates > 0 {
			t.Fatalf("seed %d without features: %+v", seed, p)
		}
		for _, s := range p.Runs[0] {
			if s.Kind != differential.KindActivity || s.Fail {
				t.Fatalf("seed %d without features: step %+v", seed, s)
			}
		}
		for _, ans := range p.Answers {
			if ans.Escalate || ans.Update || ans.Signed || ans.Delay > 0 {
				t.Fatalf("seed %d without features: answer %+v", seed, ans)
			}
		}
	}
	// Every timer API is drawn, and durations of each sign.
	apis, signs := map[string]bool{}, map[int]bool{}
	for seed := range int64(200) {
		for _, r := range differential.Generate(seed, all).Runs {
			for _, s := range r {
				if s.Kind == differential.KindTimer {
					apis[s.API] = true
					signs[min(max(int(s.Duration), -1), 1)] = true
				}
			}
		}
	}
	if len(apis) != 5 || len(signs) != 3 {
		t.Fatalf("timer APIs drawn %v, duration signs %v", apis, signs)
	}
}

// TestParseFeatures: passing leaves out the Known features; a minus takes
// one off.
func TestParseFeatures(t *testing.T) {
	got, err := differential.ParseFeatures("all,-reset")
	if err != nil || slices.Contains(got, differential.Reset) || len(got) != len(differential.All)-1 {
		t.Fatalf("all,-reset: %v %v", got, err)
	}
	got, _ = differential.ParseFeatures("passing")
	for f := range differential.Known {
		if slices.Contains(got, f) {
			t.Errorf("passing holds %s, known to disagree", f)
		}
	}
	if _, err := differential.ParseFeatures("nope"); err == nil {
		t.Error("an unknown feature is accepted")
	}
}
