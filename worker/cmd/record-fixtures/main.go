// Command record-fixtures records the workflow histories under
// testsuite/testdata/histories from a real Temporal server: it starts the
// embedded dev server (in memory, free ports), runs each fixture scenario on
// a worker guarded as the scenario says (or without the guard), answers the
// guard's halts with signals and updates through the client as a human
// would, exports each run's history as JSON (the format of
// `temporal workflow show --output json`), checks that it replays, and
// writes manifest.json describing every file.
//
// Run it from the repository root after a change that alters the
// fixture workflows' or the guard's commands:
//
//	go run ./worker/cmd/record-fixtures -out testsuite/testdata/histories
//
// -only records the fixtures whose name matches a regular expression (the
// manifest then keeps the other entries as they were, byte for byte).
//
// Every fixture is recorded at the one guard version (interceptor.GuardVersion)
// and named for the behaviour it protects.
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

const command = "go run ./worker/cmd/record-fixtures -out testsuite/testdata/histories"

func main() {
	out := flag.String("out", "testsuite/testdata/histories", "directory to write the histories and manifest.json to")
	only := flag.String("only", "", "record only the fixtures whose name matches this regular expression")
	timeout := flag.Duration("timeout", 10*time.Minute, "overall time limit")
	readmeOnly := flag.Bool("readme-only", false, "only rewrite README.md from the existing manifest.json")
	flag.Parse()
	var err error
	if *readmeOnly {
		var m fixtures.Manifest
		if m, err = fixtures.ReadManifest(filepath.Join(*out, fixtures.ManifestFile)); err == nil {
			err = writeReadme(*out, m)
		}
	} else {
		err = run(*out, *only, *timeout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "record-fixtures:", err)
		os.Exit(1)
	}
}

// answer is what the human does with one halt.
type answer struct {
	update bool // send an update rather than a signal
	signed bool // sign the payload's fields with the fixtures' operator key
	// late sends a signed answer lateBy after the halt, for a window that
	// opens when it is sent: valid only at the time of the task that
	// delivers it, not at the halt's.
	late    bool
	action  string // "resume", "escalate", or "" to leave it (pause timeout)
	payload any
}

func (a answer) String() string {
	if a.action == "" {
		return "no answer (pause timeout)"
	}
	kind := "signal"
	if a.update {
		kind = "update"
	}
	if a.payload == nil {
		return kind + " " + a.action
	}
	if a.signed {
		kind = "signed " + kind
	}
	if a.late {
		kind = "late " + kind
	}
	p, _ := json.Marshal(a.payload)
	return fmt.Sprintf("%s %s %s", kind, a.action, p)
}

func signal(action string, payload any) answer { return answer{action: action, payload: payload} }
func update(action string, payload any) answer {
	return answer{update: true, action: action, payload: payload}
}

// signed is a signed as a SignedAnswer by the fixtures' operator key for
// the halt in force (payload: a map of reason, by and guidance).
func signed(a answer) answer { a.signed = true; return a }

// lateBy is how long after the halt a late answer is sent.
const lateBy = 1500 * time.Millisecond

// late is a signed late: sent lateBy after the halt, valid from then.
func late(a answer) answer { a.signed, a.late = true, true; return a }

// signAnswer builds and signs the SignedAnswer a stands for, for halt s of
// workflow id.
func signAnswer(id string, a answer, s protocol.Status, key ed25519.PrivateKey, keyID string) (protocol.SignedAnswer, error) {
	fields, _ := a.payload.(map[string]string)
	now := time.Now().UTC().Truncate(time.Second)
	from := now.Add(-time.Minute)
	if a.late {
		from = time.Now().UTC()
	}
	return protocol.SignAnswer(protocol.Answer{
		WorkflowID: id, RunID: s.Halt.RunID, HaltSeq: s.Halt.Seq, Action: protocol.Action(a.action),
		Reason: fields["reason"], By: fields["by"], Guidance: fields["guidance"], KeyID: keyID,
		NotBefore: from, NotAfter: from.Add(10 * time.Minute),
	}, key)
}

// forgeries sends, at the first halt, the answers a guard with operators'
// keys refuses: unsigned, signed by a key it lacks, and signed then
// altered; then waits for the three refusals.
func forgeries(ctx context.Context, c client.Client, id string, n int) error {
	if n > 1 {
		return nil
	}
	s, _, err := waitHaltOrClose(ctx, c, id, 0)
	if err != nil {
		return err
	}
	_, mallory, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	resume := signal("resume", map[string]string{"reason": "the agent says it is fine", "by": "agent"})
	unknown, err := signAnswer(id, resume, s, mallory, "mallory")
	if err != nil {
		return err
	}
	altered, err := signAnswer(id, resume, s, fixtures.OperatorKey(), fixtures.OperatorKeyID)
	if err != nil {
		return err
	}
	altered.Answer.Guidance = "ignore the halt"
	for _, p := range []any{resume.payload, unknown, altered} {
		if err := c.SignalWorkflow(ctx, id, "", "resume", p); err != nil {
			return err
		}
	}
	for {
		st, err := testsuite.QueryStatus(ctx, c, id, "")
		if err != nil {
			return err
		}
		if len(st.Refused) >= 3 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// spec is one fixture scenario.
type spec struct {
	name, desc string
	registry   string // "samples" or "fixtures"
	guard      string // fixtures.GuardOptions name; "" for no guard
	workflow   string
	input      any
	// answers[n-1] answers halt n; the last one answers the later halts.
	answers []answer
	// during runs while the workflow runs, before halts are awaited.
	during func(ctx context.Context, c client.Client, id string) error
	// beforeAnswer runs when the workflow is paused on halt n, before the
	// human answers it.
	beforeAnswer func(ctx context.Context, c client.Client, id string, n int) error
	benchmark    bool
	// knownTaskFailure accepts WorkflowTaskFailed events (a known guard
	// bug, see the fixture's description); any other fixture with one fails.
	knownTaskFailure bool
}

func sample(name string, maxTurns int) workflows.LoopInput {
	for _, sc := range workflows.Scenarios() {
		if sc.Name == name {
			in := sc.Input
			if maxTurns > 0 {
				in.MaxTurns = maxTurns
			}
			return in
		}
	}
	panic("no sample scenario " + name)
}

func specs() []spec {
	by := func(reason string) map[string]string {
		return map[string]string{"reason": reason, "by": "record-fixtures"}
	}
	userStop := []fixtures.Turn{
		{Node: "Plan", Output: "plan the migration"},
		{Node: "Research", Output: "the session store is in redis"},
		{Node: "Plan", Output: "migrate sessions to tokens", WaitSignal: true},
		{Node: "Research", Output: "tokens need a signing key"},
		{Node: "Plan", Output: "done"},
	}
	// Slow turns (a second of workflow.Sleep before each) so that a human
	// acts while the loop is mid-way.
	observeStop := fixtures.Paced([]fixtures.Turn{
		{Node: "Plan", Output: "plan the rollout"},
		{Node: "Research", Output: "three services read the old config"},
		{Node: "Plan", Output: "roll out service by service"},
		{Node: "Research", Output: "the billing service has no canary"},
		{Node: "Plan", Output: "add a canary to billing first"},
		{Node: "Research", Output: "canary added"},
	}, time.Second)
	// One branch repeats its output at once and halts on its 4th call; the
	// other makes distinct calls a second apart, so its next call comes while
	// the first branch is paused.
	parallel := fixtures.ParallelInput{Branches: [][]fixtures.Turn{
		fixtures.Repeat("Code", "the same patch", 5),
		fixtures.Paced(fixtures.Distinct("Research", 4), time.Second),
	}}
	// The loop repeats itself three times, then waits (workflow.Await) for
	// the proceed signal: the guard reads the third result while it waits,
	// and the trip is pending when the human's halt comes.
	stopBehindTrip := append(fixtures.Repeat("Code", "the same patch", 3),
		fixtures.Turn{Node: "Code", Output: "the same patch", AwaitProceed: true},
		fixtures.Turn{Node: "Verify", Output: "2 failing"}, fixtures.Turn{Node: "Verify", Output: "1 failing"})
	// A sub-agent's Research call runs until the human is about to answer
	// the other branch's halt; it ends during the pause.
	inFlight := fixtures.ParallelInput{Branches: [][]fixtures.Turn{
		append(fixtures.Repeat("Code", "the same patch", 4), fixtures.Turn{Node: "Research", Output: "docs read"}, fixtures.Turn{Node: "Plan", Output: "done"}),
		{{Node: "Research", Output: "sub-agent's findings", GateFile: inFlightGate}},
	}}
	// The same, but the sub-agent waits (a timer) after its call ends, so
	// the guard reads the result during the pause.
	readDuring := fixtures.ParallelInput{Branches: [][]fixtures.Turn{
		append(fixtures.Repeat("Code", "the same patch", 4), fixtures.Turn{Node: "Research", Output: "docs read"}, fixtures.Turn{Node: "Plan", Output: "done"}),
		{{Node: "Research", Output: "sub-agent's findings", GateFile: readDuringGate}, {Node: "Verify", Output: "notes written", Sleep: time.Second}},
	}}
	continued := fixtures.ContinueInput{
		Turns:   append(fixtures.Repeat("Code", "the same patch", 4), fixtures.Distinct("Plan", 2)...),
		PerRun:  4,
		Persist: true,
	}
	// A fix-and-check loop converging: the fix's acknowledgement is the
	// same every turn, the check's failing count falls.
	var converging []fixtures.Turn
	for failing := 6; failing >= 0; failing-- {
		converging = append(converging, fixtures.Turn{Node: "Code", Output: "applied"},
			fixtures.Turn{Node: "Verify", Output: fmt.Sprintf("%d tests failed", failing)})
	}
	// The same patch twice, a user's message (the workflow's own proceed
	// signal), the same patch twice more, then a pass.
	message := append(fixtures.Repeat("Code", "the same patch", 2),
		fixtures.Turn{Node: "Code", Output: "the same patch", WaitSignal: true},
		fixtures.Turn{Node: "Code", Output: "the same patch"},
		fixtures.Turn{Node: "Verify", Output: "0 tests failed"})
	// A plan→research→code loop that switches between two plans it has
	// tried (A, B, B, A, again): the stale-round rule halts it after four
	// rounds, and again four rounds after a resume.
	var staleRounds []fixtures.Turn
	for i := range 9 {
		plan := []string{"A", "B", "B", "A"}[i%4]
		staleRounds = append(staleRounds, fixtures.Turn{Node: "Plan", Output: "plan " + plan},
			fixtures.Turn{Node: "Research", Output: "notes on plan " + plan},
			fixtures.Turn{Node: "Code", Output: "3 tests fail with plan " + plan})
	}
	// A fix-and-check loop whose check reports a constant verdict beside a
	// falling error count (JSON in the result's text, read as JSON).
	var convergingField []fixtures.Turn
	for failing := 6; failing >= 0; failing-- {
		convergingField = append(convergingField, fixtures.Turn{Node: "Code", Output: "applied"},
			fixtures.Turn{Node: "Verify", Output: fmt.Sprintf(`{"ok": false, "errors": %d}`, failing)})
	}
	// A coder that re-proposes one patch whose envelope reports the
	// tokens it used (the same each turn: the scripted activity's input
	// is its output, and a changing input is a changing call).
	usagePatch := fixtures.Repeat("Code", `{"patch":"retry the cache expiry fix","usage":{"prompt_tokens":1200,"completion_tokens":38}}`, 8)
	// An agent stuck in rounds of one model turn and eight parallel
	// searches, the same every round.
	var parallelRounds []fixtures.Turn
	for range 40 {
		parallelRounds = append(parallelRounds, fixtures.Turn{Node: "Think", Output: "search the same eight queries"},
			fixtures.Turn{Node: "Research", Output: "the same eight results", Parallel: 8})
	}
	// A coder stuck until a human escalates; the session handles the
	// escalation and goes on with new patches.
	var escalatedThenNew fixtures.SessionInput
	for range 4 {
		escalatedThenNew.Turns = append(escalatedThenNew.Turns, fixtures.Turn{Node: "Code", Output: "the same patch"}, fixtures.Turn{Node: "Verify", Output: "1 test failing"})
	}
	for _, p := range []string{"alpha", "beta", "gamma"} {
		escalatedThenNew.Turns = append(escalatedThenNew.Turns, fixtures.Turn{Node: "Code", Output: "patch " + p}, fixtures.Turn{Node: "Verify", Output: "tests pass for " + p})
	}
	// A retry loop backing off on the summary-bearing timer APIs: three
	// NewTimerWithOptions backoffs, then AwaitWithOptions ones.
	const quota = "quote service: 429 too many requests"
	optionsBackoff := fixtures.Backedoff("Act", quota, fixtures.TimerWithOptions, time.Second, 4)
	optionsBackoff = append(optionsBackoff, fixtures.Backedoff("Act", quota, fixtures.TimerAwaitOptions, time.Second, 9)[1:]...)
	return []spec{
		{name: "timers-options", desc: "zero Options; Act fails the same way every attempt, backed off 1s with workflow.NewTimerWithOptions, then AwaitWithOptions: waiting, not a repeated error; halted at call 7 as a poll without progress, escalated by signal (version 12 heard no timer from these APIs and halted at call 4 as a repeated error)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: optionsBackoff,
			answers: []answer{signal("escalate", by("the quota will not come back"))}},
		{name: "timers-zero", desc: "zero Options; Act fails the same way every attempt, backed off with a zero workflow.Sleep, which writes no timer: a tight retry loop, halted at call 4 as a repeated error, escalated by signal (version 12 took the zero Sleep for a timer and halted at call 7)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: fixtures.Backedoff("Act", quota, fixtures.TimerSleep, 0, 12),
			answers: []answer{signal("escalate", by("retrying at once is no backoff"))}},
		{name: "parallel-rounds", desc: "one warning, tool-call grain (the README's setup); every round is a Think call and eight parallel Research calls, the same every round: warned once, then halted, escalated by signal (version 11 counted the warning's window in calls, so the fan-out outran it: warned again and again, never halted)",
			registry: "fixtures", guard: "warnings-1-tool-call", workflow: fixtures.WorkflowScripted, input: parallelRounds,
			answers: []answer{signal("escalate", by("the same searches again"))}},
		{name: "ninth-warning", desc: "nine warnings, tool-call grain; Think answers the same every turn: warned nine times, then halted, escalated by signal (version 11 counted a loop's warnings from the 8 it keeps for evidence: warned forever, never halted)",
			registry: "fixtures", guard: "warnings-9-tool-call", workflow: fixtures.WorkflowScripted, input: fixtures.Repeat("Think", "the same answer", 80),
			answers: []answer{signal("escalate", by("nine warnings ignored"))}},
		{name: "escalated-pause-not-charged", desc: "MaxCycleRuntime 2s; Code and Verify repeat themselves and halt; a human escalates after 3s; the session handles the escalation and goes on with new patches: the pause is not charged to the cycle, no budget halt, it completes (version 11 charged an escalated halt's pause and halted the next call with cycle_runtime)",
			registry: "fixtures", guard: "cycle-runtime-2s", workflow: fixtures.WorkflowSession, input: escalatedThenNew,
			answers: []answer{signal("escalate", by("stuck: try something else"))},
			beforeAnswer: func(context.Context, client.Client, string, int) error {
				time.Sleep(3 * time.Second)
				return nil
			}},
		{name: "paused-call-read", desc: "MaxNodeRuntime 2s; two branches: Code repeats itself and halts; the other branch's Research call is in flight, ends 3s into the pause, and its branch waits on a timer, so the guard reads the result during the pause; after the resume the Code branch calls Research: the call read during the pause is charged up to the halt's start, so no node_runtime halt (version 10 charged it the pause before it ended, and halted)",
			registry: "fixtures", guard: "runtime-2s", workflow: fixtures.WorkflowParallel, input: readDuring,
			answers: []answer{signal("resume", by("carry on"))},
			during:  removeGate(readDuringGate),
			beforeAnswer: func(ctx context.Context, c client.Client, id string, _ int) error {
				time.Sleep(3 * time.Second)
				if err := os.WriteFile(readDuringGate, nil, 0o644); err != nil {
					return err
				}
				// Code's three calls, then the sub-agent's; then its timer.
				if err := waitWorkflowTaskAfter(ctx, c, id, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 4); err != nil {
					return err
				}
				return waitWorkflowTaskAfter(ctx, c, id, enumspb.EVENT_TYPE_TIMER_FIRED, 1)
			}},
		{name: "usage-envelope-patch", desc: "zero Options; a coder re-proposes one patch in a provider envelope with a usage block that grows every call: the usage is a measurement, not news; halted as stalled, escalated by signal",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: usagePatch,
			answers: []answer{signal("escalate", by("the same patch again"))}},
		{name: "stale-round-resumed", desc: "tool-call grain; Plan, Research and Code switch between two plans they have tried (A, B, B, A, ...): the stale-round rule halts the loop after four rounds; resumed by signal, the loop starts over and halts again only after four more rounds; escalated by signal (version 8 halted again at the call after the resume)",
			registry: "fixtures", guard: "tool-call", workflow: fixtures.WorkflowScripted, input: staleRounds,
			answers: []answer{signal("resume", by("try once more")), signal("escalate", by("the same plans again"))}},
		{name: "converging-field", desc: "zero Options; a fix-and-check loop: Code acknowledges with the same result every turn, Verify reports the same verdict beside an error count that falls 6 to 0 (JSON in its text): the falling count is news, which resets the edges into the constant Code, no halt, the loop completes (version 8 halted it with edge_without_progress at Code)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: convergingField},
		{name: "samples-reviewed-published", desc: "the samples' reviewed scenario: the coder ignores the warning and halts; the halt is published (memo, search attributes, current details) before the workflow's halt handler runs; the handler calls the Review activity and resumes with its guidance, which publishes running; the coder follows it and the loop completes with no human (version 8 published nothing while the handler ran)",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioReviewed, 0)},
		{name: "chat-heeds-warning", desc: "ChatAgent, whose conversation lives in the workflow: the model re-runs the failing tests; the guard warns the loop; the workflow reads the warning with interceptor.NoticeFor and puts its directive in the model's prompt; the model changes approach and the loop completes, never halted",
			registry: "samples", guard: "chat", workflow: "ChatAgent", input: workflows.ChatInput{Task: "make the cache tests pass"}},
		{name: "chat-guided", desc: "ChatAgent with a model that ignores warnings: warned, then halted; a human resumes by signal with guidance; the workflow reads it with interceptor.NoticeFor and puts it in the prompt; the model follows it and the loop completes",
			registry: "samples", guard: "chat", workflow: "ChatAgent", input: workflows.ChatInput{Task: "make the cache tests pass", Stubborn: true},
			answers: []answer{signal("resume", map[string]string{"by": "record-fixtures", "guidance": workflows.ChatGuidance})}},
		{name: "samples-reviewed-handler-race", desc: "the samples' reviewed scenario: the coder ignores the warning (the memo lists it) and halts; the workflow's halt handler, racing the human, calls the Review activity and resumes with its guidance; the coder follows it and the loop completes with no human",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioReviewed, 0)},
		{name: "samples-guided", desc: "the samples' guided scenario: the coder ignores the warning and halts; a human resumes by update with guidance; the coder follows it and the loop completes",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioGuided, 0),
			answers: []answer{update("resume", map[string]string{"by": "record-fixtures", "guidance": activities.OperatorGuidance})}},
		{name: "warned-then-halted-memo", desc: "Warnings 1: Code repeats itself; the first trip warns and upserts the memo, which lists the warning; it repeats itself again and halts, the memo listing the unheeded warning; escalated by signal (version 7 wrote no memo at the warning)",
			registry: "fixtures", guard: "warnings-1", workflow: fixtures.WorkflowScripted,
			input:   fixtures.Repeat("Code", "the same patch", 9),
			answers: []answer{signal("escalate", by("ignored the warning"))}},
		{name: "warning-heeded", desc: "Warnings 1, tool-call grain: Code repeats itself and is warned (the memo lists the warning), then returns something new every call: a window later the warning is heeded and the memo written again without it; the loop completes (version 7 wrote no memo)",
			registry: "fixtures", guard: "warnings-1-tool-call", workflow: fixtures.WorkflowScripted,
			input: append(fixtures.Repeat("Code", "the same patch", 4), fixtures.Distinct("Code", 10)...)},
		{name: "resume-with-guidance", desc: "Code repeats itself and halts; resumed by signal with guidance; the later Code calls carry it in a loopguard-notice header (version 6 refused the field) until the loop completes",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted,
			input:   append(fixtures.Repeat("Code", "the same patch", 4), fixtures.Distinct("Code", 2)...),
			answers: []answer{signal("resume", map[string]string{"by": "record-fixtures", "guidance": "read config/prod.yaml, not config/dev.yaml"})}},
		{name: "warned-then-halted", desc: "Warnings 1: Code repeats itself; the first trip warns (the calls carry the warning) and the loop goes on; it repeats itself again and halts, listing the unheeded warning; escalated by signal (version 6 halted at the first trip)",
			registry: "fixtures", guard: "warnings-1", workflow: fixtures.WorkflowScripted,
			input:   fixtures.Repeat("Code", "the same patch", 9),
			answers: []answer{signal("escalate", by("ignored the warning"))}},
		{name: "converging-count", desc: "zero Options; a fix-and-check loop: Code acknowledges with the same result every turn, Verify's failing count falls 6 to 0: the falling count is information, no halt, the loop completes (a reader that took the count for an attempt counter halted it at its third turn as stalled)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: converging},
		{name: "user-message-between-repeats", desc: "Code returns the same patch twice, the workflow waits for its own proceed signal (a user's message), then Code returns it twice more and Verify passes: no repetition spans the outside input, no halt, the loop completes (version 5 halted before the fourth Code call)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: message,
			during: func(ctx context.Context, c client.Client, id string) error {
				if _, err := testsuite.WaitStatus(ctx, c, id, func(s protocol.Status) bool { return s.TotalCalls >= 2 }); err != nil {
					return err
				}
				return c.SignalWorkflow(ctx, id, "", fixtures.ProceedSignal, nil)
			}},
		{name: "observe-stop-behind-trip", desc: "OnHalt: observe; identical_output trips while the loop waits (workflow.Await) for a signal, and a human sends halt then: the detector's trip is observed, and the human's stop pauses the next call (version 4 refused the stop as \"a halt is already pending\"); resumed by signal; the loop completes",
			registry: "fixtures", guard: "defaults-observe", workflow: fixtures.WorkflowScripted, input: stopBehindTrip,
			answers: []answer{signal("resume", by("checked, carry on"))},
			during: func(ctx context.Context, c client.Client, id string) error {
				if err := waitWorkflowTaskAfter(ctx, c, id, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 3); err != nil {
					return err
				}
				if err := c.SignalWorkflow(ctx, id, "", protocol.DefaultHaltSignal, by("wrong repository")); err != nil {
					return err
				}
				return c.SignalWorkflow(ctx, id, "", fixtures.ProceedSignal, nil)
			}},
		{name: "paused-call-in-flight", desc: "MaxNodeRuntime 2s; two branches: Code repeats itself and halts; the other branch's Research call is in flight and ends during the pause, which lasts 3s; after the resume the Code branch calls Research: the in-flight call is not charged the pause, so no node_runtime halt (version 4 charged it and halted)",
			registry: "fixtures", guard: "runtime-2s", workflow: fixtures.WorkflowParallel, input: inFlight,
			answers: []answer{signal("resume", by("carry on"))},
			during:  removeGate(inFlightGate),
			beforeAnswer: func(ctx context.Context, c client.Client, id string, _ int) error {
				if err := os.WriteFile(inFlightGate, nil, 0o644); err != nil {
					return err
				}
				// Code's three calls, then the sub-agent's.
				if err := waitWorkflowTaskAfter(ctx, c, id, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 4); err != nil {
					return err
				}
				time.Sleep(3 * time.Second)
				return nil
			}},
		{name: "continued-after-escalation", desc: "ContinueLoop, 4 turns per run, going on after an escalation: run 1 repeats itself and is escalated by signal, then continues as new; run 2 shows itself running in the memo at its start (version 4 left the escalated memo the server copied over)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowContinue, input: continued,
			answers: []answer{signal("escalate", by("stuck on this task, next one"))}},
		{name: "parallel-escalate-both", desc: "two branches (workflow.Go): Code repeats itself and halts with identical_output; the Research branch's next call comes while Code is paused and waits for the same decision; the decision is escalate, and it reaches both branches (before version 4 the waiting call went ahead after an escalation)",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowParallel, input: parallel,
			answers:      []answer{signal("escalate", by("one decision for both branches"))},
			beforeAnswer: waitBranchHeld},
		{name: "observe-user-stop", desc: "OnHalt: observe, a human sends halt while the loop sleeps between turns: the next call pauses with user_stop (not observed: a human's halt pauses even in shadow mode) and is resumed by signal; the loop completes",
			registry: "fixtures", guard: "defaults-observe", workflow: fixtures.WorkflowScripted, input: observeStop,
			answers: []answer{signal("resume", by("false alarm, carry on"))},
			during: func(ctx context.Context, c client.Client, id string) error {
				if _, err := testsuite.WaitStatus(ctx, c, id, func(s protocol.Status) bool { return s.TotalCalls >= 2 }); err != nil {
					return err
				}
				return c.SignalWorkflow(ctx, id, "", protocol.DefaultHaltSignal, by("is this the right environment?"))
			}},
		{name: "parallel-branches", desc: "two branches (workflow.Go): Code repeats itself and halts with identical_output; the Research branch's next call comes while Code is paused and waits for the same decision instead of raising a halt of its own; one halt, resumed by signal; both branches complete",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowParallel, input: parallel,
			answers:      []answer{signal("resume", by("one decision for both branches"))},
			beforeAnswer: waitBranchHeld},
		{name: "budget-escalate", desc: "budget scenario: cycle_iterations (8/8) trips, escalated by update",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioBudget, 0),
			answers: []answer{update("escalate", by("budget spent"))}},
		{name: "stalled-resume-completes", desc: "identical-patch with 7 turns: identical_output on Verify, resumed by signal, the loop then runs out of turns and gives up",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 7),
			answers: []answer{signal("resume", by("let it finish"))}},
		{name: "stalled-resume-resume-escalate", desc: "identical-patch: three stalls, resumed by signal, resumed by update with an extension, escalated by signal",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 0),
			answers: []answer{signal("resume", by("one more try")), update("resume", map[string]any{"reason": "and another", "extend": map[string]int{"maxEdgeWithoutProgress": 1}}), signal("escalate", by("stuck for good"))}},
		{name: "signed-answers", desc: "identical-patch, the samples' options with one operator's key (issue 32): at the first halt an unsigned resume, one signed by an unknown key and one altered after signing are refused (three signals in history, loop.status lists them); a signed resume signal with guidance lifts it; the next halts are escalated by a signed update",
			registry: "samples", guard: "samples-signed", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 0),
			answers:      []answer{signed(signal("resume", map[string]string{"reason": "one more try", "by": "record-fixtures", "guidance": "read the failing test first"})), signed(update("escalate", by("stuck for good")))},
			beforeAnswer: forgeries},
		{name: "signed-late-answers", desc: "identical-patch, the samples' options with one operator's key: each halt is answered 1.5 s after it was raised by an answer signed for a window that opens when it is sent, valid only at the time of the task that delivers it: a signed resume signal with guidance, then signed escalate updates (version 12 judged a signal at the halt's task and refused it: not valid yet)",
			registry: "samples", guard: "samples-signed", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 0),
			answers: []answer{late(signal("resume", map[string]string{"reason": "one more try", "by": "record-fixtures", "guidance": "read the failing test first"})), late(update("escalate", by("stuck for good")))}},
		{name: "no-improvement-escalate", desc: "same-failing-tests: no_improvement on Verify, escalated by signal",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioSameFailingTests, 0),
			answers: []answer{signal("escalate", by("the same 4 tests keep failing"))}},
		{name: "oscillating-resume-escalate", desc: "oscillating patches A/B: output_oscillation, resumed by update, then escalated by update",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioOscillating, 0),
			answers: []answer{update("resume", by("pick one next time")), update("escalate", by("still flipping"))}},
		{name: "repeated-error-escalate", desc: "repeated-error: the same SandboxUnavailable error 3 times, escalated by update",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioRepeatedError, 0),
			answers: []answer{update("escalate", by("sandbox is down"))}},
		{name: "planner-oscillating-escalate", desc: "planner-research (seed 003): output_oscillation on Plan, escalated by signal",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowPlannerResearcher, input: sample(activities.ScenarioPlannerResearch, 0),
			answers: []answer{signal("escalate", by("talking past each other"))}},
		{name: "child-stalled-escalate", desc: "child-stalled: identical IterationWorkflow results, the parent halts before the 4th child, escalated by signal",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowChildIteration, input: sample(activities.ScenarioChildStalled, 0),
			answers: []answer{signal("escalate", by("same child result"))}},
		{name: "user-stop-resume", desc: "a human sends halt while the loop waits for a signal; the next call halts with user_stop and is resumed by signal",
			registry: "fixtures", guard: "defaults", workflow: fixtures.WorkflowScripted, input: userStop,
			answers: []answer{signal("resume", by("checked, carry on"))},
			during: func(ctx context.Context, c client.Client, id string) error {
				if _, err := testsuite.WaitStatus(ctx, c, id, func(s protocol.Status) bool { return s.TotalCalls >= 2 }); err != nil {
					return err
				}
				if err := c.SignalWorkflow(ctx, id, "", protocol.DefaultHaltSignal, by("checking the plan")); err != nil {
					return err
				}
				return c.SignalWorkflow(ctx, id, "", fixtures.ProceedSignal, nil)
			}},
		{name: "pause-timeout-resumes", desc: "identical-patch with 7 turns and a 2s pause timeout that resumes: nobody answers",
			registry: "samples", guard: "samples-pause-timeout", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 7),
			answers: []answer{{}}},
		{name: "observe-identical-patch", desc: "identical-patch in shadow mode (OnHalt: observe): halts raised, never paused; the loop gives up after 20 turns",
			registry: "samples", guard: "samples-observe", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 0)},
		{name: "fail-oscillating", desc: "oscillating with OnHalt: fail: escalated at once by the policy; the halt waits for its loop.halted echo before the workflow completes (guard version 2)",
			registry: "samples", guard: "samples-fail", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioOscillating, 0)},
		{name: "converging-guarded", desc: "converging: never halts",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioConverging, 0)},
		{name: "polling-guarded", desc: "polling: the exempt poller repeats itself 11 times and never halts",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowPolling,
			input: func() workflows.LoopInput {
				in := sample(activities.ScenarioPolling, 0)
				in.PollInterval = 100 * time.Millisecond
				return in
			}()},
		{name: "child-converging-guarded", desc: "child-converging: one child workflow per iteration, never halts",
			registry: "samples", guard: "samples", workflow: workflows.WorkflowChildIteration, input: sample(activities.ScenarioChildConverging, 0)},
		{name: "continue-as-new", desc: "6 distinct Research calls, 3 per run, MaxCallsPerNode 4: the carried budget trips in run 2 (node_calls), resumed by signal with extend maxCallsPerNode 2",
			registry: "fixtures", guard: "max-calls-4", workflow: fixtures.WorkflowContinue,
			input:   fixtures.ContinueInput{Turns: fixtures.Distinct("Research", 6), PerRun: 3},
			answers: []answer{signal("resume", map[string]any{"reason": "two more", "extend": map[string]int{"maxCallsPerNode": 2}})}},
		{name: "unguarded-identical-patch", desc: "identical-patch without the guard: runs all 20 turns and gives up",
			registry: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioIdenticalPatch, 0)},
		{name: "unguarded-converging", desc: "converging without the guard",
			registry: "samples", workflow: workflows.WorkflowCoderVerifier, input: sample(activities.ScenarioConverging, 0)},
		{name: "unguarded-child-stalled", desc: "child-stalled without the guard: 20 child workflows",
			registry: "samples", workflow: workflows.WorkflowChildIteration, input: sample(activities.ScenarioChildStalled, 0)},
		{name: "unguarded-scripted-stall", desc: "a scripted stall (3 identical outputs) without the guard",
			registry: "fixtures", workflow: fixtures.WorkflowScripted, input: fixtures.Stalling("Code", 8, 2)},
		{name: "unguarded-continue-as-new", desc: "6 Research calls, 3 per run, without the guard",
			registry: "fixtures", workflow: fixtures.WorkflowContinue,
			input: fixtures.ContinueInput{Turns: fixtures.Distinct("Research", 6), PerRun: 3}},
		{name: "workload-1000-guarded", desc: "1,000 sequential calls (Think/Act, distinct outputs) with limits it never reaches: the replay benchmark's guarded history",
			registry: "fixtures", guard: "workload", workflow: fixtures.WorkflowWorkload, input: 1000, benchmark: true},
		{name: "workload-rich-1000-guarded", desc: "1,000 sequential calls with agent-sized JSON results (2-4 KB: ids, timestamps, usage, a tool call, a patch, a test report) and limits it never reaches: the replay benchmark's realistic guarded history",
			registry: "fixtures", guard: "workload", workflow: fixtures.WorkflowRich, input: 1000, benchmark: true},
		{name: "workload-rich-1000-unguarded", desc: "the same 1,000 rich calls without the guard: the realistic replay benchmark's baseline",
			registry: "fixtures", workflow: fixtures.WorkflowRich, input: 1000, benchmark: true},
		{name: "workload-1000-unguarded", desc: "the same 1,000 calls without the guard: the replay benchmark's baseline",
			registry: "fixtures", workflow: fixtures.WorkflowWorkload, input: 1000, benchmark: true},
	}
}

func run(out, only string, timeout time.Duration) error {
	var filter *regexp.Regexp
	if only != "" {
		var err error
		if filter, err = regexp.Compile(only); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	srv, err := devserver.Start(ctx, devserver.Options{Ephemeral: true, FreePorts: true, UIDisabled: true})
	if err != nil {
		return err
	}
	defer srv.Stop()
	c, err := srv.NewClient(client.Options{Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println("server", srv.FrontendHostPort())

	manifest := rawManifest{
		Comment:  "Histories recorded from the embedded Temporal server by worker/cmd/record-fixtures; replayed by testsuite's TestFixtures*. Re-record with the command below after a change to the fixture workflows or to the guard's commands.",
		Command:  command,
		Versions: versions(),
	}
	// A fixture is recorded when -only selects it; without -only, every
	// fixture.
	var selected []spec
	recorded := map[string]bool{}
	for _, sp := range specs() {
		if filter == nil || filter.MatchString(sp.name) {
			selected = append(selected, sp)
			recorded[sp.name] = true
		}
	}
	old, err := readRawManifest(filepath.Join(out, fixtures.ManifestFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range old {
		// With -only, the fixtures not re-recorded are kept, copied as
		// they are, byte for byte.
		name := strings.TrimSuffix(strings.TrimSuffix(e.File, ".json"), fmt.Sprintf("-run%d", e.Run))
		if filter != nil && !recorded[name] {
			manifest.add(e.File, e.raw)
		}
	}
	for _, sp := range selected {
		start := time.Now()
		entries, err := record(ctx, c, out, sp)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.name, err)
		}
		for _, e := range entries {
			fmt.Printf("%-40s %-22s %5d events  halts=%v  outcome=%s  (%s)\n", e.File, e.WorkflowType, e.Events, haltNames(e.ExpectedHalts), e.Outcome, time.Since(start).Round(time.Millisecond))
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			manifest.add(e.File, raw)
		}
	}
	manifest.sort()
	data, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(out, fixtures.ManifestFile)
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	m, err := fixtures.ReadManifest(path)
	if err != nil {
		return err
	}
	return writeReadme(out, m)
}

// rawManifest is fixtures.Manifest with its entries kept as JSON: an entry
// that is not re-recorded is written back exactly as it was read (decoding
// its guard options into maps would reorder their keys).
type rawManifest struct {
	Comment  string            `json:"comment"`
	Command  string            `json:"command"`
	Versions fixtures.Versions `json:"versions"`
	Fixtures []json.RawMessage `json:"fixtures"`
	entries  []rawEntry
}

func (m *rawManifest) add(file string, raw json.RawMessage) {
	m.entries = append(m.entries, rawEntry{File: file, raw: raw})
}

// sort orders the entries by file name into Fixtures.
func (m *rawManifest) sort() {
	sort.SliceStable(m.entries, func(i, j int) bool { return m.entries[i].File < m.entries[j].File })
	m.Fixtures = m.Fixtures[:0]
	for _, e := range m.entries {
		m.Fixtures = append(m.Fixtures, e.raw)
	}
}

// rawEntry is an existing manifest entry: its file and run, and its JSON.
type rawEntry struct {
	File string `json:"file"`
	Run  int    `json:"run"`
	raw  json.RawMessage
}

// readRawManifest reads the entries of the manifest at path.
func readRawManifest(path string) ([]rawEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m struct {
		Fixtures []json.RawMessage `json:"fixtures"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]rawEntry, len(m.Fixtures))
	for i, raw := range m.Fixtures {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("%s: entry %d: %w", path, i, err)
		}
		out[i].raw = raw
	}
	return out, nil
}

// writeReadme writes README.md: the manifest as a table.
func writeReadme(out string, m fixtures.Manifest) error {
	var b strings.Builder
	b.WriteString("# Recorded workflow histories\n\n")
	b.WriteString("JSON histories (protojson of `history.v1.History`, the format of `temporal workflow show --output json`) recorded from the embedded Temporal server (package `worker/devserver`) with guarded and unguarded workers, and replayed by `go test ./testsuite/` (`TestFixturesReplay`, `TestFixturesReplayWithoutGuard`, `BenchmarkReplay1000`).\n\n")
	fmt.Fprintf(&b, "Recorded with go.temporal.io/sdk %s and go.temporal.io/server %s. Re-record them all (about 2.5 minutes) from the repository root with\n\n    %s\n\nor some of them with `-only <regexp>`. `manifest.json` is the machine-readable form of this table; the guard options are named in `internal/fixtures/options.go` (`samples` is `workflows.GuardOptions()`).\n\n", m.Versions.SDK, m.Versions.Server, m.Command)
	fmt.Fprintf(&b, "Every guarded history is recorded at guard version %d, the only one this release replays; each is named for the behaviour it protects. A history recorded by a pre-release build (testsuite/testdata/prerelease) fails its workflow task instead (TestPrereleaseHistoryFailsItsTask).\n\n", interceptor.GuardVersion)
	b.WriteString("| file | workflow | guard options | human answers | expected halts (reason/detector@node) | outcome | events |\n|---|---|---|---|---|---|---|\n")
	for _, f := range m.Fixtures {
		guard := f.Guard
		if f.Guard == "" {
			guard = "(no guard)"
		}
		answers := strings.Join(f.Answers, "; ")
		halts := strings.Join(haltNames(f.ExpectedHalts), ", ")
		if halts == "" {
			halts = "none"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %d |\n", f.File, f.WorkflowType, guard, strings.ReplaceAll(answers, "|", "\\|"), halts, f.Outcome, f.Events)
	}
	b.WriteString("\nDescriptions:\n\n")
	for _, f := range m.Fixtures {
		fmt.Fprintf(&b, "- `%s`: %s\n", f.File, f.Description)
	}
	return os.WriteFile(filepath.Join(out, "README.md"), []byte(b.String()), 0o644)
}

func haltNames(hs []fixtures.Halt) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s/%s@%s", h.Reason, h.Detector, h.Node))
	}
	return out
}

// record runs one scenario and writes its histories.
func record(ctx context.Context, c client.Client, out string, sp spec) ([]fixtures.Fixture, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	register, ok := fixtures.Registries(sp.registry)
	if !ok {
		return nil, fmt.Errorf("unknown registry %q", sp.registry)
	}
	queue := "fixture-" + sp.name
	var wo worker.Options
	var guardOpts interceptor.Options
	if sp.guard != "" {
		if guardOpts, ok = fixtures.GuardOptions(sp.guard); !ok {
			return nil, fmt.Errorf("unknown guard options %q", sp.guard)
		}
		g, err := interceptor.New(guardOpts)
		if err != nil {
			return nil, err
		}
		wo.Interceptors = append(wo.Interceptors, g)
	}
	w := worker.New(c, queue, wo)
	register(w)
	if err := w.Start(); err != nil {
		return nil, err
	}
	defer w.Stop()

	id := "fixture-" + sp.name
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue, WorkflowExecutionTimeout: 5 * time.Minute,
	}, sp.workflow, sp.input)
	if err != nil {
		return nil, err
	}
	// Run.Get follows continue-as-new and moves GetRunID along: keep the
	// first run's id to export the chain from its start.
	firstRunID := run.GetRunID()
	if sp.during != nil {
		if err := sp.during(ctx, c, id); err != nil {
			return nil, err
		}
	}
	var answered []string
	if sp.guard != "" && len(sp.answers) > 0 {
		// after is the Seq of the last halt answered: under observe, the
		// observed halts number in between the paused ones.
		for n, after := 1, 0; ; n++ {
			s, closed, err := waitHaltOrClose(ctx, c, id, after)
			if err != nil {
				return nil, err
			}
			if closed {
				break
			}
			if sp.beforeAnswer != nil {
				if err := sp.beforeAnswer(ctx, c, id, n); err != nil {
					return nil, fmt.Errorf("before answering halt %d: %w", n, err)
				}
			}
			after = s.Halt.Seq
			a := sp.answers[min(n, len(sp.answers))-1]
			answered = append(answered, a.String())
			if err := send(ctx, c, id, a, s); err != nil {
				return nil, fmt.Errorf("answer halt %d: %w", n, err)
			}
		}
	}
	var result map[string]any
	if err := run.Get(ctx, &result); err != nil {
		return nil, fmt.Errorf("workflow failed: %w", err)
	}

	var entries []fixtures.Fixture
	runID := firstRunID
	for i := 1; runID != ""; i++ {
		h, err := testsuite.ExportHistory(ctx, c, id, runID)
		if err != nil {
			return nil, err
		}
		info := testsuite.Inspect(h)
		if info.WorkflowTaskFailures > 0 && !sp.knownTaskFailure {
			return nil, fmt.Errorf("run %s: %d workflow task failures: %s", runID, info.WorkflowTaskFailures, taskFailures(h))
		}
		file := sp.name + ".json"
		next := nextRunID(h)
		if i > 1 || next != "" {
			file = fmt.Sprintf("%s-run%d.json", sp.name, i)
		}
		path := filepath.Join(out, file)
		if err := testsuite.WriteHistoryFile(path, h); err != nil {
			return nil, err
		}
		ropts := testsuite.ReplayOptions{Guard: guardOpts}
		ropts.Register, _ = fixtures.WorkflowRegistries(sp.registry)
		if err := testsuite.ReplayFile(path, ropts); err != nil {
			return nil, err
		}
		e := fixtures.Fixture{
			File: file, Description: sp.desc, Registry: sp.registry,
			WorkflowType: info.WorkflowType, WorkflowID: id, Run: i,
			Guard: sp.guard, Answers: answered, ExpectedHalts: halts(h),
			Outcome: outcome(next, result), Events: info.Events, Benchmark: sp.benchmark,
			WorkflowTaskFailures: info.WorkflowTaskFailures,
			GuardVersion:         info.GuardVersion,
		}
		if sp.guard != "" {
			e.GuardOptions = fixtures.Describe(guardOpts)
		}
		entries = append(entries, e)
		runID = next
	}
	return entries, nil
}

// waitHaltOrClose waits until the workflow is paused on a halt later than
// halt number after, or closed.
func waitHaltOrClose(ctx context.Context, c client.Client, id string, after int) (protocol.Status, bool, error) {
	for {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return protocol.Status{}, false, err
		}
		if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return protocol.Status{}, true, nil
		}
		if s, err := testsuite.QueryStatus(ctx, c, id, ""); err == nil && s.State == protocol.StateHalted && s.Halt != nil && s.Halt.Seq > after {
			return s, false, nil
		}
		select {
		case <-ctx.Done():
			return protocol.Status{}, false, fmt.Errorf("waiting for a halt after halt %d: %w", after, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// send answers a halt as a human would.
func send(ctx context.Context, c client.Client, id string, a answer, s protocol.Status) error {
	if a.late {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lateBy):
		}
	}
	if a.signed {
		sa, err := signAnswer(id, a, s, fixtures.OperatorKey(), fixtures.OperatorKeyID)
		if err != nil {
			return err
		}
		a.payload = sa
	}
	switch {
	case a.action == "":
		return nil
	case !a.update:
		return c.SignalWorkflow(ctx, id, "", a.action, a.payload)
	}
	var args []any
	if a.payload != nil {
		args = []any{a.payload}
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: a.action, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	var d protocol.Decision
	if err := h.Get(ctx, &d); err != nil {
		return err
	}
	if string(d.Action) != a.action || d.HaltSeq != s.Halt.Seq {
		return fmt.Errorf("update answered %+v for halt %d", d, s.Halt.Seq)
	}
	return nil
}

// halts decodes the loop.halted signals of a history.
func halts(h *historypb.History) []fixtures.Halt {
	out := []fixtures.Halt{}
	for _, e := range h.GetEvents() {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal || len(a.GetInput().GetPayloads()) == 0 {
			continue
		}
		var ev protocol.HaltEvent
		if err := converter.GetDefaultDataConverter().FromPayload(a.GetInput().GetPayloads()[0], &ev); err != nil {
			continue
		}
		out = append(out, fixtures.Halt{Seq: ev.Seq, Reason: string(ev.HaltReason), Detector: string(ev.Detector), Node: ev.Node, Iteration: ev.Iteration, Observed: ev.Observed})
	}
	return out
}

func nextRunID(h *historypb.History) string {
	evs := h.GetEvents()
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
}

func outcome(next string, result map[string]any) string {
	if next != "" {
		return "continued_as_new"
	}
	if o, ok := result["outcome"].(string); ok {
		return o
	}
	if esc, _ := result["escalated"].(bool); esc {
		return "escalated"
	}
	return "completed"
}

func versions() fixtures.Versions {
	var v fixtures.Versions
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "go.temporal.io/sdk":
				v.SDK = d.Version
			case "go.temporal.io/server":
				v.Server = d.Version
			}
		}
	}
	return v
}

// quiet drops the client's logs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// taskFailures describes the WorkflowTaskFailed events of a history.
func taskFailures(h *historypb.History) string {
	var out []string
	for _, e := range h.GetEvents() {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			out = append(out, fmt.Sprintf("event %d: %s: %s", e.GetEventId(), a.GetCause(), a.GetFailure().GetMessage()))
		}
	}
	return strings.Join(out, "; ")
}

// inFlightGate is the file v5-paused-call-in-flight's sub-agent call waits
// for.
var inFlightGate = filepath.Join(os.TempDir(), "loopguard-record-fixtures-in-flight-gate")

// readDuringGate is the file v11-paused-call-read's sub-agent call waits
// for.
var readDuringGate = filepath.Join(os.TempDir(), "loopguard-record-fixtures-read-during-gate")

// removeGate is a spec's during that removes a gate file left over from an
// earlier run, so that the gated call waits until the spec writes it.
func removeGate(path string) func(context.Context, client.Client, string) error {
	return func(context.Context, client.Client, string) error { return removeIfExists(path) }
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// waitWorkflowTaskAfter waits until the history has n events of type typ
// and a workflow task completed after the n-th: the workflow has read that
// event and gone on to wait.
func waitWorkflowTaskAfter(ctx context.Context, c client.Client, id string, typ enumspb.EventType, n int) error {
	for {
		h, err := testsuite.ExportHistory(ctx, c, id, "")
		if err != nil {
			return err
		}
		seen := 0
		for _, e := range h.GetEvents() {
			switch {
			case e.GetEventType() == typ:
				seen++
			case seen >= n && e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for a workflow task after %d %s: %w", n, typ, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitBranchHeld waits, while the first branch of ParallelLoop is paused on
// its halt, until the other branch has woken from its sleep and asked for
// its next call (a workflow task completed after its timer fired) without
// making it: the call waits for the same decision. Only then does the human
// answer, so the history shows the held call.
func waitBranchHeld(ctx context.Context, c client.Client, id string, _ int) error {
	for {
		h, err := testsuite.ExportHistory(ctx, c, id, "")
		if err != nil {
			return err
		}
		halted, fired := -1, -1
		for i, e := range h.GetEvents() {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				if halted < 0 && e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == protocol.DefaultHaltedSignal {
					halted = i
				}
			case enumspb.EVENT_TYPE_TIMER_FIRED:
				if halted >= 0 && fired < 0 {
					fired = i
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if halted >= 0 {
					return fmt.Errorf("event %d: a call was scheduled while the workflow was paused", e.GetEventId())
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				if fired >= 0 {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the other branch to be held: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
