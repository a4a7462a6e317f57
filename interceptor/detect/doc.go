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
// # What counts as the same
//
// Results are read as a person reads them ([Extract]): key order and
// whitespace do not matter, JSON inside strings is read as JSON, arrays of
// strings are sets; noise is masked only with evidence of being noise (its
// shape: timestamps, ids, durations; its name: token usage, event ids; or
// learnt: a numeric field that turns back and forth, or rises by the same
// stride at every step, is a clock, not progress). A model response that
// calls tools is its tool calls: the words beside them are commentary, and
// provider ids, usage and metadata are measurements. See docs/detection.md.
//
// # The loop
//
// The detectors read one sequence of the execution's steps. A loop is a
// stretch of it that repeats, call for call and result for result, with a
// period of up to [MaxLoopPeriod] steps. Outside input ([State.Input]: a
// signal, an update, a human's answer) breaks a repetition, and so does a
// reset ([State.Resume], a warning): the loop must repeat a whole window
// after it before it trips again. A node polled alone with a durable timer
// ([State.Timer]) before each poll is waiting, not looping; budgets still
// bound it.
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
// In priority order:
//
//	repeated_error         (repeated_error) a node failed with the same error ErrorRepeatThreshold times in a row
//	identical_output       (stalled)        a period in which every node calls once repeated RepeatThreshold times
//	                                         with the same results (coder→verifier; a model turn and its tool call)
//	output_oscillation     (oscillating)    a period in which a node calls twice or more repeated OscillationPeriods
//	                                         times (A/B/A/B)
//	transition_oscillation (oscillating)    a round of three or more nodes repeated RepeatThreshold times showing
//	                                         only results seen before
//	unchanged_progress     (stalled)        the declared progress value is the same in the last StallIterations steps
//	no_improvement         (stalled)        the declared metric has not beaten its best for NoImproveIterations steps
//
// The first trip becomes pending: the next Begin of a non-exempt node
// returns it, so the loop halts before its next call. [State.Stop] makes a
// user_stop trip pending. [State.Resume] ends a halt: it resets the tripped
// counter or window, or, with an [Extension] that raises the tripped limit,
// keeps the counter and raises the limit.
//
// Exempt nodes (pollers, heartbeats) are counted in total calls only: they
// make no steps or transitions and never halt, but a pending user_stop
// holds them too.
//
// # Defaults ([DefaultPolicy])
//
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
// [Extract] turns a result payload into an [Observation]: the hash of its
// canonical reading, the same without commentary and measurements (the
// action), the numeric fields a clock may hide in, the progress fields,
// the metric and the cost. [ExtractError] reads an error the same way;
// [ErrorSignature] normalises it for people, so that "timeout after 31s
// (attempt 2)" and "timeout after 45s (attempt 3)" read alike.
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
