// Package typescript runs a TypeScript agent worker (the Temporal
// TypeScript SDK from npm, @temporalio/worker) for tests of the guard that
// judge workflows from outside, such as the watcher's: only tests import
// it.
//
// The agent, in directory agent, is the Go sample workflows.ParallelToolAgent
// ported line for line: the workflow type workflows.WorkflowParallelTool
// taking a workflows.ParallelInput, and the activity types of
// activities.ParallelTools (ModelTurn, WebSearch, FetchPage) with their
// fake model and tools (no network). Its scenarios are the Go ones:
// activities.ParallelStuck loops with the same parallel tool calls every
// turn until MaxTurns, activities.ParallelProgressing asks something new
// every turn and answers after activities.ParallelProgressTurns turns, and
// activities.ParallelHeeds changes approach once the workflow receives a
// loop.warning signal (a protocol.Warning, or a protocol.Notice
// holding one). The arguments and results are the bytes the Go sample
// writes, so the guard's detectors read a TypeScript run as they read a
// Go run of the same scenario. The workflow carries no guard.
//
// A test starts the worker against a server and starts workflows on its
// task queue with the Go client:
//
//	w, err := typescript.Start(ctx, t, srv.FrontendHostPort(), srv.Namespace(), "ts-agents")
//	if err != nil {
//		t.Fatal(err)
//	}
//	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ts-1", TaskQueue: w.TaskQueue},
//		workflows.WorkflowParallelTool, workflows.ParallelInput{Scenario: activities.ParallelStuck, Width: 3, MaxTurns: 200})
//
// Workflow Pause and the TypeScript SDK: when a pause finds a workflow
// task scheduled but not yet started, the server (v1.32.1) fails that task
// (WorkflowTaskFailed, cause WorkflowPauseRequestedBeforeTaskStarted, with
// no WorkflowTaskStarted before it). The TypeScript SDK cannot replay that
// history: after the unpause it fails every workflow task of the run
// ("WorkflowTaskMachine in state Scheduled says the transition is
// invalid"), and the run stays stuck until it is reset to the last
// completed workflow task before the failed one. The Go SDK replays it.
// TestPauseBeforeWorkflowTaskStarted shows both. A pause lands on such a
// task whenever no worker polls, or in the instant between a task's
// scheduling and its start, which a busy parallel loop makes frequent: a
// test that needs a paused TypeScript run to go on pauses it at a quiet
// moment, as TestTypeScriptAgentUnderWorkflowPause does (a long
// ModelLatency, no workflow task pending).
//
// Start skips the test (t.Skip, with the reason) where Node.js or npm is
// missing or too old for the SDK, unless the environment sets
// LOOPGUARD_REQUIRE_TS_E2E=1, as CI does where node is new enough: then
// it fails the test. The
// first Start on a machine runs npm ci into a cache directory keyed by the
// hash of agent/package-lock.json ($XDG_CACHE_HOME/loopguard, or
// ~/.cache/loopguard), then compiles the TypeScript and bundles the
// workflow code into a directory keyed by the hash of the sources; later
// Starts reuse both. The worker process is stopped when the test ends.
package typescript
