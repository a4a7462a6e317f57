package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The subcommands that make a key pair and answer a halt.
const (
	keygenCommand = "keygen"
	answerCommand = "answer"
)

// The answer subcommand's actions beside the guard's own (resume,
// escalate, halt): status prints the guard's loop.status, unpause lifts
// Temporal's Workflow Pause (what worker watch sets on a looping run of
// any SDK); list (answer_list.go) lists the runs waiting.
const (
	actionStatus  protocol.Action = "status"
	actionUnpause protocol.Action = "unpause"
)

// privateKeyFile is an operator's key file: the key's id and its 32-byte
// Ed25519 seed (base64 in JSON). It never goes near a worker.
type privateKeyFile struct {
	ID   string `json:"id"`
	Seed []byte `json:"privateKey"`
}

// readPrivateKey reads a key file keygen wrote.
func readPrivateKey(path string) (string, ed25519.PrivateKey, error) {
	var f privateKeyFile
	if err := readKeyFile(path, &f); err != nil {
		return "", nil, err
	}
	if len(f.Seed) != ed25519.SeedSize || f.ID == "" {
		return "", nil, fmt.Errorf("key file %s: want an id and a %d-byte privateKey, as keygen writes", path, ed25519.SeedSize)
	}
	return f.ID, ed25519.NewKeyFromSeed(f.Seed), nil
}

// readPublicKey reads a public key file keygen wrote (an OperatorKey in
// JSON), for --operator-key.
func readPublicKey(path string) (interceptor.OperatorKey, error) {
	var k interceptor.OperatorKey
	return k, readKeyFile(path, &k)
}

// readKeyFile decodes the JSON key file at path into v.
func readKeyFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("key file %s: %v", path, err)
	}
	return nil
}

// runKeygen writes a new key pair: PREFIX.key (the operator's, mode 0600)
// and PREFIX.pub (the workers').
func runKeygen(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(progName+" "+keygenCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	id := fs.String("id", "", "the key's id, named in every answer it signs (e.g. alice-2026)")
	out := fs.String("out", "", "file name prefix: writes PREFIX.key and PREFIX.pub (default: the id)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: %s %s --id ID [--out PREFIX]\n\nMakes an Ed25519 key pair for signing answers to halts.\n\n", progName, keygenCommand)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return &usageError{err: err}
	}
	if fs.NArg() > 0 {
		return usagef("keygen: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		*out = *id
	}
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	key := interceptor.OperatorKey{ID: *id, PublicKey: pub}
	if _, err := interceptor.New(interceptor.Options{OperatorKeys: []interceptor.OperatorKey{key}}); err != nil {
		var oe *interceptor.OptionError
		if errors.As(err, &oe) {
			return usagef("keygen: --id %s", oe.Reason)
		}
		return err
	}
	secret, err := json.Marshal(privateKeyFile{ID: *id, Seed: priv.Seed()})
	if err != nil {
		return err
	}
	public, err := json.Marshal(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(*out + ".pub"); err == nil {
		return fmt.Errorf("keygen: %s.pub exists: a key pair is never overwritten", *out)
	}
	if err := writeNew(*out+".key", append(secret, '\n'), 0o600); err != nil {
		return err
	}
	if err := writeNew(*out+".pub", append(public, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s.key (keep it: it signs answers) and %s.pub (give it to the workers: --operator-key %s.pub,\nor in the policy file: \"operatorKeys\": [%s])\n", *out, *out, *out, public)
	return nil
}

// writeNew writes a file that must not exist yet: a key is never
// overwritten.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// An answer's window starts answerBackdate before the time it is signed:
// the workflow's clock is the server's, which may run behind this
// machine's. So a window of answerBackdate or less has ended before the
// answer is sent, and minAnswerWindow, the shortest --window taken, leaves
// an answer a minute to reach the workflow.
const (
	answerBackdate  = time.Minute
	minAnswerWindow = answerBackdate + time.Minute
)

// answerConfig is the answer subcommand's flags.
type answerConfig struct {
	workflowID, runID string
	action            protocol.Action
	keyPath           string
	reason, by        string
	guidance, extend  string
	window            time.Duration
	signal, dryRun    bool
	// signalName, updateName and statusQuery are the guard's protocol
	// names, when its Options rename them.
	signalName, updateName, statusQuery string
	policy, searchAttribute             string
	address                             string
	namespace                           string
	connectTimeout                      time.Duration
}

func newAnswerFlagSet(cfg *answerConfig) *flag.FlagSet {
	fs := flag.NewFlagSet(progName+" "+answerCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.workflowID, "workflow-id", "", "the halted workflow (required)")
	fs.StringVar(&cfg.runID, "run-id", "", "its run (default: the latest)")
	fs.StringVar(&cfg.keyPath, "key", "", "the operator's key file, as keygen wrote it: signs the answer (needed when the worker's guard has operator keys; without it the answer is plain)")
	fs.StringVar(&cfg.reason, "reason", "", "why")
	fs.StringVar(&cfg.by, "by", "", "who answers (default: the key's id, else $USER)")
	fs.StringVar(&cfg.guidance, "guidance", "", "resume: guidance for the agent")
	fs.StringVar(&cfg.extend, "extend", "", `resume: limits to raise, as JSON (e.g. '{"maxCycleIterations":4}')`)
	fs.DurationVar(&cfg.window, "window", 10*time.Minute, fmt.Sprintf("how long the answer stays valid, in workflow time (from %s before now; at least %s, at most %s)", answerBackdate, minAnswerWindow, protocol.MaxAnswerWindow))
	fs.BoolVar(&cfg.signal, "signal", false, "send a signal instead of an update (the update, the default, says at once whether it was taken)")
	fs.StringVar(&cfg.signalName, "signal-name", "", "the signal to send, when the guard's Options rename it (default: the action, as ResumeSignal, EscalateSignal and HaltSignal default)")
	fs.StringVar(&cfg.updateName, "update-name", "", "the update to send, when the guard's Options rename it (default: the action, as ResumeUpdate and EscalateUpdate default)")
	fs.StringVar(&cfg.policy, "policy", defaultPolicy, `status of a run worker watch paused: the watcher's --policy, to judge its history by and show the halt with its evidence`)
	fs.StringVar(&cfg.searchAttribute, "search-attribute", defaultSearchAttribute, `list: the guard's Keyword search attribute (Options.SearchAttribute), whose "halted:<reason>" lists its halts; "none": list the runs Temporal's Workflow Pause holds only`)
	fs.StringVar(&cfg.statusQuery, "status-query", protocol.DefaultStatusQuery, "the query that reports the halt, when the guard's Options rename it (StatusQuery)")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "print the signed payload without sending it (for the Web UI or tctl)")
	fs.StringVar(&cfg.address, "address", "", "host:port of the Temporal frontend (default $TEMPORAL_ADDRESS, else the temporal CLI profile's, else 127.0.0.1:7233)")
	fs.StringVar(&cfg.namespace, "namespace", "", `namespace (default $TEMPORAL_NAMESPACE, else "default")`)
	fs.DurationVar(&cfg.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for the server")
	return fs
}

// parseAnswerFlags reads "answer [flags] ACTION [flags]": the flags may
// come before and after the action, as in the docs' examples.
func parseAnswerFlags(args []string) (answerConfig, error) {
	var cfg answerConfig
	fs := newAnswerFlagSet(&cfg)
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return cfg, err
			}
			return cfg, &usageError{err: err}
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) != 1 {
		return cfg, usagef("answer: want one action (resume, escalate, halt, status, unpause or list), got %q", rest)
	}
	cfg.action = protocol.Action(rest[0])
	switch {
	case cfg.action != protocol.ActionResume && cfg.action != protocol.ActionEscalate && cfg.action != protocol.ActionHalt &&
		cfg.action != actionStatus && cfg.action != actionUnpause && cfg.action != actionList:
		return cfg, usagef("answer: %q is not resume, escalate, halt, status, unpause or list", rest[0])
	case cfg.action == actionList && cfg.workflowID != "":
		return cfg, usagef("answer: list lists every run waiting for an answer: drop --workflow-id")
	case cfg.workflowID == "" && cfg.action != actionList:
		return cfg, usagef("answer: --workflow-id is required")
	case (cfg.action == actionStatus || cfg.action == actionUnpause || cfg.action == actionList) && cfg.keyPath != "":
		return cfg, usagef("answer: %s is not signed: drop --key", cfg.action)
	case cfg.window < minAnswerWindow:
		return cfg, usagef("answer: --window %s is too short to use: the window starts %s back (the server's clock may run behind this machine's), "+
			"so the answer would expire before it reaches the workflow; give at least %s", cfg.window, answerBackdate, minAnswerWindow)
	case cfg.window > protocol.MaxAnswerWindow:
		return cfg, usagef("answer: --window must be at most %s, got %s", protocol.MaxAnswerWindow, cfg.window)
	case (cfg.guidance != "" || cfg.extend != "") && cfg.action != protocol.ActionResume:
		return cfg, usagef("answer: --guidance and --extend go with resume only")
	case cfg.action == protocol.ActionHalt && cfg.updateName != "":
		return cfg, usagef("answer: --update-name does not go with halt, which is a signal only")
	case cfg.action == protocol.ActionHalt && !cfg.signal && !cfg.dryRun:
		cfg.signal = true // halt is a signal only
	}
	return cfg, nil
}

// runAnswer answers the halt in force of a workflow (or, for halt, asks
// for a stop after the halts it has had): signed with --key, plain
// without. status prints the guard's status; unpause lifts a Workflow
// Pause.
func runAnswer(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parseAnswerFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: %s %s --workflow-id ID [--key FILE] [flags] resume|escalate|halt|status|unpause [flags]\n"+
			"       %s %s list [--search-attribute NAME]\n\n"+
			"Answers a halt: an update (the default: it says at once whether it was taken), or a signal\n"+
			"for halt and with --signal; signed with --key when the worker's guard has operator keys.\n"+
			"status prints the guard's status; unpause lifts Temporal's Workflow Pause (worker watch's);\n"+
			"list lists the runs waiting for an answer.\n\n", progName, answerCommand, progName, answerCommand)
		fs := newAnswerFlagSet(&answerConfig{})
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return nil
	}
	if err != nil {
		return err
	}
	var keyID string
	var key ed25519.PrivateKey
	if cfg.keyPath != "" {
		if keyID, key, err = readPrivateKey(cfg.keyPath); err != nil {
			return &usageError{err: err}
		}
	}
	a := protocol.Answer{WorkflowID: cfg.workflowID, RunID: cfg.runID, Action: cfg.action,
		Reason: cfg.reason, By: cmp.Or(cfg.by, keyID, os.Getenv("USER")), Guidance: cfg.guidance, KeyID: keyID}
	if cfg.extend != "" {
		var req protocol.ResumeRequest
		if err := json.Unmarshal([]byte(`{"extend":`+cfg.extend+`}`), &req); err != nil {
			return usagef("answer: --extend: %v", err)
		}
		a.Extend = req.Extend
	}

	b, err := dialExternal(ctx, config{address: cfg.address, namespace: cfg.namespace, connectTimeout: cfg.connectTimeout, searchAttribute: searchAttributeNone}, nil, zap.NewNop())
	if err != nil {
		return err
	}
	defer func() { _ = b.close() }()
	c := b.client
	if a.Action == actionList {
		return listHalts(ctx, c, b.namespace, cfg.searchAttribute, stdout)
	}
	paused, err := describePaused(ctx, c, &a)
	if err != nil {
		return err
	}
	if a.Action == actionUnpause {
		return unpause(ctx, c, b.namespace, a, stdout)
	}
	if paused != nil {
		// A paused run takes no query, update or workflow task.
		return answerPaused(ctx, c, b.namespace, paused, a, cfg.policy, stdout)
	}
	v, err := c.QueryWorkflow(ctx, a.WorkflowID, a.RunID, cfg.statusQuery)
	if err != nil {
		if strings.Contains(err.Error(), "Paused") {
			return fmt.Errorf("workflow %s is paused (Temporal's Workflow Pause: worker watch pauses a looping run so): "+
				"lift the pause with %s %s --workflow-id %s unpause", a.WorkflowID, progName, answerCommand, a.WorkflowID)
		}
		return fmt.Errorf("query %s of workflow %s: %w", cfg.statusQuery, a.WorkflowID, err)
	}
	var st protocol.Status
	if err := v.Get(&st); err != nil {
		return fmt.Errorf("read %s: %w", cfg.statusQuery, err)
	}
	if a.Action == actionStatus {
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", out)
		return nil
	}
	switch {
	case a.Action == protocol.ActionHalt:
		a.HaltSeq = st.Halts
	case st.State != protocol.StateHalted || st.Halt == nil:
		return fmt.Errorf("workflow %s is not halted (state %s): nothing to %s", a.WorkflowID, st.State, a.Action)
	default:
		a.HaltSeq = st.Halt.Seq
	}
	var signed any = plainAnswer(a)
	if key != nil {
		a.NotBefore = time.Now().Add(-answerBackdate).UTC().Truncate(time.Second)
		a.NotAfter = a.NotBefore.Add(cfg.window)
		if signed, err = protocol.SignAnswer(a, key); err != nil {
			return err
		}
	}
	payload, err := json.Marshal(signed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", payload)
	if cfg.dryRun {
		return nil
	}
	// The guard takes a signed answer only under the name of its action:
	// the flag's, else the one the status reports (a guard before it
	// reported names reports none), else the default.
	name := cmp.Or(st.Names.For(a.Action, false), string(a.Action))
	if cfg.signal {
		name = cmp.Or(cfg.signalName, st.Names.For(a.Action, true), string(a.Action))
	} else if cfg.updateName != "" {
		name = cfg.updateName
	}
	if cfg.signal {
		if err := c.SignalWorkflow(ctx, a.WorkflowID, a.RunID, name, signed); err != nil {
			return fmt.Errorf("signal %s: %w", name, err)
		}
		fmt.Fprintf(stdout, "sent the %s signal to workflow %s run %s: %s shows whether it was taken\n", name, a.WorkflowID, a.RunID, cfg.statusQuery)
		return nil
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: a.WorkflowID, RunID: a.RunID, UpdateName: name,
		Args: []any{signed}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var d protocol.Decision
	if err == nil {
		err = h.Get(ctx, &d)
	}
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), "loopguard: ")
		switch {
		case key != nil && strings.Contains(reason, `unknown field "answer"`):
			return fmt.Errorf("%s refused: this worker's guard takes plain answers (it has no operator keys): send it again without --key", name)
		case key == nil && strings.Contains(reason, "unsigned"):
			return fmt.Errorf("%s refused: this worker's guard takes only signed answers: send it again with --key (your key file; make one with %s %s)", name, progName, keygenCommand)
		}
		return fmt.Errorf("%s refused: %s", name, reason)
	}
	fmt.Fprintf(stdout, "%s taken: halt %d of workflow %s answered by %s%s\n", d.Action, d.HaltSeq, a.WorkflowID, d.By, keyNote(d.KeyID))
	return nil
}

// keyNote names the key of a signed decision.
func keyNote(id string) string {
	if id == "" {
		return ""
	}
	return " (key " + id + ")"
}

// plainAnswer is the unsigned payload of a: the guard's request for its
// action.
func plainAnswer(a protocol.Answer) any {
	switch a.Action {
	case protocol.ActionResume:
		return protocol.ResumeRequest{Reason: a.Reason, By: a.By, Guidance: a.Guidance, Extend: a.Extend}
	case protocol.ActionEscalate:
		return protocol.EscalateRequest{Reason: a.Reason, By: a.By}
	}
	return protocol.HaltRequest{Reason: a.Reason, By: a.By}
}

// unpause lifts Temporal's Workflow Pause of the run: what worker watch
// sets on a looping run, which the guard's signals and updates cannot
// answer (a paused execution takes no workflow task, and refuses queries
// and updates).
func unpause(ctx context.Context, c client.Client, namespace string, a protocol.Answer, stdout io.Writer) error {
	reason := cmp.Or(a.Reason, "answered with "+progName+" "+answerCommand)
	_, err := c.WorkflowService().UnpauseWorkflowExecution(ctx, &workflowservice.UnpauseWorkflowExecutionRequest{
		Namespace: namespace, WorkflowId: a.WorkflowID, RunId: a.RunID,
		Identity: a.By, Reason: reason, RequestId: "loopguard-answer:" + a.WorkflowID + ":" + a.RunID + ":" + time.Now().UTC().Format(time.RFC3339Nano),
	})
	var fp *serviceerror.FailedPrecondition
	switch {
	case errors.As(err, &fp):
		return fmt.Errorf("workflow %s is not paused: %s", a.WorkflowID, fp.Message)
	case err != nil:
		return fmt.Errorf("unpause workflow %s: %w", a.WorkflowID, err)
	}
	fmt.Fprintf(stdout, "unpaused workflow %s run %s\n", a.WorkflowID, a.RunID)
	return nil
}
