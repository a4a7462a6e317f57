// Package detect holds loopguard's loop detectors: plain, deterministic Go
// over plain data. It imports no Temporal package; the interceptor feeds it
// every guarded call of a workflow execution, on the workflow clock, and
// acts on the trips it returns.
//
// # Model
//
// A node is what a guarded call runs: an activity type, a child workflow
// type, or a finer name chosen by the interceptor (a tool, an agent role).
// [State.Begin] is called before each call and [State.End] after it. A step
// is one visit of a node: concurrent calls of a node that already has calls
// in flight join its open step (fan-out), so parallel shards count once. A
// new step records the transition from the node of the previous step; the
// transitions (plus [Policy.Graph]'s declared edges) form the graph whose
// strongly connected components (Tarjan) are the cycles: an SCC of two or
// more nodes, or a node with a self-loop. A cycle's id is stable ("cyc-" and
// 12 hex digits of a hash of its sorted nodes and edges), its anchor is the
// member visited first, and an iteration is counted each time an edge from
// the cycle into the anchor is taken: coder, verify, coder is iteration 2 of
// the cycle coder→verify ("Loop 2/8").
//
// Progress at a node's step is a new declared progress value, or a declared
// metric strictly better than the node's best so far, or, when neither is
// declared, an output not among the node's last Window outputs. Failed steps
// are never progress; empty results carry no signal. Progress at B resets
// the counters of the edges into B.
//
// # Generations
//
// [Policy.Detection] selects the rules. The zero value, [DetectionLegacy],
// is the rule set of guard versions 1 to 3, described below, kept bit for
// bit for the histories they recorded. [DefaultPolicy] selects
// [DetectionV5] (guard version 13 on): [DetectionV4]'s rules, and model
// responses read as a person reads them (a response that calls tools is
// its tool calls; provider ids, usage and provider metadata are noise;
// commentary is set aside inside arrays too). [DetectionV4] (guard
// versions 10 to 12): [DetectionV3]'s rules, results read
// in one pass, and a clock is not progress (token usage, an event
// stream's counters, step counters, progress meters, a numeric field
// another node's results interleave). [DetectionV3] (guard versions 6 to
// 9): one sequence of the execution's
// steps, a loop being a stretch of it that repeats result for result with
// a period of up to [MaxLoopPeriod] steps; noise masked only with evidence
// (its shape, its name, or learnt because it turns back and forth);
// outside input ([State.Input]) breaks repetition; see docs/detection.md.
// [DetectionV2], which executions of guard versions 4 and 5 keep, changed
// three things:
//
//   - "the same" as a person means it: results are read canonically (key
//     order, whitespace, JSON inside strings, string arrays as sets,
//     timestamps, ids, long digit runs and durations masked in strings);
//   - a node's repetition (identical_output, repeated_error,
//     output_oscillation) trips only when the rest of its loop repeated too:
//     every other node that stepped since the repetition began brought
//     nothing new. Under that rule only, commentary fields, measurements,
//     learnt volatile numeric fields and attempt counters are left out,
//     and near-duplicate long text (SimHash) is no news;
//   - waiting is not looping: a node polled alone with a durable timer
//     ([State.Timer]) before each poll does not trip; budgets still bound it.
//
// # Budgets (reason budget_exceeded), checked by Begin before a call
//
// Every budget is a row of the budget table ([Budgets]): the limits, what
// an [Extension] raises, what [State.Resume] resets and the halt reason all
// come from it.
//
//	node_calls       a node's steps (MaxCallsPerNode, or NodePolicy.MaxCalls)
//	node_runtime     workflow time spent in a node's steps (MaxNodeRuntime, NodePolicy.MaxRuntime)
//	total_calls      every guarded call, fan-out and exempt nodes included (MaxTotalCalls)
//	total_cost       cost read by Rules.CostField, already over MaxCost
//	cycle_iterations taking an anchor edge would exceed MaxCycleIterations
//	cycle_runtime    workflow time since the cycle's anchor first ran (MaxCycleRuntime)
//	cycle_cost       cost of the cycle's steps since it formed (MaxCycleCost)
//
// and, with reason stalled, edge_without_progress: taking A→B would make
// MaxEdgeWithoutProgress+1 times without progress at B (the per-edge
// counters of a planner's circuit breaker).
//
// # Stall and oscillation detectors, run by End on each finalised step
//
// In priority order, each over the node's own bounded history:
//
//	repeated_error         (repeated_error) the last ErrorRepeatThreshold steps failed with the same ErrorSignature
//	identical_output       (stalled)        the last RepeatThreshold steps returned the same output
//	output_oscillation     (oscillating)    the last OscillationPeriods×p outputs repeat with period p in
//	                                         2..MaxOscillationPeriod (A/B/A/B, A/B/C/A/B/C)
//	unchanged_progress     (stalled)        the declared progress value is the same in the last StallIterations steps
//	no_improvement         (stalled)        the declared metric has not beaten its best for NoImproveIterations steps
//	transition_oscillation (oscillating)    the last OscillationPeriods×p transitions repeat with period p and
//	                                         none of the steps they led to made progress
//
// The first trip becomes pending: the next Begin of a non-exempt node
// returns it, so the loop halts before its next call. [State.Stop] makes a
// user_stop trip pending. [State.Resume] ends a halt: it resets the tripped
// counter or window, or, with an [Extension] that raises the tripped limit,
// keeps the counter and raises the limit.
//
// Exempt nodes (pollers, heartbeats) are counted in total calls only: they
// make no steps or transitions and never halt.
//
// # Defaults ([DefaultPolicy])
//
//	Detection               DetectionV2
//	MaxCallsPerNode         10
//	MaxNodeRuntime          0 (off)
//	MaxTotalCalls           1000
//	MaxCost                 0 (off)
//	MaxCycleIterations      8
//	MaxCycleRuntime         0 (off)
//	MaxCycleCost            0 (off)
//	MaxEdgeWithoutProgress  5
//	RepeatThreshold         3
//	ErrorRepeatThreshold    3
//	StallIterations         3
//	NoImproveIterations     3
//	OscillationPeriods      2
//	MaxOscillationPeriod    3
//	Window                  8
//	MaxNodes                64
//
// A zero or negative limit disables its rule; a repetition threshold below
// 2 disables its detector; Window is raised to what the enabled detectors
// need (at most 256). MaxNodes 0 means the default.
//
// # Results and errors
//
// [Extract] turns a result payload into an [Observation]: an FNV-64a hash of
// the payload (JSON strings with whitespace collapsed; with rules, the JSON
// re-encoded canonically without the ignored fields), the progress fields,
// the metric and the cost. [ErrorSignature] normalises an error so that
// "timeout after 31s (attempt 2)" and "timeout after 45s (attempt 3)" match.
//
// # Bounds and determinism
//
// Histories are rings of Window entries, at most MaxNodes distinct nodes
// are tracked (later names fold into [OverflowNode]; nodes the policy names
// never fold), edges are bounded by the nodes, the transition window by
// Window: the state does not grow with the number of calls ([State.Size]).
// Begin and End do not allocate on the path without a trip. The state is
// carried across continue-as-new with [State.MarshalJSON] and [Restore].
package detect
