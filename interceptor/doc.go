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
// (or as a plugin: interceptor.NewPlugin). Every activity, local activity
// and child workflow call of the named workflow types is then a guarded
// call; with Workflows empty, of every workflow on that worker. Options can
// also come from a policy file: see ParsePolicy. A node is the activity or child workflow type (Options.NodeName can
// refine it). The guard keeps, in workflow memory, per-node step counts and
// histories, the transition graph with its strongly connected components
// (cycles, each with a stable cycleId and an iteration count taken at the
// edge that closes it), and budgets. It reads each result lazily, at the
// next guarded call, which is where a halt takes effect anyway: the normal
// path adds no events to the history.
//
// # Detectors and defaults
//
//	Options field            default  halts with        what trips it
//	MaxCallsPerNode          10       budget_exceeded   steps of one node (fan-out counts once)
//	MaxNodeRuntime           off      budget_exceeded   workflow time spent in one node
//	MaxTotalCalls            1000     budget_exceeded   guarded calls in the execution
//	MaxCost                  off      budget_exceeded   summed cost (NodeOptions.CostField)
//	MaxCycleIterations       8        budget_exceeded   iterations of one cycle ("Loop 8/8")
//	MaxCycleRuntime          off      budget_exceeded   workflow time since the cycle started
//	MaxCycleCost             off      budget_exceeded   summed cost of the cycle's nodes
//	MaxEdgeWithoutProgress   5        stalled           A→B taken again without progress at B
//	RepeatThreshold          3        stalled           a period of calls came round with the same results
//	StallIterations          3        stalled           unchanged NodeOptions.ProgressFields
//	NoImproveIterations      3        stalled           NodeOptions.MetricField not improving
//	ErrorRepeatThreshold     3        repeated_error    identical error signatures in a row
//	OscillationPeriods       2        oscillating       periods of A/B/A/B (up to 48 calls) with the same results
//	MaxOscillationPeriod     3        oscillating       sizes the history OscillationPeriods needs; 0: off
//	Window                   8        -                 history kept per node; evidence length
//
// Progress at a node (a new output, a changed progress value, a better
// metric) resets the edge counters into it. The repetition detectors judge
// the sequence of calls (clocks are not progress, and a model response
// that calls tools is read as its tool calls): a loop is a stretch of
// calls that repeats, call for call and result for result, with a period
// of up to 48 calls; noise
// (timestamps, epochs, provider ids, durations, attempt counters, fields
// named like measurements) is masked only with evidence, and counts,
// scores and entity ids are information; a signal or update the workflow
// handles is outside input, which no repetition spans.
// Options.IgnoreFields and NodeOptions.IgnoreFields remove more. Options.Grain
// (GrainToolCall) sizes the budgets for LLM↔tool loops. Options.Warnings
// warns a loop before it halts, a resume may carry
// guidance for the agent, the calls carry both in a notice header
// (NoticeFrom, WorkflowNotice), with Options.CountRepeats also how often
// the same call was made before, and SetHaltHandler runs workflow code at a
// halt before a human is asked. A node polled alone with a durable timer between polls is waiting,
// not looping. Exempt nodes (pollers) never trip a detector, though a
// human's halt stops them too. The rules and their limits are in the
// repository's docs/detection.md.
//
// # Halting
//
// A halt builds a HaltEvent (cycleId, haltReason, evidence,
// suggestedActions, node, iteration, workflow time), raises the loop.halted
// signal into the workflow's own history (through a local activity, since
// a workflow cannot signal itself) and to Options.SupervisorWorkflowID,
// upserts the memo entry "loopguard" (and Options.SearchAttribute, when
// named), and shows a markdown summary with copy-pastable commands as the
// workflow's current details in the Temporal UI. Then, with OnHalt: pause
// (the default), the guarded call that would continue the loop blocks
// until a human answers:
//
//	signal / update  payload                                        effect
//	resume           {"reason":"..","by":"..","extend":{"maxCycleIterations":4}}  the call proceeds; the tripped counter is reset, or its limit raised by extend
//	escalate         {"reason":"..","by":".."}                       the call returns a LoopEscalated error (see IsEscalated)
//	halt             {"reason":"..","by":".."}                       stop at the next guarded call (user_stop), even in observe mode
//	loop.status      (query)                                        Status: state, halt, cycles, nodes, last decision and rejection
//
// With Options.OperatorKeys set, a resume, escalate or halt is taken only
// as a SignedAnswer signed by one of the operators' Ed25519 keys for that
// execution, halt and action, within its window of workflow time
// (SignAnswer; the worker's answer command): the agent cannot answer its
// own halt. Refused answers are listed in Status.Refused.
//
// The resume and escalate updates answer synchronously; their validators
// reject input when nothing is halted or the payload is malformed. Rejected
// signals are recorded in Status.LastRejected and logged. OnHalt: fail
// escalates at once; OnHalt: observe records, signals, logs and counts halts
// without blocking (a shadow mode for tuning thresholds).
//
// One halt at a time holds the whole workflow: calls from parallel branches
// (workflow.Go) wait for it from the trip on, and its decision releases them
// all (an escalation escalates every waiting call). Cancelling a paused
// workflow makes the paused call return the cancellation, not an
// escalation. A resume, escalate or halt signal the guard has nothing to do
// with (nothing halted, say) goes on to the workflow, and the workflow's own
// update handlers of the guard's names win over the guard's; see
// docs/protocol.md for the rules.
//
// # Determinism
//
// All state is workflow memory rebuilt by replay. The Options in force are
// pinned when an execution starts (a version marker and a side effect, one
// each per execution), so redeploying a worker with other Options never
// changes the commands of an in-flight history, and executions started
// before the guard was installed are left alone. Continue-as-new carries the
// guard's state and pinned Options in a header: an agent cannot escape its
// budget by continuing as new. Logs go through the SDK's replay-safe logger
// and metrics through the workflow metrics handler (MetricSeries lists
// the series a Prometheus scrape holds, e.g. loopguard_halts_total).
package interceptor
