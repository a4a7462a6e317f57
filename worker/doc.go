// Command loopguard-worker runs a Temporal worker with the loopguard
// interceptor installed and loopguard's sample agent loops registered
// (package workflows), so that runaway loops are halted and paused for a
// human.
//
//	go run ./worker                          # embedded server + Web UI, state in ./loopguard-data
//	go run ./worker --demo                   # also run every sample scenario and show what the guard did
//	go run ./worker --demo --demo-exit --ephemeral --port 0 --ui-port 0   # one-shot, for CI
//	TEMPORAL_ADDRESS=temporal:7233 go run ./worker                        # an external server
//
// # Server
//
// The worker dials an external server when the temporal CLI would find one
// configured: --address, TEMPORAL_ADDRESS, TEMPORAL_PROFILE,
// TEMPORAL_CONFIG_FILE, or a "default" profile in the CLI's default config
// file (temporalio/temporal.toml in the user's config directory), the first
// of these that is set deciding. When none is, the worker starts an embedded Temporal server and its Web UI in the same
// process (package worker/devserver), listening on 127.0.0.1 only, with the
// guard's Keyword search attribute LoopGuardState registered. Its state
// lives in --data-dir (SQLite), so workflows survive a restart, and so do
// the workflows earlier demos left paused (the demo says how many);
// --ephemeral keeps it in memory. The worker prints where the frontend and the UI are.
//
// Otherwise it dials the external server with the Temporal SDK's
// environment configuration (go.temporal.io/sdk/contrib/envconfig, the
// variables and config file the temporal CLI reads), checks within
// --connect-timeout that it answers and has the namespace, and fails with
// one line if not:
//
//	loopguard-worker: dial temporal at 127.0.0.1:1: connection refused
//
// # The guard
//
// The guard is interceptor.New with workflows.GuardOptions (the samples'
// node rules, default thresholds), overlaid with the --policy file, then
// with --on-halt and --pause-timeout. Its SupervisorWorkflowID is the
// Supervisor workflow (--supervisor-id, default "loopguard-supervisor"),
// which the worker starts unless it is running; query "halted" on it
// returns a log of the newest halts signalled to it, answered or not (not
// a list of the workflows halted now: the search attribute's query is). Its SearchAttribute is LoopGuardState with the embedded
// server; on an external server it is --search-attribute (which must be a
// registered Keyword) or, by default, LoopGuardState when the namespace has
// it registered.
//
// A policy file is a JSON object; every field is optional and overrides
// the samples' value (a node under "nodes" is merged field by field);
// durations are Go duration strings; unknown fields are rejected with their
// path, as are invalid values:
//
//	{
//	  "maxCycleIterations": 6,
//	  "maxNodeRuntime": "10m",
//	  "repeatThreshold": 3,
//	  "onHalt": "pause",
//	  "pauseTimeout": "24h",
//	  "onPauseTimeout": "escalate",
//	  "nodes": {"Verify": {"maxCalls": 12, "metricField": "failing"}},
//	  "graph": [{"from": "Code", "to": "Verify"}]
//	}
//
// The format is interceptor.ParsePolicy's: the interceptor.Options fields
// with a lower-case first letter ("workflows", "maxCycleIterations",
// "nodes" with "maxCalls", "exempt", "metricField"..., "graph" with "from"
// and "to"). The worker sets supervisorWorkflowID and searchAttribute from
// its flags and keeps the protocol's signal, query and update names (the
// commands it prints use them): a file that sets one is refused.
//
// # Demo
//
// --demo starts one workflow per scenario of workflows.Scenarios, with ids
// "demo-<scenario>-<random suffix>", shows "waiting: 7/10 settled (3
// halted)" (in place on a terminal) while it polls each workflow's
// loop.status query, and once every workflow has completed or halted (or
// --demo-timeout passed) prints a table: scenario, workflow id, outcome
// (completed, halted: <reason>, escalated: <reason>, ...), iterations
// (the loop's own count, or "loop n/m" where the guard halted it), and
// whether that is what the scenario expects (Want/WantReason; anything else
// is marked MISMATCH). Under each halted workflow come the halt's reason,
// the temporal CLI commands that resume or escalate it (and, under the
// first one only, the tctl ones)
// (interceptor.OperatorCommands, with --address when the server is not on
// localhost:7233) and its page in the Web UI. The worker then keeps
// running and prints a line whenever a demo workflow is resumed, halts
// again or closes. --demo-exit exits after the table instead, with status
// 1 if any outcome did not match.
//
// Logs (zap; --log-level, --log-format) go to stderr, everything meant for
// a human to stdout. While the demo waits, logging is off unless
// --log-level is given (the scenarios' scripted agent failures would be
// logged as errors); it resumes at the chosen level after the table. SIGINT or SIGTERM stops the worker, then
// the embedded server; a second signal kills the process.
//
// # Flags
//
//	--address host:port     external Temporal frontend (default $TEMPORAL_ADDRESS, else the CLI profile's; none: embedded server)
//	--namespace name        namespace (default $TEMPORAL_NAMESPACE, else "default"; created by the embedded server)
//	--connect-timeout 10s   how long an external server has to answer at startup
//	--data-dir dir          embedded server: SQLite directory (default "loopguard-data")
//	--ephemeral             embedded server: in memory, lost on exit
//	--port 7233             embedded server: frontend gRPC port on 127.0.0.1 (0: a free port)
//	--ui-port 8233          embedded server: Web UI port on 127.0.0.1 (0: a free port)
//	--http-port 0           embedded server: frontend HTTP API port (0: a free port)
//	--no-ui                 embedded server: no Web UI
//	--server-log-level warn embedded server: level of the Temporal server's logs (debug, info, warn, error, off)
//	--ui-url url            Web UI base URL for the demo's links (default: the embedded UI; none for an external server)
//	--task-queue name       task queue (default "loopguard-demo", workflows.TaskQueue)
//	--policy file.json      guard options (interceptor.ParsePolicy's format) overlaid on workflows.GuardOptions
//	--on-halt action        pause (default), fail or observe; overrides the policy file
//	--pause-timeout d       end unanswered pauses after d (policy's onPauseTimeout, default escalate)
//	--search-attribute name the guard's Keyword search attribute; "none" disables it
//	--supervisor-id id      the Supervisor workflow's id (default "loopguard-supervisor"; "" for none)
//	--metrics-addr host:port serve Prometheus metrics at /metrics (default: off)
//	--log-level level       debug, info (default), warn or error
//	--log-format format     console (default) or json
//	--demo                  run the sample scenarios and print the table
//	--demo-exit             with --demo: exit after the table (status 1 on a mismatch)
//	--demo-timeout 2m       with --demo: how long to wait for the workflows to settle
//
// The embedded-server flags cannot be combined with an external server.
//
// # Metrics
//
// With --metrics-addr the worker serves the Prometheus text exposition at
// /metrics: the SDK's temporal_* metrics and the guard's loopguard_* ones
// (interceptor/metrics.go), through go.temporal.io/sdk/contrib/tally and
// tally's Prometheus reporter, named as OpenMetrics wants (counters end in
// _total, timers are histograms in seconds). The worker also sets
// loopguard_paused_workflows and loopguard_oldest_pause_seconds from
// visibility (LoopGuardState STARTS_WITH "halted") every 15 s, when the
// guard's search attribute is in use. deploy/ has the dashboard and alerts.
//
// # Environment
//
// For an external server, the variables of the SDK's envconfig (the same as
// the temporal CLI's): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH,
// TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_CLIENT_CERT_DATA,
// TEMPORAL_TLS_CLIENT_KEY_DATA, TEMPORAL_TLS_SERVER_CA_CERT_PATH,
// TEMPORAL_TLS_SERVER_CA_CERT_DATA, TEMPORAL_TLS_SERVER_NAME,
// TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, TEMPORAL_CLIENT_AUTHORITY,
// TEMPORAL_GRPC_META_<header>,
// and TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE for a TOML profile (default
// file: temporalio/temporal.toml in the user's config directory). As in
// the temporal CLI, a flag wins over a variable, which wins over the
// profile's value in the file. With the embedded server only
// TEMPORAL_NAMESPACE is read.
//
// # Exit status
//
// 0 after a clean shutdown (or --demo-exit with every outcome as
// expected), 1 on a runtime error (server unreachable, port in use, a
// demo mismatch), 2 on invalid flags or an invalid policy file. Errors are
// one line on stderr, prefixed "loopguard-worker: ". Through go run, these
// are the program's status, which go run prints ("exit status 2") before
// exiting 1 itself, whatever the program's status: a script that tells
// them apart runs a built binary (go build ./worker).
package main
