package history_test

import (
	"fmt"
	"path/filepath"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
)

// Analyse one history of a past run: what the guard would have done to
// it under the options a team considers.
func ExampleAnalyzeFile() {
	path := filepath.Join("..", "..", "testsuite", "testdata", "histories", "unguarded-identical-patch.json")
	ex, err := history.AnalyzeFile(path, history.Options{
		Guard: interceptor.Options{Workflows: []string{"CoderVerifierLoop"}},
	})
	if err != nil {
		panic(err)
	}
	for _, h := range ex.Halts()[:2] {
		fmt.Printf("%s/%s at %s (loop %d/%d)\n", h.HaltReason, h.Detector, h.Node, h.Iteration, h.MaxIterations)
	}
	fmt.Printf("%d calls, %d saved\n", len(ex.Calls), ex.Saved)
	// Output:
	// stalled/identical_output at Code (loop 3/8)
	// stalled/identical_output at Verify (loop 5/8)
	// 40 calls, 35 saved
}

// Follow a history as it grows, a page of events at a time (as a long
// poll with WaitNewEvent brings them): each event is judged once the rest
// of its workflow task is in, and the verdicts are those of the whole
// history.
func ExampleReader() {
	h, err := history.ReadHistoryFile(filepath.Join("..", "..", "testsuite", "testdata", "histories", "unguarded-identical-patch.json"))
	if err != nil {
		panic(err)
	}
	r, err := history.NewReader(history.Options{Guard: interceptor.Options{Workflows: []string{"CoderVerifierLoop"}}})
	if err != nil {
		panic(err)
	}
	events := h.GetEvents()
	for len(events) > 0 {
		page := events[:min(100, len(events))]
		events = events[len(page):]
		if err := r.Add(page...); err != nil {
			panic(err)
		}
		ex := r.Execution()
		fmt.Printf("judged up to event %d: %d calls, %d halts", ex.LastEvent, len(ex.Calls), len(ex.Halts()))
		if p := ex.Pending(); p != nil {
			fmt.Printf("; a watcher pauses for halt %d: %q", p.Seq, history.PauseReason(*p))
		}
		fmt.Println()
	}
	ex := r.Close()
	fmt.Println("closed:", ex.Closed, "halts:", len(ex.Halts()))
	// Output:
	// judged up to event 99: 16 calls, 3 halts; a watcher pauses for halt 3: "loopguard: identical_output on Code, loop 8/8; evidence: watcher log and /status, or worker analyze"
	// judged up to event 200: 33 calls, 8 halts; a watcher pauses for halt 8: "loopguard: cycle_iterations on Code, loop 8/8; evidence: watcher log and /status, or worker analyze"
	// judged up to event 245: 40 calls, 9 halts
	// closed: true halts: 9
}
