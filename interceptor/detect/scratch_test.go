package detect

import (
	"fmt"
	"os"
	"testing"
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
