package history

import (
	"errors"
	"fmt"

	"github.com/loopguard/loopguard/interceptor/internal/judge"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
)

// Options configures the analysis of past histories.
type Options struct {
	// Guard are the guard's options to judge the histories under: the
	// thresholds a team considers, Workflows for the scope, NodeName and
	// ResultHook as its workers would run them. The zero value is the
	// guard's defaults. Whatever OnHalt says, every halt is answered as
	// observe answers it, so that the rest of each history is judged
	// too; a verdict says what the halt would have done.
	Guard interceptor.Options
	// AsRecorded judges a history recorded with the guard under the
	// options it pinned, with its guard version, and follows the
	// decisions it holds at each halt: the analysis then tells what the
	// guard did. Histories recorded without the guard are not guarded
	// (NotGuarded "recorded without the guard"): the guard did nothing to
	// them.
	AsRecorded bool
	// Follow says the Reader follows a live run for a watcher, which
	// acts on each verdict once: it keeps what the watcher acts on, not
	// the whole analysis, so that a followed run holds the guard's own
	// state plus the history cursor. Execution.Calls stays empty (Called
	// counts the calls); Execution.Verdicts holds in full the verdicts
	// judged since the previous call to Execution, and Execution.Halted
	// every halt of the run, kept compact (without its Evidence,
	// Warnings, SuggestedActions and Message; about 40 bytes a halt);
	// earlier warnings are dropped (VerdictsSeen and WarningsSeen count
	// every verdict). The verdicts' calls, detectors, nodes and the
	// pauses are the same as without it.
	// Default false: the whole analysis. Not with AsRecorded, whose
	// recorded decisions are noted on earlier halts.
	Follow bool
	// DataConverter is the workers' data converter, with their codecs.
	// Default: the SDK's default converter.
	DataConverter converter.DataConverter
	// FailureConverter is the workers' failure converter. Default: the
	// SDK's default.
	FailureConverter converter.FailureConverter
}

// withDefaults checks opts and fills in the converters' defaults.
func (opts Options) withDefaults() (Options, error) {
	if _, err := judge.New(opts.Guard); err != nil {
		return opts, fmt.Errorf("history: invalid guard options: %w", err)
	}
	if opts.Follow && opts.AsRecorded {
		return opts, errors.New("history: Follow and AsRecorded do not go together")
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	if opts.FailureConverter == nil {
		opts.FailureConverter = temporal.GetDefaultFailureConverter()
	}
	return opts, nil
}
