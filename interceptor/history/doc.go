// Package history reads Temporal workflow histories into the guard's
// judgement (interceptor.Judge): what the guard would have done to runs
// recorded without it, or, with Options.AsRecorded, what it did to runs
// recorded with it. The histories may come from any SDK's workers: the
// events of a call, a result, a signal or an update, a timer and a
// continue-as-new are the same.
//
// It is the one reader of histories: `worker analyze` reads exported
// files or a visibility query's executions with it, and package
// testsuite's analysis helpers are thin wrappers around it. It links
// neither the Temporal server nor the SDK's test environment.
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
package history
