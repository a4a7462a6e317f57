// Package workflows holds loopguard's sample agent loops, written the way
// Temporal users write them, with the simulated agents of package
// activities:
//
//   - CoderVerifierLoop: coder ↔ verifier until the tests pass.
//   - PlannerResearcherLoop: planner → researcher → planner (seed 003).
//   - ChildIterationLoop: one IterationWorkflow child per iteration.
//   - PollingJob: an exempt poller, then a summary.
//   - ChatAgent: an LLM↔tool loop whose conversation lives in the workflow.
//   - ParallelToolAgent: a model turn asks for several tool calls, run in
//     parallel.
//   - Supervisor: collects the loop.halted signals of guarded workflows.
//
// Scenarios lists the runs the samples support, each with the outcome the
// guard should produce when installed with GuardOptions; Register registers
// everything on a worker listening on TaskQueue:
//
//	guard, err := interceptor.New(workflows.GuardOptions())
//	...
//	w := worker.New(c, workflows.TaskQueue, worker.Options{
//		Interceptors: []sdkinterceptor.WorkerInterceptor{guard},
//	})
//	workflows.Register(w)
//
// The loops use only the public API of package interceptor. A halted loop
// is paused inside the guarded call; when a human escalates, that call
// returns a LoopEscalated error, and every loop ends with a LoopResult whose
// Outcome is "escalated", with the human's reason, the halt, and the best
// result so far, rather than failing. Without the guard, a loop that never
// converges runs to LoopInput.MaxTurns and ends with Outcome "gave_up".
package workflows
