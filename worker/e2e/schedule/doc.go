// Package schedule is loopguard's randomized schedule test: seeded,
// reproducible workflow programs run on the embedded Temporal server while
// a driver sends human input at random points, and invariants checked on
// every run.
//
// A program is data (a Plan): sequences and parallel branches of guarded
// activity, local activity and child workflow calls with repeating or
// varying results, timers, Selectors and continue-as-new, plus the human
// input (resume, escalate, halt, updates, bad payloads, cancellation) and
// the guard options it runs with. Two features cover the recovery ladder:
// with handler, the workflow and its children register a halt handler
// (interceptor.SetHaltHandler) that, halt by halt as the plan says, asks a Review activity and resumes with its guidance,
// escalates, hands the halt to a human (no action, an error, a panic, an
// unknown action), repeats the halted node's call (its calls are not
// guarded), sleeps while the driver's answer arrives (the human wins), or
// resumes with guidance over the limit, or (feature runtime) sleeps
// longer than every runtime budget; with guidance, resume answers
// carry guidance (short, exactly MaxGuidanceBytes of multi-byte and
// JSON-escaped characters, empty, by signal or update) and hostile
// guidance the guard must refuse (one byte over, on escalate; an invalid
// byte). Every activity records the notice it was called with
// (interceptor.NoticeFrom). Generate builds a Plan from a seed and a
// feature set; one generic workflow, Interpret, runs any Plan, so a failing
// seed is printed as JSON and re-run with the same flags.
//
// The invariants, checked for every run: the workflow (and every child)
// closes within a bound while a driver answers every halt it sees through
// the loop.status query; no WorkflowTaskFailed event in any history; no
// escalation nobody asked for; and every history replays with the options
// it was recorded with, with each Options field drifted in turn (found by
// reflection, so new fields are covered), and under the encryption codec
// it was recorded with. For the ladder: a decision by the halt handler is
// the one the plan's handler returns for that halt (action and guidance),
// one that hands a halt over never decides it, and one that decided
// before any answer is the decision loop.status shows; an update with
// guidance over the limit or on escalate is refused with the guard's
// reason; every guidance that loop.status or a notice shows (history
// headers of activity and child calls, what activities read) is valid
// UTF-8 within the limit and is one the driver sent that workflow or the
// handler returned; the handler's own calls carry no notice and are no
// node; a notice's warning, and the rest of it less the JSON escapes of
// its guidance, stay within 1 KiB; and a guidance shown in force while its
// loop's nodes were called reached a call. For one loop:
// no warning a call carries or a halt lists goes past Options.Warnings,
// and every halt that pauses is in the memo before its loop.halted echo,
// within the workflow task that raised it (halt handler or not); a loop
// that started over (a resume, a handler's decision, a warning) is not
// halted again by a detector that reads repetition within 2 guarded calls
// (reset-window); and no halt on a runtime budget charges the loop more
// than it ran unpaused since its start or last reset, by the history's
// timestamps (handler-time: feature runtime adds the budgets, and a halt
// handler of kind slow that sleeps twice as long). A handler's decision
// that a PauseTimeout overtook (the handler took the timeout or longer)
// is not counted as lost. For liveness: a plan's
// closing stuck loop (feature stuck: rounds of concurrent calls of one
// node, the same results every round, Warnings 0 to 12) is halted within
// interceptor.HaltBound of its calls after its onset, or its run ends
// first (stuck-halts); and no pause is charged to a runtime budget,
// however it ended: resumed, escalated by a human, the pause timeout or
// the halt handler, or cancelled (paused-time; feature longpause makes
// such pauses outlast the budgets).
//
// It lives in the worker module, never imported by users: its test links
// the Temporal server.
package schedule
