package history

import (
	"runtime"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
)

// TestFollowHoldsNoPayload: a followed execution waiting for its next
// call holds none of the results it has read, however large. An agent
// framework's model result can carry the whole conversation (the AI SDK's
// invokeModel returns the request body it sent), so a result held until
// the next call makes a watcher's memory per execution grow with the
// history. Each call here returns 2 MB; the Reader, fed copies of its own
// as a watcher's pages are, must hold under 256 KB once they are gone.
// (Before the Judge read a result when it was set, it held the last one
// until the next call: 766 KB measured here.) TestFollowAgreesWithBatch and the corpus
// tests check that the verdicts are unchanged.
func TestFollowHoldsNoPayload(t *testing.T) {
	big := strings.Repeat("the whole conversation so far, sent again. ", 2<<20/43)
	evs := newBuilder(t).task().calls(3, "invokeModel", big).evs
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewReader(Options{Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := r.Add(proto.Clone(e).(*historypb.HistoryEvent)); err != nil {
			t.Fatal(err)
		}
		r.Execution()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if ex := r.Execution(); ex.Called != 3 || ex.Closed {
		t.Fatalf("%d calls judged (closed %v), want 3 and the run going on", ex.Called, ex.Closed)
	}
	if held > 256<<10 {
		t.Errorf("the Reader holds %d KB after three 2 MB results, want under 256 KB", held>>10)
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(evs)
}
