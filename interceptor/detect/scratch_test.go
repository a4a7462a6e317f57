package detect

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

func TestScratchReal(t *testing.T) {
	gen := DetectionV2
	if os.Getenv("GEN") != "2" {
		gen = Generation(3)
	}
	traces := loadRealCorpus(t)
	for i := range traces {
		tr := &traces[i]
		if h := os.Getenv("HALF"); h != "" && tr.Half != h {
			continue
		}
		calls, onset := realCalls(tr)
		p := DefaultPolicy()
		p.Detection = gen
		raiseBudgets(&p)
		at, trip := replay(p, calls)
		oh := openHandsFrom(calls)
		switch {
		case !tr.Loop && trip != nil:
			fmt.Printf("FALSE %s %s at %d/%d: %s | %s\n", tr.Half, tr.Name, at, len(calls), trip.Detector, trip.Message)
		case tr.Loop && (trip == nil || at < onset):
			fmt.Printf("MISS  %s %s at %d onset %d/%d oh=%d disputed=%v: %s\n", tr.Half, tr.Name, at, onset, len(calls), oh, tr.Disputed, tr.Why)
		}
	}
}

func TestScratchTrace(t *testing.T) {
	name := os.Getenv("TRACE")
	if name == "" {
		t.Skip()
	}
	for _, tr := range loadCorpus(t) {
		if tr.Name != name {
			continue
		}
		p, _ := tr.policy(DetectionV3)
		raiseBudgets(&p)
		s := NewState(p)
		now := t0
		for _, c := range tr.Calls {
			ref, trip := s.Begin(c.Node, now)
			if trip != nil {
				fmt.Println("TRIP", trip.Message)
				return
			}
			obs := observe(p, c)
			s.End(ref, obs, now.Add(time.Second))
			now = now.Add(time.Second)
			n := &s.nodes[ref.Node]
			st := s.steps.at(0)
			fmt.Printf("%-8s key=%016x out=%016x act=%016x fields=%v vol=%d\n", c.Node, st.key, obs.Output, obs.Action, obs.Fields, n.learn.nvol)
		}
	}
}

func TestScratchStale(t *testing.T) {
	hist := map[string][]int{}
	for _, tr := range loadRealCorpus(t) {
		calls, _ := realCalls(&tr)
		p := DefaultPolicy()
		p.Detection = DetectionV3
		raiseBudgets(&p)
		s := NewState(p)
		now := t0
		best, run := 0, 0
		for _, c := range calls {
			if c.Input {
				s.Input(now)
				run = 0
				continue
			}
			ref, _ := s.Begin(c.Node, now)
			s.pending = nil
			s.End(ref, observe(p, c), now.Add(time.Second))
			now = now.Add(time.Second)
			st := s.steps.at(0)
			seen := false
			for j := 1; j < s.steps.n; j++ {
				if s.steps.at(j).node < 0 {
					break
				}
				if s.steps.at(j).same(st, false, false) {
					seen = true
					break
				}
			}
			if seen {
				run++
			} else {
				run = 0
			}
			best = max(best, run)
		}
		k := fmt.Sprintf("loop=%v", tr.Loop)
		hist[k] = append(hist[k], best)
	}
	for k, v := range hist {
		slices.Sort(v)
		fmt.Println(k, v)
	}
}
