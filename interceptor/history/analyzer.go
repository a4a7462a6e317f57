package history

import (
	"fmt"

	"github.com/loopguard/loopguard/interceptor/internal/judge"

	historypb "go.temporal.io/api/history/v1"
)

// Analyzer analyses histories one at a time, keeping only the guard's
// state of runs that continued as new until their next run comes, and
// the summary: its memory does not grow with the number of histories.
type Analyzer struct {
	opts Options
	// open are the chains whose last run continued as new, by the run
	// id of the next run.
	open    map[string]*openChain
	summary Summary
}

type openChain struct {
	judge judge.Judge
	calls int
}

// NewAnalyzer returns an Analyzer, or an error naming the first invalid
// option.
func NewAnalyzer(opts Options) (*Analyzer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Analyzer{opts: opts, open: map[string]*openChain{}}, nil
}

// Summary returns the summary of the histories analysed so far.
func (a *Analyzer) Summary() Summary { return a.summary }

// Waiting reports whether the run that continued as new into runID was
// analysed and waits for it, so that a caller reading histories out of
// order can put a run before its successor.
func (a *Analyzer) Waiting(runID string) bool { return a.open[runID] != nil }

// Read analyses what ReadHistoryFiles read from path: the history h, or
// the error err that kept it from being read.
func (a *Analyzer) Read(path string, h *historypb.History, err error) Execution {
	if err != nil {
		ex := Execution{File: path, Err: err}
		a.summary.add(&ex)
		return ex
	}
	return a.History(h, path)
}

// File analyses the history file at path. A file that cannot be read or
// judged gives an Execution whose Err names the file.
func (a *Analyzer) File(path string) Execution {
	h, err := ReadHistoryFile(path)
	return a.Read(path, h, err)
}

// History analyses one run's history; file names it in errors ("" for
// none).
func (a *Analyzer) History(h *historypb.History, file string) Execution {
	ex := a.history(h, file)
	if ex.Err != nil && file != "" {
		ex.Err = fmt.Errorf("%s: %w", file, ex.Err)
	}
	a.summary.add(&ex)
	return ex
}

func (a *Analyzer) history(h *historypb.History, file string) Execution {
	r := newRunReader(&a.opts, a.take)
	r.add(h.GetEvents())
	r.close()
	ex := r.execution(true)
	ex.File = file
	if run, c := r.next(); c != nil {
		a.open[run] = c
	}
	return ex
}

// take hands over the state of the run that continued as new into runID.
func (a *Analyzer) take(runID string) *openChain {
	c := a.open[runID]
	delete(a.open, runID)
	return c
}

// Analysis is the analysis of a set of histories.
type Analysis struct {
	Executions []Execution `json:"executions"`
	Summary    Summary     `json:"summary"`
}

// AnalyzeFile analyses the history file at path (exported with `temporal
// workflow show --output json` or ExportHistoryFile): what the guard
// would have done under opts.Guard, or with opts.AsRecorded what it did.
func AnalyzeFile(path string, opts Options) (Execution, error) {
	a, err := NewAnalyzer(opts)
	if err != nil {
		return Execution{}, err
	}
	ex := a.File(path)
	return ex, ex.Err
}

// AnalyzeFiles analyses history files in turn, runs continued as new
// after the run they continue from whatever their order. A file that
// cannot be read or judged is reported in its Execution's Err and the
// rest are analysed.
func AnalyzeFiles(paths []string, opts Options, each func(Execution)) (Summary, error) {
	sums, err := Sweep(paths, []Options{opts}, func(_ int, ex Execution) { each(ex) })
	if err != nil {
		return Summary{}, err
	}
	return sums[0], nil
}

// Sweep analyses the same history files under each of opts, side by
// side: each file is read once and judged under every options. each
// receives the i-th options' Execution of every file (nil: summaries
// only). The summaries are in the order of opts.
func Sweep(paths []string, opts []Options, each func(i int, ex Execution)) ([]Summary, error) {
	as := make([]*Analyzer, len(opts))
	for i, o := range opts {
		a, err := NewAnalyzer(o)
		if err != nil {
			return nil, fmt.Errorf("options %d: %w", i, err)
		}
		as[i] = a
	}
	ReadHistoryFiles(OrderChains(paths), func(path string, h *historypb.History, err error) {
		for i, a := range as {
			ex := a.Read(path, h, err)
			if each != nil {
				each(i, ex)
			}
		}
	})
	sums := make([]Summary, len(as))
	for i, a := range as {
		sums[i] = a.Summary()
	}
	return sums, nil
}

// AnalyzeDir analyses every history HistoryFiles finds in dir and the
// folders under it (*.json and *.json.gz, manifest.json excepted) and
// returns the report.
func AnalyzeDir(dir string, opts Options) (Analysis, error) {
	files, err := HistoryFiles(dir)
	if err != nil {
		return Analysis{}, err
	}
	var rep Analysis
	rep.Summary, err = AnalyzeFiles(files, opts, func(ex Execution) { rep.Executions = append(rep.Executions, ex) })
	return rep, err
}
