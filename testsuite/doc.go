// Package testsuite tests Temporal workflows guarded by loopguard (package
// interceptor): unit tests in Temporal's test environment, replay tests of
// recorded histories in CI, and integration tests against an embedded
// Temporal server.
//
// It is in the loopguard module; no version is published yet, so add the
// module as the README says: a require of it and a replace to a clone
// (`go get` cannot fetch it):
//
//	go mod edit -require=github.com/loopguard/loopguard@v0.0.0 -replace=github.com/loopguard/loopguard=/src/loopguard
//
// # Unit tests: Run
//
// Run executes one workflow in the SDK's TestWorkflowEnvironment with the
// guard installed, plays the human when the guard halts it, and reports
// what happened:
//
//	func TestAgentLoop(t *testing.T) {
//		rep := testsuite.Run(t, testsuite.RunOptions{
//			Guard:    interceptor.Options{MaxCycleIterations: 6},
//			Register: func(r worker.Registry) { r.RegisterWorkflow(MyLoop); r.RegisterActivity(&MyAgents{}) },
//			Answer:   testsuite.Answers(testsuite.Resume("try once more"), testsuite.Escalate("stuck")),
//		}, MyLoop, MyInput{...})
//		require.NoError(t, rep.Err)
//		require.Equal(t, []protocol.HaltReason{protocol.ReasonStalled, protocol.ReasonStalled}, rep.Reasons())
//		var out MyResult
//		require.NoError(t, rep.Result(&out))
//	}
//
// The Report lists each halt (reason, detector, node, iteration, evidence),
// of the workflow or of its child workflows, the answers sent (as signals,
// or as updates with RunOptions.UseUpdates), and the guard's final status. The environment skips workflow time, so a
// loop paused for a human costs nothing: Run notices a halt through the
// guard's loop.status query and answers it RunOptions.DecideAfter later in
// workflow time. In the test environment the guard's loop.halted signal
// cannot be delivered (there is no client); that is expected, and halts are
// read from the status query instead. Mock activities with RunOptions.Setup
// (env.OnActivity) like in any SDK test.
//
// To test that an agent heeds the guard, give it warnings and check what
// it was told and what it did next: Report.Notices lists every notice an
// activity received (interceptor.NoticeFrom), FinalStatus.Warnings counts
// the warnings, each halt lists the ones its loop ignored, and
// ResumeWithGuidance answers a halt with guidance for the agent:
//
//	rep := testsuite.Run(t, testsuite.RunOptions{
//		Guard:    interceptor.Options{Warnings: 1},
//		Register: register,
//	}, MyLoop, MyInput{...})
//	require.Empty(t, rep.Halts, "the agent changed approach when warned")
//	require.Equal(t, 1, rep.FinalStatus.Warnings)
//	require.NotNil(t, rep.Notices[0].Notice.Warning)
//
// # Replay tests in CI: ReplayFile
//
// Every change to workflow code, and every guard upgrade, should replay real
// histories. Export some from your cluster, with the CLI
//
//	temporal workflow show --workflow-id coder-42 --output json > testdata/histories/coder-42.json
//
// or from code with ExportHistoryFile, commit them, and replay them all with
// the guard installed:
//
//	func TestReplayHistories(t *testing.T) {
//		testsuite.RequireReplayDir(t, "testdata/histories", testsuite.ReplayOptions{
//			Guard:     guardOptions(), // what the workers run; any options replay
//			Workflows: []any{MyLoop},
//		})
//	}
//
// A guarded execution replays with the options pinned in its own history,
// whatever ReplayOptions.Guard says, and a history recorded before the guard
// was installed replays with it (the guard leaves such executions alone). A
// history the guard took part in does not replay without it: keep the guard
// on every worker and replayer once installed. A failure is a *ReplayError
// naming the file, the workflow type and id, and the usual causes.
// ReplayFile replays under the recorded workflow id (the SDK's own file
// replayer uses "ReplayId", which breaks workflows that derive ids, such as
// child workflow ids, from their own).
//
// # Integration tests: StartWorker, WaitStatus
//
// StartWorker, QueryStatus and WaitStatus drive guarded workflows on any
// Temporal server a test can reach: the SDK's dev server, a test cluster,
// or the embedded server of the worker module's devtest package
// (github.com/loopguard/loopguard/worker/devserver/devtest), which is kept
// out of this package so that importing testsuite never links or downloads
// the Temporal server:
//
//	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
//	c := devtest.NewClient(t, srv)
//	testsuite.StartWorker(t, c, "agents", testsuite.WorkerOptions{Guard: &opts, Register: register})
//	run, _ := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "loop-1", TaskQueue: "agents"}, MyLoop, in)
//	s, err := testsuite.WaitStatus(ctx, c, "loop-1", testsuite.Halted(1))
//	_ = c.SignalWorkflow(ctx, "loop-1", "", "resume", protocol.ResumeRequest{By: "test"})
//
// # This package's own tests
//
// Beyond the examples, the tests of this package replay the recorded
// histories in testdata/histories (one per halt reason, resumes and
// escalations by signal and update, continue-as-new, unguarded histories,
// and a 1,000-call workload; see manifest.json there and the worker
// module's cmd/record-fixtures, which re-records them) and benchmark replay
// with and without the guard (BenchmarkReplay1000). The production-safety
// tests on the embedded server (config drift, adoption of unguarded
// executions, worker loss, server restart, load, hostile input, the
// official temporal CLI) live in the worker module's e2e package.
package testsuite
