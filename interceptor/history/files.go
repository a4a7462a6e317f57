package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"

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

// HistoryFiles lists the histories in dir and the folders under it,
// sorted: the *.json and *.json.gz files but manifest.json (record-traces
// writes one beside its histories). Folders whose names start with a dot
// are left out.
func HistoryFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
		case isHistoryName(d.Name()):
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("history: no *.json or *.json.gz histories in %s or its folders", dir)
	}
	sort.Strings(out)
	return out, nil
}

func isHistoryName(name string) bool {
	return name != "manifest.json" && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz"))
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
	var r io.Reader = bufio.NewReader(f)
	if magic, _ := r.(*bufio.Reader).Peek(2); isGzip(magic) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", "", false
		}
		r = zr
	}
	head := make([]byte, 256<<10)
	n, _ := io.ReadFull(r, head)
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
// with SCREAMING_CASE enums is accepted too), gzipped or not. What is not
// one gets an error that says what the file is instead: empty, a JSON
// array, cut short, damaged gzip data, JSON of something else.
func ReadHistoryFile(path string) (*historypb.History, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h, err := DecodeHistory(data)
	if err != nil {
		return nil, fmt.Errorf("history: %s %w", path, err)
	}
	return h, nil
}

// DecodeHistory decodes a history file's bytes, gunzipping them first
// when they are gzipped. Its errors read after the file's name: "is
// empty", "is a JSON array, ...".
func DecodeHistory(data []byte) (*historypb.History, error) {
	what := "is"
	if isGzip(data) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err == nil {
			data, err = readAllSized(zr, gunzippedSize(data))
		}
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, errors.New("is gzipped, but its gzip data is cut short (an interrupted copy or download?)")
		case err != nil:
			return nil, fmt.Errorf("is gzipped, but its gzip data is damaged (%v)", err)
		}
		what = "is gzipped; its content is"
	}
	text := bytes.TrimSpace(data)
	switch {
	case len(text) == 0:
		return nil, fmt.Errorf("%s empty: a history is one JSON object, {\"events\": [...]}, as `temporal workflow show --output json` writes it", what)
	case text[0] == '[':
		return nil, fmt.Errorf("%s a JSON array, not one history: a history is one JSON object, {\"events\": [...]}; write each history of the array to a file of its own", what)
	case text[0] != '{':
		return nil, fmt.Errorf("%s not JSON: it begins %q; a history is one JSON object, {\"events\": [...]}", what, head(text, 16))
	}
	// As client.HistoryFromJSON decodes, without its copy of the bytes,
	// long payloads decoded apart (liftdata.go).
	h := &historypb.History{}
	err := unmarshalHistory(data, h)
	if err != nil || len(h.GetEvents()) == 0 {
		if hh, ok, herr := decodeHTTPExport(data); ok {
			if herr != nil {
				return nil, fmt.Errorf("%s %w", what, herr)
			}
			return hh, nil
		}
	}
	if err != nil {
		var syntax *json.SyntaxError
		switch jerr := json.Unmarshal(text, new(json.RawMessage)); {
		case errors.As(jerr, &syntax) && strings.HasPrefix(syntax.Error(), "unexpected end"): // encoding/json's words for JSON that stops
			return nil, fmt.Errorf("%s cut short: its JSON ends after %d bytes, inside the history (an interrupted export or copy?)", what, len(text))
		case errors.As(jerr, &syntax):
			return nil, fmt.Errorf("%s not valid JSON: %v, at byte %d", what, syntax, syntax.Offset)
		}
		return nil, fmt.Errorf("%s JSON but not a workflow history: %s", what, plainProtoError(err))
	}
	if len(h.GetEvents()) == 0 {
		return nil, fmt.Errorf("%s JSON but holds no history events: a history is {\"events\": [...]}, as `temporal workflow show --output json` writes it", what)
	}
	return h, nil
}

// gunzippedSize is the size gzip data says it unpacks to (its trailer
// holds it modulo 4 GiB), bounded so that a damaged trailer cannot make a
// huge buffer: reading into a buffer of the right size spares io.ReadAll's
// copies as it grows.
func gunzippedSize(gz []byte) int {
	if len(gz) < 4 {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
	return min(n, 64*len(gz))
}

func readAllSized(r io.Reader, size int) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// isGzip tells gzip data by its magic number.
func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

func head(b []byte, n int) []byte { return b[:min(len(b), n)] }

// protoNoise is what the proto JSON decoder adds for its own developers:
// its package name and its source file.
var protoNoise = regexp.MustCompile(`^(temporalproto|proto): |\s*\(in [^()]*\.go:\d+\)`)

// plainProtoError is the decoder's message without its source path.
func plainProtoError(err error) string {
	return strings.TrimSpace(protoNoise.ReplaceAllString(err.Error(), ""))
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
