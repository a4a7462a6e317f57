package testsuite

import (
	historypb "go.temporal.io/api/history/v1"

	"github.com/loopguard/loopguard/interceptor/history"
)

// The analysis of past histories is package history's; these names keep
// working for code written against testsuite.

// AnalyzeOptions configures the analysis of past histories: see
// history.Options.
type AnalyzeOptions = history.Options

// Execution is the analysis of one run: see history.Execution.
type Execution = history.Execution

// Recorded is what a history says the guard did: see history.Recorded.
type Recorded = history.Recorded

// RecordedAnswer is a decision sent to a guarded workflow: see
// history.RecordedAnswer.
type RecordedAnswer = history.RecordedAnswer

// Summary sums up an analysis: see history.Summary.
type Summary = history.Summary

// Analyzer analyses histories one at a time: see history.Analyzer.
type Analyzer = history.Analyzer

// Analysis is the analysis of a set of histories: see history.Analysis.
type Analysis = history.Analysis

// NewAnalyzer is history.NewAnalyzer.
func NewAnalyzer(opts AnalyzeOptions) (*Analyzer, error) { return history.NewAnalyzer(opts) }

// AnalyzeFile is history.AnalyzeFile.
func AnalyzeFile(path string, opts AnalyzeOptions) (Execution, error) {
	return history.AnalyzeFile(path, opts)
}

// AnalyzeFiles is history.AnalyzeFiles.
func AnalyzeFiles(paths []string, opts AnalyzeOptions, each func(Execution)) (Summary, error) {
	return history.AnalyzeFiles(paths, opts, each)
}

// AnalyzeDir is history.AnalyzeDir.
func AnalyzeDir(dir string, opts AnalyzeOptions) (Analysis, error) {
	return history.AnalyzeDir(dir, opts)
}

// Sweep is history.Sweep.
func Sweep(paths []string, opts []AnalyzeOptions, each func(i int, ex Execution)) ([]Summary, error) {
	return history.Sweep(paths, opts, each)
}

// ReadHistoryFiles is history.ReadHistoryFiles.
func ReadHistoryFiles(paths []string, fn func(path string, h *historypb.History, err error)) {
	history.ReadHistoryFiles(paths, fn)
}

// HistoryFiles is history.HistoryFiles.
func HistoryFiles(dir string) ([]string, error) { return history.HistoryFiles(dir) }

// OrderChains is history.OrderChains.
func OrderChains(paths []string) []string { return history.OrderChains(paths) }
