package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/history"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// analyzeCommand is the name of the subcommand that analyses past
// histories: what the guard would have done to runs made without it.
const analyzeCommand = "analyze"

// analyzeConfig is the analyze subcommand's flags.
type analyzeConfig struct {
	policies       stringList
	labels         string
	workflows      string
	asRecorded     bool
	output         string
	top            int
	query          string
	limit          int
	rate           float64
	address        string
	namespace      string
	codecEndpoint  string
	connectTimeout time.Duration
	paths          []string
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func newAnalyzeFlagSet(cfg *analyzeConfig) *flag.FlagSet {
	fs := flag.NewFlagSet(progName+" "+analyzeCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&cfg.policies, "policy", `options to judge under: "defaults" (the zero Options), "tool_call" (GrainToolCall, Warnings 1: the README's guard) or a JSON policy file (interceptor.ParsePolicy's format); repeat it for a sweep, side by side (default "`+defaultPolicy+`")`)
	fs.StringVar(&cfg.labels, "labels", "", `labels file scoring each policy: {"<workflow id>": {"loop": true, "onset": <call>}, ...}: loops caught, how many calls after their onset, progressing runs halted`)
	fs.StringVar(&cfg.workflows, "workflows", "", "comma-separated workflow types the guard would guard (Options.Workflows; default: those of the policy, else all)")
	fs.BoolVar(&cfg.asRecorded, "as-recorded", false, "judge histories recorded with the guard under the options they pinned, following their decisions: what the guard did")
	fs.StringVar(&cfg.output, "output", "text", "text (a table, worst loops first) or json")
	fs.StringVar(&cfg.output, "o", "text", "shorthand for --output")
	fs.IntVar(&cfg.top, "top", 20, "rows of the table (text output)")
	fs.StringVar(&cfg.query, "query", "", `visibility query selecting the executions to read from the server (e.g. 'WorkflowType="AgentLoop" AND CloseTime > "2026-01-01T00:00:00Z"'), instead of files`)
	fs.IntVar(&cfg.limit, "limit", 1000, "most executions to read with --query")
	fs.Float64Var(&cfg.rate, "rate", 20, "most histories fetched per second with --query")
	fs.StringVar(&cfg.address, "address", "", "host:port of the Temporal frontend for --query (default $TEMPORAL_ADDRESS, else the temporal CLI profile's, else 127.0.0.1:7233)")
	fs.StringVar(&cfg.namespace, "namespace", "", `namespace for --query (default $TEMPORAL_NAMESPACE, else "default")`)
	fs.StringVar(&cfg.codecEndpoint, "codec-endpoint", "", "remote codec server that decodes the histories' payloads, as the temporal CLI's --codec-endpoint")
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for the server with --query")
	return fs
}

func parseAnalyzeFlags(args []string) (analyzeConfig, error) {
	var cfg analyzeConfig
	fs := newAnalyzeFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, &usageError{err: err}
	}
	cfg.paths = fs.Args()
	switch {
	case cfg.output != "text" && cfg.output != "json":
		return cfg, usagef("--output: %q is not one of text, json", cfg.output)
	case cfg.query == "" && len(cfg.paths) == 0:
		return cfg, usagef("name history files or folders (exported with `temporal workflow show --output json`), or a --query")
	case cfg.query != "" && len(cfg.paths) > 0:
		return cfg, usagef("--query reads from the server: do not name files too")
	case cfg.rate <= 0:
		return cfg, usagef("--rate must be positive, got %g", cfg.rate)
	case cfg.limit <= 0:
		return cfg, usagef("--limit must be positive, got %d", cfg.limit)
	case cfg.top < 0:
		return cfg, usagef("--top must not be negative, got %d", cfg.top)
	}
	if len(cfg.policies) == 0 {
		cfg.policies = stringList{defaultPolicy}
	}
	return cfg, nil
}

// judged is one policy of a sweep.
type judged struct {
	name string
	// analyzer reads a query's histories; summary is set by a sweep of
	// files.
	analyzer *history.Analyzer
	summary  *history.Summary
	score    history.Score
	worst    []history.Execution
	top      int
}

// sum is the policy's summary.
func (j *judged) sum() history.Summary {
	if j.summary != nil {
		return *j.summary
	}
	return j.analyzer.Summary()
}

// keep keeps the top worst executions: bounded memory whatever the
// number of histories.
func (j *judged) keep(ex history.Execution) {
	if j.top == 0 || ex.Err != nil || len(ex.Verdicts) == 0 && len(ex.Recorded.Halts) == 0 {
		return
	}
	ex.Problems = nil
	j.worst = append(j.worst, ex)
	sort.SliceStable(j.worst, func(a, b int) bool { return worse(&j.worst[a], &j.worst[b]) })
	if len(j.worst) > j.top {
		j.worst = j.worst[:j.top]
	}
}

// worse orders executions worst loop first: most calls a halt would have
// saved, then most halts, then most warnings.
func worse(a, b *history.Execution) bool {
	if a.Saved != b.Saved {
		return a.Saved > b.Saved
	}
	ha, hb := len(a.Halts()), len(b.Halts())
	if ha != hb {
		return ha > hb
	}
	return len(a.Verdicts) > len(b.Verdicts)
}

// codecConverter is the data converter that decodes payloads through the
// codec server at endpoint, as the temporal CLI's --codec-endpoint does
// (the default converter when endpoint is empty).
func codecConverter(endpoint string) converter.DataConverter {
	dc := converter.GetDefaultDataConverter()
	if endpoint != "" {
		dc = converter.NewRemoteDataConverter(dc, converter.RemoteDataConverterOptions{Endpoint: endpoint})
	}
	return dc
}

// runAnalyze is `worker analyze`.
func runAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseAnalyzeFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		printAnalyzeUsage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	var labels history.Labels
	if cfg.labels != "" {
		if labels, err = history.ReadLabels(cfg.labels); err != nil {
			return &usageError{err: err}
		}
	}
	dc := codecConverter(cfg.codecEndpoint)
	var sweep []*judged
	var opts []history.Options
	for _, p := range cfg.policies {
		o, err := analyzeOptions(p, cfg.workflows)
		if err != nil {
			return err
		}
		ao := history.Options{Guard: o, AsRecorded: cfg.asRecorded, DataConverter: dc}
		a, err := history.NewAnalyzer(ao)
		if err != nil {
			return &usageError{err: fmt.Errorf("--policy %s: %w", p, err)}
		}
		opts = append(opts, ao)
		sweep = append(sweep, &judged{name: p, analyzer: a, top: cfg.top})
	}

	out := newJSONStream(stdout, cfg.output == "json" && len(sweep) == 1)
	each := func(ex history.Execution, j *judged) {
		if ex.Err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", progName, oneLine(ex.Err.Error()))
		}
		if j == sweep[0] {
			// The first few problems of a history: a missing codec makes one
			// of every event.
			const shown = 3
			for i, p := range ex.Problems {
				if i == shown {
					fmt.Fprintf(stderr, "%s: %s: %d more problems\n", progName, ex.File, len(ex.Problems)-shown)
					break
				}
				fmt.Fprintf(stderr, "%s: %s: %s\n", progName, ex.File, p)
			}
		}
		if j == sweep[0] {
			out.execution(ex)
		}
		j.score.Add(ex, labels)
		j.keep(ex)
	}
	if cfg.query != "" {
		err = analyzeQuery(ctx, cfg, sweep, each, stderr)
	} else {
		err = analyzeFiles(cfg.paths, opts, sweep, each, stderr)
	}
	if err != nil {
		return err
	}
	switch {
	case cfg.output == "json":
		err = out.close(sweep)
	case len(sweep) == 1:
		printAnalysis(stdout, sweep[0])
	default:
		printSweep(stdout, sweep)
	}
	if err != nil {
		return err
	}
	// A history that could not be read is a verdict missing: the report
	// stands, and the exit status says it is incomplete.
	if s := sweep[0].sum(); s.Failed > 0 {
		return fmt.Errorf("%d of %d histories could not be read (each is named above)", s.Failed, s.Executions)
	}
	return nil
}

// defaultPolicy is the --policy of analyze and watch when none is named.
// What they read are histories seen from outside, where each activity is
// one call: a model call or a tool call, whoever wrote the loop (our
// samples, the AI SDK's invokeModel, OpenAI Agents' invokeModelActivity).
// That is the tool-call grain. The zero Options budget agent turns, a unit
// only the workflow's own interceptor knows: under them, analyze and watch
// halted every progressing run of the real corpus, native or framework
// (docs/configuration.md). The library's zero Options are unchanged.
// The built-in policy has the README's guard's warning too, so that
// analyze and watch halt where that guard would: after one warning.
const defaultPolicy = "tool_call"

// toolCallPolicy is the "tool_call" policy: the README's guard, as a
// policy file would give it ({"grain": "tool_call", "warnings": 1}).
func toolCallPolicy() interceptor.Options {
	return interceptor.Options{Grain: interceptor.GrainToolCall, Warnings: 1}
}

// builtinPolicies are the --policy names that are not files.
var builtinPolicies = []string{"defaults", "tool_call"}

// analyzeOptions are the guard's options of one --policy.
func analyzeOptions(policy, workflows string) (interceptor.Options, error) {
	var o interceptor.Options
	switch policy {
	case "defaults":
	case "tool_call":
		o = toolCallPolicy()
	default:
		data, err := os.ReadFile(policy)
		if errors.Is(err, fs.ErrNotExist) {
			return o, usagef("--policy %s: neither a built-in policy (%s) nor a file", policy, strings.Join(builtinPolicies, ", "))
		}
		if err != nil {
			return o, &usageError{err: fmt.Errorf("--policy: %w", err)}
		}
		if err := o.ApplyPolicy(data); err != nil {
			return o, &usageError{err: fmt.Errorf("policy file %s: %w", policy, err)}
		}
	}
	if workflows != "" {
		o.Workflows = strings.Split(workflows, ",")
	}
	return o, nil
}

// analyzeFiles reads the named files and the histories in the named
// folders and those under them (history.HistoryFiles), runs
// continued as new after the runs they continue.
func analyzeFiles(paths []string, opts []history.Options, sweep []*judged, each func(history.Execution, *judged), stderr io.Writer) error {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return &usageError{err: err}
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		fs, err := history.HistoryFiles(p)
		if err != nil {
			return &usageError{err: err}
		}
		files = append(files, fs...)
	}
	bar := newProgress(stderr, len(files))
	defer bar.done()
	sums, err := history.Sweep(files, opts, func(i int, ex history.Execution) {
		each(ex, sweep[i])
		if i == len(sweep)-1 {
			bar.add(1)
		}
	})
	for i, s := range sums {
		sweep[i].summary = &s
	}
	return err
}

// analyzeQuery reads the executions a visibility query selects, page by
// page, fetching at most cfg.rate histories a second.
func analyzeQuery(ctx context.Context, cfg analyzeConfig, sweep []*judged, each func(history.Execution, *judged), stderr io.Writer) error {
	wcfg := config{address: cfg.address, namespace: cfg.namespace, connectTimeout: cfg.connectTimeout, searchAttribute: searchAttributeNone}
	b, err := dialExternal(ctx, wcfg, nil, zap.NewNop())
	if err != nil {
		return err
	}
	defer func() { _ = b.close() }()
	c := b.client
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.rate))
	defer tick.Stop()
	total := -1
	if n, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: b.namespace, Query: cfg.query}); err == nil {
		total = min(int(n.GetCount()), cfg.limit)
	}
	bar := newProgress(stderr, total)
	defer bar.done()
	var token []byte
	read := 0
	for read < cfg.limit {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: b.namespace, Query: cfg.query, NextPageToken: token, PageSize: int32(min(cfg.limit, 100)),
		})
		if err != nil {
			return fmt.Errorf("list workflows (%s): %w", cfg.query, err)
		}
		for _, info := range page.GetExecutions() {
			if read == cfg.limit {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			exec := info.GetExecution()
			h, err := history.ExportHistory(ctx, c, exec.GetWorkflowId(), exec.GetRunId())
			name := exec.GetWorkflowId() + "/" + exec.GetRunId()
			for _, j := range sweep {
				each(j.analyzer.Read(name, h, err), j)
			}
			read++
			bar.add(1)
		}
		token = page.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	return nil
}

// printAnalysis prints the summary and the worst executions.
func printAnalysis(w io.Writer, j *judged) {
	s := j.sum()
	fmt.Fprintf(w, "%d histories (%d guarded under %s), %d calls: %d would be warned, %d would halt (%d halts), %d calls saved\n",
		s.Executions, s.Guarded, j.name, s.Calls, s.WouldWarn, s.WouldHalt, s.Halts, s.Saved)
	if len(s.ByReason) > 0 {
		fmt.Fprintf(w, "halts by reason: %s; by detector: %s\n", counts(s.ByReason), counts(s.ByDetector))
	}
	if s.RecordedGuarded > 0 {
		fmt.Fprintf(w, "%d histories were recorded with the guard; it raised %d halts in them\n", s.RecordedGuarded, s.RecordedHalts)
	}
	if sc := j.score; sc.Loops+sc.Progressing > 0 {
		fmt.Fprintf(w, "labels: %d/%d loops halted (median %d calls after their onset), %d/%d progressing runs halted\n",
			sc.LoopsHalted, sc.Loops, sc.MedianAfter(), sc.ProgressingHalted, sc.Progressing)
	}
	if s.Failed > 0 || s.Problems > 0 {
		fmt.Fprintf(w, "%d histories could not be read, %d events were skipped (see stderr and --output json)\n", s.Failed, s.Problems)
	}
	if len(j.worst) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	recorded := j.sum().RecordedHalts > 0
	header := "WORKFLOW\tTYPE\tCALLS\tWARN\tHALT\tFIRST HALT\tLOOP\tSAVED\tCALLS (last 32 before the halt)"
	if recorded {
		header += "\tWHAT THE GUARD DID"
	}
	fmt.Fprintln(tw, header)
	for i := range j.worst {
		ex := &j.worst[i]
		first, loop := "-", "-"
		end := len(ex.Calls)
		for _, v := range ex.Verdicts {
			if h := v.Halt; h != nil {
				first = fmt.Sprintf("call %d: %s/%s at %s", v.Call, h.HaltReason, h.Detector, h.Node)
				if h.MaxIterations > 0 {
					loop = fmt.Sprintf("%d/%d", h.Iteration, h.MaxIterations)
				}
				end = min(end, v.Call-ex.FirstCall+1)
				break
			}
		}
		name := ex.WorkflowID
		if name == "" {
			name = ex.File
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s", name, ex.WorkflowType, len(ex.Calls),
			len(ex.Warnings()), len(ex.Halts()), first, loop, ex.Saved, callSparkline(ex.Calls[:max(end, 0)], 32))
		if recorded {
			fmt.Fprintf(tw, "\t%s", ex.Recorded.Told())
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

// callSparkline draws the last n calls, one bar per call: the bar's height
// is the call's node (in the order nodes first appear), so a loop reads as
// a repeating pattern.
func callSparkline(calls []string, n int) string {
	if len(calls) > n {
		calls = calls[len(calls)-n:]
	}
	index := map[string]float64{}
	values := make([]float64, len(calls))
	for i, c := range calls {
		v, ok := index[c]
		if !ok {
			v = float64(len(index) + 1)
			index[c] = v
		}
		values[i] = v
	}
	return interceptor.Sparkline(values)
}

func counts[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Slice(keys, func(a, b int) bool {
		if m[K(keys[a])] != m[K(keys[b])] {
			return m[K(keys[a])] > m[K(keys[b])]
		}
		return keys[a] < keys[b]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[K(k)])
	}
	return strings.Join(parts, ", ")
}

// printSweep prints the summaries of the policies side by side.
func printSweep(w io.Writer, sweep []*judged) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(s history.Summary) string) {
		fmt.Fprint(tw, label+"\t")
		for _, j := range sweep {
			fmt.Fprint(tw, f(j.sum())+"\t")
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "\t")
	for _, j := range sweep {
		fmt.Fprint(tw, j.name+"\t")
	}
	fmt.Fprintln(tw)
	num := func(f func(s history.Summary) int) func(history.Summary) string {
		return func(s history.Summary) string { return fmt.Sprint(f(s)) }
	}
	row("histories", num(func(s history.Summary) int { return s.Executions }))
	row("guarded", num(func(s history.Summary) int { return s.Guarded }))
	row("calls", num(func(s history.Summary) int { return s.Calls }))
	row("would warn", num(func(s history.Summary) int { return s.WouldWarn }))
	row("would halt", num(func(s history.Summary) int { return s.WouldHalt }))
	row("halts", num(func(s history.Summary) int { return s.Halts }))
	for _, r := range []protocol.HaltReason{protocol.ReasonBudgetExceeded, protocol.ReasonStalled, protocol.ReasonOscillating, protocol.ReasonRepeatedError, protocol.ReasonUserStop} {
		row("  "+string(r), num(func(s history.Summary) int { return s.ByReason[r] }))
	}
	row("calls saved", num(func(s history.Summary) int { return s.Saved }))
	if sc := sweep[0].score; sc.Loops+sc.Progressing > 0 {
		scored := func(label string, f func(sc *history.Score) string) {
			fmt.Fprint(tw, label+"\t")
			for _, j := range sweep {
				fmt.Fprint(tw, f(&j.score)+"\t")
			}
			fmt.Fprintln(tw)
		}
		scored("loops halted", func(sc *history.Score) string { return fmt.Sprintf("%d/%d", sc.LoopsHalted, sc.Loops) })
		scored("  median calls after onset", func(sc *history.Score) string { return fmt.Sprint(sc.MedianAfter()) })
		scored("progressing halted", func(sc *history.Score) string { return fmt.Sprintf("%d/%d", sc.ProgressingHalted, sc.Progressing) })
	}
	_ = tw.Flush()
}

// jsonStream writes the executions as they are analysed, then the
// summaries: {"executions":[...],"summaries":[{"policy":..,...}]}.
type jsonStream struct {
	w       io.Writer
	on      bool
	written int
	enc     *json.Encoder
}

func newJSONStream(w io.Writer, on bool) *jsonStream {
	s := &jsonStream{w: w, on: on, enc: json.NewEncoder(w)}
	if on {
		fmt.Fprint(w, `{"executions":[`)
	}
	return s
}

// executionJSON adds the error's text to an Execution's JSON.
type executionJSON struct {
	history.Execution
	Error string `json:"error,omitempty"`
}

func (s *jsonStream) execution(ex history.Execution) {
	if !s.on {
		return
	}
	if s.written > 0 {
		fmt.Fprint(s.w, ",")
	}
	s.written++
	e := executionJSON{Execution: ex}
	if ex.Err != nil {
		e.Error = ex.Err.Error()
	}
	_ = s.enc.Encode(e)
}

type summaryJSON struct {
	Policy string `json:"policy"`
	history.Summary
	Score *history.Score `json:"score,omitempty"`
}

func (s *jsonStream) close(sweep []*judged) error {
	sums := make([]summaryJSON, len(sweep))
	for i, j := range sweep {
		sums[i] = summaryJSON{Policy: j.name, Summary: j.sum()}
		if j.score.Loops+j.score.Progressing > 0 {
			sums[i].Score = &j.score
		}
	}
	if !s.on {
		fmt.Fprint(s.w, `{"executions":[`)
	}
	fmt.Fprint(s.w, `],"summaries":`)
	if err := s.enc.Encode(sums); err != nil {
		return err
	}
	_, err := fmt.Fprintln(s.w, "}")
	return err
}

// progress is a progress bar on stderr, drawn only when stderr is a
// terminal and the read is large.
type progress struct {
	w         io.Writer
	total, n  int
	on        bool
	lastDrawn time.Time
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok && (total < 0 || total >= 20) {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) add(n int) {
	p.n += n
	if !p.on || time.Since(p.lastDrawn) < 100*time.Millisecond && p.n != p.total {
		return
	}
	p.lastDrawn = time.Now()
	if p.total <= 0 {
		fmt.Fprintf(p.w, "\r%d histories read", p.n)
		return
	}
	const width = 30
	done := p.n * width / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d histories", strings.Repeat("#", done), strings.Repeat(" ", width-done), p.n, p.total)
}

func (p *progress) done() {
	if p.on && p.n > 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// printAnalyzeUsage prints the subcommand's help.
func printAnalyzeUsage(w io.Writer) {
	var cfg analyzeConfig
	fs := newAnalyzeFlagSet(&cfg)
	fs.SetOutput(w)
	fmt.Fprintf(w, `%[1]s %[2]s tells what the guard would have done to runs made without it:
it reads their histories into the guard's detectors (history.AnalyzeDir) and
reports, per execution, every warning and halt, and a summary.

Usage:
  %[1]s %[2]s [flags] FILE|DIR...     histories exported with temporal workflow show --output json
  %[1]s %[2]s [flags] --query QUERY   the executions a visibility query selects, read from the server

A folder is read with the folders under it: its *.json and *.json.gz files
(manifest.json aside). The exit status is 1 when a history could not be read
(the report covers the others), 2 for bad flags or policy.

Connection (--query) follows the temporal CLI: --address and --namespace, else
TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS and profile settings.

Flags:
`, progName, analyzeCommand)
	fs.PrintDefaults()
}
