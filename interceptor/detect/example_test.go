package detect_test

import (
	"fmt"
	"time"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// A coder re-proposes the same patch and the verifier keeps reporting the
// same failure. The guard halts the loop before the call that would continue
// it; a human resumes it.
func ExampleState() {
	p := detect.DefaultPolicy()
	s := detect.NewState(p)
	now := time.Date(2025, 10, 18, 9, 0, 0, 0, time.UTC)

	call := func(node, result string) *detect.Trip {
		ref, trip := s.Begin(node, now)
		if trip != nil {
			return trip
		}
		now = now.Add(time.Minute)
		s.End(ref, detect.Extract(p, node, []byte(result)), now)
		return nil
	}

	patches := []string{`"+ if user == nil { return }"`, `"+ if user.Profile == nil { return }"`}
	for turn := 0; ; turn++ {
		patch := patches[min(turn, 1)] // from the second turn on, the same patch
		if trip := call("coder", patch); trip != nil {
			fmt.Println("halted:", trip.Reason, trip.Detector)
			fmt.Println(trip.Message)
			fmt.Println("evidence:", len(trip.Evidence.OutputHashes), "output hashes,", trip.Evidence.Transitions)
			s.Resume(trip, detect.Extension{})
			break
		}
		if trip := call("verifier", `{"passed":false,"failing":["TestLogin"]}`); trip != nil {
			fmt.Println("halted:", trip.Reason, trip.Detector)
			break
		}
	}
	fmt.Println("pending after resume:", s.Pending() != nil)
	c := s.View().Cycles[0]
	fmt.Printf("cycle %s: Loop %d/%d\n", c.Anchor, c.Iteration, c.MaxIterations)
	// Output:
	// halted: stalled identical_output
	// verifier→coder repeated with the same results 3 times in a row
	// evidence: 3 output hashes, [coder->verifier verifier->coder coder->verifier verifier->coder coder->verifier]
	// pending after resume: false
	// cycle coder: Loop 3/8
}
