// Package watch guards running workflow executions of any SDK from
// outside, with the guard's own judgement and Temporal's Workflow Pause.
//
// A Watcher lists the running executions a visibility query selects,
// follows each one's history as it grows (one long poll at a time), reads
// it into the judgement the analysis of finished histories runs
// (interceptor/history), and acts on each verdict: a warning is logged,
// counted and listed (and, if asked, signalled as loop.warning); a halt
// pauses the execution with PauseWorkflowExecution, its request id
// derived from the halt (PauseRequestID) so that a restarted watcher, or
// a second one, never pauses one execution twice for one halt. Where the
// server refuses pause, Options.OnPauseRefused says what a halt does
// instead. An unpause is a resume; executions the interceptor guards are
// left to it.
//
// The watcher holds nothing the history cannot rebuild. docs/watch.md
// covers setup (the server's frontend.WorkflowPauseEnabled), fallbacks,
// the lag between the trip and the pause, and restarts; `worker watch` is
// the command that runs one.
package watch
