package history

import (
	"errors"
	"fmt"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
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
	judge *interceptor.Judge
	calls int
}

// NewAnalyzer returns an Analyzer, or an error naming the first invalid
// option.
func NewAnalyzer(opts Options) (*Analyzer, error) {
	if _, err := interceptor.NewJudge(opts.Guard); err != nil {
		return nil, fmt.Errorf("history: invalid guard options: %w", err)
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	if opts.FailureConverter == nil {
		opts.FailureConverter = temporal.GetDefaultFailureConverter()
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

func (a *Analyzer) history(h *historypb.History, file string) (ex Execution) {
	ex.File = file
	events := h.GetEvents()
	if len(events) == 0 {
		ex.Err = errors.New("no history events")
		return ex
	}
	start := events[0].GetWorkflowExecutionStartedEventAttributes()
	if start == nil {
		ex.Err = fmt.Errorf("event %d (%s): %w", events[0].GetEventId(), eventName(events[0]), errNoStart)
		return ex
	}
	runID := start.GetOriginalExecutionRunId()
	info := workflowInfo(start, runID)
	ex.WorkflowType, ex.WorkflowID, ex.RunID = info.WorkflowType.Name, info.WorkflowExecution.ID, runID
	ex.ContinuedFrom = start.GetContinuedExecutionRunId()
	ex.FirstCall = 1
	dc := a.opts.DataConverter
	version, marker, pinned := recordedGuard(h, dc)
	ex.Recorded.Guarded, ex.Recorded.Version = version > 0, version
	now := events[0].GetEventTime().AsTime()

	var j *interceptor.Judge
	if c := a.open[runID]; c != nil {
		delete(a.open, runID)
		j = c.judge
		ex.FirstCall = c.calls + 1
		j.NextRun(info, now)
	} else {
		var err error
		if j, err = interceptor.NewJudge(a.opts.Guard); err != nil {
			ex.Err = err
			return ex
		}
		if a.opts.AsRecorded && version > 0 {
			if pinned == nil {
				ex.Err = fmt.Errorf("event %d (%s): the guard's version marker has no pinned options after it (truncated?)", marker.GetEventId(), eventName(marker))
				return ex
			}
			if err := j.Pin(version, func(ptr any) error { return dc.FromPayloads(pinned, ptr) }); err != nil {
				ex.Err = fmt.Errorf("event %d (%s): %w", marker.GetEventId(), eventName(marker), err)
				return ex
			}
		}
		if !j.Start(info, now) {
			ex.NotGuarded = fmt.Sprintf("workflow type %q is out of scope: Options.Workflows, GuardWorkflow or Retire leave it out", ex.WorkflowType)
			if a.opts.AsRecorded && version == 0 {
				ex.NotGuarded = "recorded without the guard"
			}
		} else if p := start.GetHeader().GetFields()[carryHeader]; p != nil && ex.ContinuedFrom != "" && a.opts.AsRecorded && version > 0 {
			// The run before is not in the batch: start from what it carried.
			if err := j.Restore(func(ptr any) error { return dc.FromPayload(p, ptr) }); err != nil {
				ex.Problems = append(ex.Problems, fmt.Sprintf("event %d (%s): %v", events[0].GetEventId(), eventName(events[0]), err))
			}
		}
	}
	ex.Guarded = j.Guarded()
	r := &runReader{opts: &a.opts, dc: dc, fc: a.opts.FailureConverter, judge: j, ex: &ex, h: h,
		calls: map[int64]int{}, attempted: map[int64]bool{}, pauseTimers: map[int64]bool{}}
	if err := r.read(); err != nil {
		ex.Err = err
		return ex
	}
	ex.Verdicts = j.Verdicts()
	for _, l := range j.Logs() {
		ex.Problems = append(ex.Problems, "guard: "+l)
	}
	if a.opts.AsRecorded {
		ex.Recorded.guardAnswers(ex.Verdicts)
	}
	for _, v := range ex.Verdicts {
		if v.Halt != nil && v.OnHalt != interceptor.OnHaltObserve {
			ex.Saved = ex.FirstCall + len(ex.Calls) - v.Call
			break
		}
	}
	last := events[len(events)-1]
	if can := last.GetWorkflowExecutionContinuedAsNewEventAttributes(); can != nil && ex.Guarded {
		a.open[can.GetNewExecutionRunId()] = &openChain{judge: j, calls: j.Calls()}
	}
	return ex
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

// AnalyzeDir analyses every *.json history in dir (manifest.json
// excepted) and returns the report.
func AnalyzeDir(dir string, opts Options) (Analysis, error) {
	files, err := HistoryFiles(dir)
	if err != nil {
		return Analysis{}, err
	}
	var rep Analysis
	rep.Summary, err = AnalyzeFiles(files, opts, func(ex Execution) { rep.Executions = append(rep.Executions, ex) })
	return rep, err
}
