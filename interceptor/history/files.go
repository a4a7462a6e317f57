package history

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// ReadHistoryFiles reads the history files in paths and hands each to
// fn, in order. Files are read and decoded ahead on every core (decoding
// JSON costs more than judging the history), a few at a time: memory
// holds those few histories, whatever the number of files.
func ReadHistoryFiles(paths []string, fn func(path string, h *historypb.History, err error)) {
	type read struct {
		h   *historypb.History
		err error
	}
	workers := max(runtime.GOMAXPROCS(0), 1)
	slots := make([]chan read, len(paths))
	for i := range slots {
		slots[i] = make(chan read, 1)
	}
	next := make(chan int)
	ahead := make(chan struct{}, 2*workers) // histories decoded and not yet handed over
	go func() {
		defer close(next)
		for i := range paths {
			ahead <- struct{}{}
			next <- i
		}
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for i := range next {
				h, err := ReadHistoryFile(paths[i])
				slots[i] <- read{h, err}
			}
		}()
	}
	for i, p := range paths {
		r := <-slots[i]
		<-ahead
		fn(p, r.h, r.err)
	}
}

// HistoryFiles lists the *.json histories in dir, sorted, without
// manifest.json.
func HistoryFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := files[:0]
	for _, f := range files {
		if filepath.Base(f) != "manifest.json" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("history: no *.json histories in %s", dir)
	}
	sort.Strings(out)
	return out, nil
}

// OrderChains puts each run continued as new after the run it continues
// from, reading only the first and last event of each file's JSON
// (run ids), so that the guard's state carries along the chain.
func OrderChains(paths []string) []string {
	type link struct{ path, run, prev string }
	links := make([]link, len(paths))
	byRun := map[string]int{}
	for i, p := range paths {
		links[i].path = p
		if run, prev, ok := runIDs(p); ok {
			links[i].run, links[i].prev = run, prev
			byRun[run] = i
		}
	}
	out := make([]string, 0, len(paths))
	done := make([]bool, len(paths))
	var visit func(i int)
	visit = func(i int) {
		if done[i] {
			return
		}
		done[i] = true
		if j, ok := byRun[links[i].prev]; ok && links[i].prev != "" {
			visit(j)
		}
		out = append(out, links[i].path)
	}
	for i := range links {
		visit(i)
	}
	return out
}

var (
	originalRunRe  = regexp.MustCompile(`"originalExecutionRunId":\s*"([^"]+)"`)
	continuedRunRe = regexp.MustCompile(`"continuedExecutionRunId":\s*"([^"]+)"`)
)

// runIDs reads a history file's run id and the run it continued from out
// of its first 256 KiB (the started event), without decoding it.
func runIDs(path string) (run, prev string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	head := make([]byte, 256<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	m := originalRunRe.FindSubmatch(head)
	if m == nil {
		return "", "", false
	}
	if c := continuedRunRe.FindSubmatch(head); c != nil {
		prev = string(c[1])
	}
	return string(m[1]), prev, true
}

// ReadHistoryFile reads a JSON history (protojson of history.v1.History, as
// `temporal workflow show --output json` writes it; the older SDK JSON
// with SCREAMING_CASE enums is accepted too).
func ReadHistoryFile(path string) (*historypb.History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("history: read history: %w", err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(data), client.HistoryJSONOptions{})
	if err != nil {
		return nil, fmt.Errorf("history: %s is not a JSON workflow history: %w", path, err)
	}
	if len(h.GetEvents()) == 0 {
		return nil, fmt.Errorf("history: %s holds no history events", path)
	}
	return h, nil
}

// ExportHistory fetches the full history of a workflow run (runID "" means
// the latest run) from c, page by page.
func ExportHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	h := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history: export history of %s: %w", workflowID, err)
		}
		h.Events = append(h.Events, e)
	}
	return h, nil
}
