package testsuite

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDocsStateRunsStallLimit: docs/testing.md and Run's doc give the
// deadlock limit Run sets.
func TestDocsStateRunsStallLimit(t *testing.T) {
	want := fmt.Sprintf("%d s without yielding", int(runStallLimit/time.Second))
	for _, path := range []string{"../docs/testing.md", "run.go"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(data), "//", "")), " ")
		if !strings.Contains(text, want) && !strings.Contains(text, fmt.Sprintf("runStallLimit (%d s) without yielding", int(runStallLimit/time.Second))) {
			t.Errorf("%s does not say %q", path, want)
		}
	}
}
