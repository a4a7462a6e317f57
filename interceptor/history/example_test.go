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
