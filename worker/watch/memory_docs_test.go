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
	sec := docSection(t, "Capacity")
	var r reader
	for _, want := range []string{
		fmt.Sprintf("the times of the last %d calls, %d KB", recentCalls, unsafe.Sizeof(r.recent)/1024),
		"`history.Options.Follow`",
		// What the watcher keeps a halt besides the reader's compact one.
		fmt.Sprintf("the time of its tripping call's event (%d B) and what it did (%d B)", unsafe.Sizeof(*r.trips.At(0)), unsafe.Sizeof(actedHalt{})),
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("docs/watch.md, Capacity: %q not found", want)
		}
	}
}

// docSection is the section of docs/watch.md under heading, its spaces
// and line breaks made single spaces.
func docSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/watch.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/watch.md has no %s section", heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return strings.Join(strings.Fields(sec), " ")
}

// docs/watch.md's account of the pause ahead gives the follower's wait
// for a buffered Paused event and the undo's reason as the code has them.
func TestPauseAheadDocsStateTheCode(t *testing.T) {
	sec := docSection(t, "The lag")
	for _, want := range []string{
		fmt.Sprintf("every %d ms until it is there (at most %d minutes, beyond the longest workflow task timeout the server allows, 120 s: `aheadPoll`, `aheadWait`)", aheadPoll.Milliseconds(), int(aheadWait.Minutes())),
		"(reason `" + undoneReason[:len("loopguard-watch: the halt this pause foresaw did not come;")] + " pause ahead undone`)",
		"`" + MetricPauseAheadUndone + "`",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("docs/watch.md, The lag: %q not found", want)
		}
	}
}
