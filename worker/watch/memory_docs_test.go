package watch

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// docs/watch.md's Capacity section prices the constant a follower holds
// as the code has it: the times of the last recentCalls calls, each an
// int64.
func TestCapacityDocsStateTheConstant(t *testing.T) {
	b, err := os.ReadFile("../../docs/watch.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Capacity\n")
	if !ok {
		t.Fatal("docs/watch.md has no Capacity section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	sec = strings.Join(strings.Fields(sec), " ")
	var r reader
	for _, want := range []string{
		fmt.Sprintf("the times of the last %d calls, %d KB", recentCalls, unsafe.Sizeof(r.recent)/1024),
		"`history.Options.Follow`",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("docs/watch.md, Capacity: %q not found", want)
		}
	}
}
