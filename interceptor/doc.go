// Package interceptor is loopguard: a Temporal worker interceptor that halts
// runaway agent loops and pauses them for a human.
//
// Register it once per worker, scoped to the agent workflows:
//
//	guard, err := interceptor.New(interceptor.Options{Workflows: []string{"AgentLoop"}})
//	if err != nil {
//		return err
//	}
//	w := worker.New(c, "agents", worker.Options{
//		Interceptors: []sdkinterceptor.WorkerInterceptor{guard},
//	})
//
// (or as a plugin: NewPlugin; Options can come from a policy file:
// ParsePolicy). Every activity, local activity and child workflow call of
// those workflows is a guarded call. The guard keeps in workflow memory each
// node's steps and results, the cycles of the transition graph and the
// budgets, and reads each result at the next guarded call, where a halt
// takes effect: the normal path adds no events to the history. A loop that
// comes round with nothing new is warned (Options.Warnings), then halted:
// the guard raises loop.halted with a HaltEvent, and the call that would
// continue the loop waits for a resume or escalate (signal or update, from
// the temporal CLI, the UI or the worker's answer command). A halt handler
// (SetHaltHandler) may decide first; an escalation returns a LoopEscalated
// error (IsEscalated). The payloads and names are in package protocol.
//
// State is rebuilt by replay; the Options in force are pinned per execution,
// so a redeploy never changes an in-flight history, and continue-as-new
// carries the state. The detectors, their defaults and limits:
// docs/configuration.md and docs/detection.md in the repository; the
// protocol: docs/protocol.md.
package interceptor
