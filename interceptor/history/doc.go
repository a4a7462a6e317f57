// Package history reads Temporal workflow histories into the guard's
// judgement (its Judge, internal to the module): what the guard would
// have done to runs recorded without it, or, with Options.AsRecorded, what it did to runs
// recorded with it. The histories may come from any SDK's workers: the
// events of a call, a result, a signal or an update, a timer and a
// continue-as-new are the same.
//
// It is the one reader of histories: `worker analyze` reads exported
// files or a visibility query's executions with it, `worker watch`
// follows running executions with it, and package testsuite's analysis
// helpers are thin wrappers around it. It links neither the Temporal
// server nor the SDK's test environment.
//
// # Finished histories
//
// Analyse a folder of exported histories (`temporal workflow show
// --output json`):
//
//	rep, err := history.AnalyzeDir("testdata/histories", history.Options{
//		Guard: interceptor.Options{MaxCycleIterations: 6},
//	})
//
// or one history at a time with an Analyzer, whose memory holds only
// the guard's state of runs that continued as new until their next run
// comes, and the Summary.
//
// # Growing histories
//
// A Reader follows one execution as its history grows: Add the events as
// they come, read Execution, Close at the end. It judges each event once
// the events its judgement reads after it are in, which is at most the
// rest of its workflow task (see Reader for the exception with
// AsRecorded), so the verdicts do not depend on how the history was cut
// into pages, and the analysis of a whole history is a Reader fed all of
// it. A Reader holds nothing the history cannot rebuild.
//
// # Temporal's Workflow Pause
//
// In a run no interceptor guards (Execution.Pausable), each halt waits for
// a Temporal Workflow Pause to answer it, and the unpause that ends that
// pause resumes the halt: a watcher pauses the execution for
// Execution.Pending with PauseRequestID and PauseReason, and the analysis
// of the history afterwards reaches the halts the watcher paused for
// (Execution.Pauses). A run the interceptor guards is known from its first
// workflow task (Execution.Recorded.Version) and is left to the
// interceptor.
package history
