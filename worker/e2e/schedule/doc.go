// Package schedule is loopguard's randomized schedule test: seeded,
// reproducible workflow programs run on the embedded Temporal server while
// a driver sends human input at random points, and invariants checked on
// every run.
//
// A program is data (a Plan): sequences and parallel branches of guarded
// activity, local activity and child workflow calls with repeating or
// varying results, timers, Selectors and continue-as-new, plus the human
// input (resume, escalate, halt, updates, bad payloads, cancellation) and
// the guard options it runs with. Generate builds a Plan from a seed and a
// feature set; one generic workflow, Interpret, runs any Plan, so a failing
// seed is printed as JSON and re-run with the same flags.
//
// The invariants, checked for every run: the workflow (and every child)
// closes within a bound while a driver answers every halt it sees through
// the loop.status query; no WorkflowTaskFailed event in any history; no
// escalation nobody asked for; and every history replays with the options
// it was recorded with, with each Options field drifted in turn (found by
// reflection, so new fields are covered), and under the encryption codec
// it was recorded with.
//
// It lives in the worker module, never imported by users: its test links
// the Temporal server.
package schedule
