package interceptor

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// PauseTimeoutAction is what happens when no human answers a pause within
// Options.PauseTimeout.
type PauseTimeoutAction string

// The pause timeout actions.
const (
	TimeoutEscalate PauseTimeoutAction = "escalate" // the default
	TimeoutResume   PauseTimeoutAction = "resume"
)

// Edge is a declared transition between two nodes.
type Edge = detect.Edge

// Observation is what the guard saw of one result; ResultHook may refine it.
type Observation = detect.Observation

// CallKind says what kind of guarded call a node is.
type CallKind string

// The guarded call kinds.
const (
	KindActivity      CallKind = "activity"
	KindLocalActivity CallKind = "local_activity"
	KindChildWorkflow CallKind = "child_workflow"
)

// Call describes one guarded call, for Options.NodeName.
type Call struct {
	Kind CallKind
	// Type is the activity or child workflow type name.
	Type string
	// Args are the call's arguments as the workflow passed them.
	Args []any
}

// Default values of the Options fields that are not thresholds. Threshold
// defaults come from detect.DefaultPolicy and are listed in the package doc.
const (
	defaultMemoKey         = "loopguard"
	defaultMaxPayloadBytes = 16 << 10
	defaultHaltTimeout     = 10 * time.Second
	// minHaltSignalTimeout is the shortest HaltSignalTimeout New accepts.
	minHaltSignalTimeout = time.Second
)

// Options configures the guard. The zero value is a working guard with the
// defaults documented on each field (and in the package doc's table). Every
// field is pinned per execution when the execution starts: redeploying a
// worker with other Options never changes the policy of in-flight workflows.
//
// New refuses a value outside a field's range with an *OptionError naming
// the field (ParsePolicy a *PolicyError naming its JSON path), and the
// config an execution pins is only what New accepted, so that no value can
// fail a workflow's task or switch a detector off without a word. Unless a
// field says otherwise, a number's range is 0 (its default) and up, and a
// name or path is valid UTF-8 without surrounding spaces (the config is
// pinned as JSON, which carries nothing else). No accepted Options turn
// every detector off: a loop goes unhalted only when its nodes are Exempt
// or its execution is not guarded (Workflows, GuardWorkflow, Retire), and
// under OnHaltObserve its halts are recorded without blocking
// (docs/configuration.md, "Accepted values").
type Options struct {
	// Grain says what one guarded call is, which sets the default budgets.
	// GrainTurn (the zero value): a whole agent turn (coder↔verifier,
	// planner→researcher), with the seeds' budgets below. GrainToolCall:
	// one model call or one tool call of an LLM↔tool loop, where a real
	// 100-step run makes 100 model calls: 150 steps per node, 150
	// iterations per cycle, 30 transitions without progress
	// (detect.ToolCallPolicy). A field set here overrides either.
	Grain Grain
	// MaxCallsPerNode caps the steps of one node (activity, local activity
	// or child workflow type) per execution. Concurrent calls of one node
	// count as one step (fan-out). Default 10.
	MaxCallsPerNode int
	// MaxNodeRuntime caps the workflow time spent in one node's calls.
	// Default 0: no limit.
	MaxNodeRuntime time.Duration
	// MaxTotalCalls caps all guarded calls of an execution, fan-out
	// included. Default 1000.
	MaxTotalCalls int
	// MaxCost caps the summed cost of an execution (cost is read by a
	// node's CostField). Default 0: no limit. A finite number, not
	// negative: NaN and ±Inf are refused.
	MaxCost float64
	// MaxCycleIterations caps the iterations of one detected cycle ("Loop
	// 8/8"). Default 8.
	MaxCycleIterations int
	// MaxCycleRuntime caps the workflow time since a cycle started. Default
	// 0: no limit.
	MaxCycleRuntime time.Duration
	// MaxCycleCost caps the summed cost of a cycle's nodes. Default 0: no
	// limit. A finite number, not negative, as MaxCost.
	MaxCycleCost float64
	// MaxEdgeWithoutProgress caps how often one transition A→B is taken
	// without progress observed at B; progress resets it. Default 5.
	MaxEdgeWithoutProgress int
	// RepeatThreshold is how many times a period of calls in which every
	// node calls once (coder→verifier; a model turn and its tool call)
	// must come round with the same results to mean "stalled"
	// (identical_output), and how often a round of three or more nodes
	// showing only results seen before means "oscillating"
	// (transition_oscillation). Default 3. 0, or 2 to Window and to 96
	// (detect.SequenceSteps, the steps the loop rule keeps): 1 is refused
	// (one result is no repetition), and more than the loop rule keeps
	// would be read as 2. A period too long for RepeatThreshold repeats to
	// fit in those steps is held to two.
	RepeatThreshold int
	// ErrorRepeatThreshold is how many identical error signatures of a node
	// in a row mean "repeated_error" (the loop rule halts at the next one,
	// whatever was tried before each call). Default 3. 0, or 2 to Window
	// and to 95 (one failure fewer than the loop rule's steps).
	ErrorRepeatThreshold int
	// StallIterations is how many steps with an unchanged declared progress
	// value mean "stalled". Default 3. 0 or 2 to Window, as
	// RepeatThreshold.
	StallIterations int
	// NoImproveIterations is how many steps without a better declared
	// metric mean "stalled". Default 3. 0 to Window.
	NoImproveIterations int
	// OscillationPeriods is how many full periods of a repeating pattern
	// in which a node calls twice or more (a model alternating between two
	// tools: A/B/A/B is two periods) mean "oscillating". The loop rule
	// looks for periods of up to detect.MaxLoopPeriod calls.
	// Default 2. 0, or 2 to 48 (the loop rule's steps hold that many
	// periods of two), with OscillationPeriods × MaxOscillationPeriod at
	// most Window.
	OscillationPeriods int
	// MaxOscillationPeriod sizes the history OscillationPeriods needs:
	// OscillationPeriods × MaxOscillationPeriod is at most Window (the
	// loop rule itself looks for periods of up to detect.MaxLoopPeriod
	// calls). 0 turns output_oscillation off. Default 3. 0 or at least 2,
	// as OscillationPeriods.
	MaxOscillationPeriod int
	// Window is how many entries of history the guard keeps per node, and
	// the length of each evidence list. Default 8. At most 256
	// (detect.MaxWindow, the longest history the guard keeps: it would cut
	// a longer one, and a threshold beyond the cut could never be met),
	// and at least every threshold above and OscillationPeriods ×
	// MaxOscillationPeriod.
	Window int
	// IgnoreFields are JSON field paths removed from every result before it
	// is hashed (timestamps, run ids). Default none.
	IgnoreFields []string
	// Nodes holds per-node overrides, keyed by node name. Default none.
	// A key is a non-blank node name without surrounding spaces (one with
	// spaces would never match); a key that names no node of a workflow
	// is never read.
	Nodes map[string]NodeOptions
	// Graph declares the workflow's transition graph up front, so cycles
	// are known before they are observed. Default none: learnt at run time.
	// Each edge names both ends, without surrounding spaces.
	Graph []Edge

	// Warnings is how many warnings a stuck loop gets before it halts. A
	// warning is a detector's trip (not a budget's,
	// not a human's stop) that does not pause: the call goes ahead
	// carrying the warning in its Notice, with a directive the agent can
	// put in its prompt, and the detector starts over. If the same loop
	// trips again, it gets the next warning, until they are spent; then it
	// halts, and the halt's evidence lists the warnings it did not heed.
	// Default 0: a trip halts at once, as before. Any number from 0: each
	// warning lengthens the bound within which a stuck loop is halted
	// (HaltBound) by a detector's retrip, and the budgets halt the loop
	// whatever warnings are left.
	Warnings int
	// CountRepeats sets Notice.Repeats: each guarded
	// call is told how many calls of this run before it had the same node
	// and the same arguments, so that a tool can answer "no new
	// information" instead of running again. Default false: it costs one
	// encoding of each call's arguments with the default data converter,
	// and replay pays it again. See Notice.Repeats for its limits.
	CountRepeats bool

	// OnHalt is what a halt does. Default OnHaltPause.
	OnHalt protocol.OnHalt
	// PauseTimeout ends a pause nobody answered with OnPauseTimeout.
	// Default 0: wait for a human forever.
	PauseTimeout time.Duration
	// OnPauseTimeout is what a PauseTimeout does. Default TimeoutEscalate.
	OnPauseTimeout PauseTimeoutAction

	// ResumeSignal, EscalateSignal, HaltSignal, HaltedSignal, StatusQuery,
	// ResumeUpdate and EscalateUpdate rename the protocol. Defaults: the
	// Default* constants. Each is a non-blank name without surrounding
	// spaces that does not start with "__" (Temporal's own: the SDK
	// refuses such query and update handlers); the four signals differ
	// from each other, and the two updates.
	ResumeSignal   string
	EscalateSignal string
	HaltSignal     string
	HaltedSignal   string
	StatusQuery    string
	ResumeUpdate   string
	EscalateUpdate string

	// SupervisorWorkflowID, when set, also receives every loop.halted
	// signal. Default none. No surrounding spaces.
	SupervisorWorkflowID string
	// SearchAttribute names a registered Keyword search attribute the guard
	// sets to "halted:<reason>", "escalated:<reason>" or "running" on halts
	// and decisions, so halted workflows can be listed (HaltsQuery). It must
	// be registered on the namespace first (RegisterSearchAttributes does
	// it): an unregistered one makes the halt's workflow task fail until it
	// is. Default none: not set.
	SearchAttribute string
	// PausedSinceAttribute names a registered Datetime search attribute the
	// guard sets to the workflow time a pause began, and unsets when it
	// ends, so that count queries can tell how long workflows have been
	// paused (the worker's loopguard_oldest_pause_seconds) without listing
	// them (the queries also need SearchAttribute). It must be registered
	// on the namespace first. Default none: not set.
	PausedSinceAttribute string
	// MemoKey is the memo entry holding the guard's state summary, upserted
	// on halts and decisions, and when warnings are issued or heeded. Default "loopguard". No surrounding spaces.
	MemoKey string
	// MaxPayloadBytes caps a human's signal or update payload. Default 16 KiB.
	MaxPayloadBytes int
	// HaltSignalTimeout bounds the local activity that raises loop.halted.
	// Default 10s. At least 1s: a local activity given less may never
	// get to raise it.
	HaltSignalTimeout time.Duration
	// OperatorKeys are the Ed25519 public keys of the people who may
	// answer a halt. Set, a resume, escalate or halt (signal or update) is
	// taken only as a SignedAnswer signed by one of them for this
	// execution, this halt and this action, inside its validity window of
	// workflow time; anything else is refused (Status.Refused) and the
	// halt stays in force. The worker needs no secret. Default none:
	// answers are plain JSON, taken from any sender. Pinned: rotating keys
	// changes only executions started afterwards (see docs/protocol.md).
	OperatorKeys []OperatorKey

	// NodeName refines a call's node name (say, per tool or per agent role
	// read from the arguments). It must be deterministic. Returning ""
	// keeps the default: the activity or child workflow type. Not pinned:
	// changing it is a workflow code change.
	NodeName func(Call) string
	// ResultHook lets Go code refine what the guard reads from a result
	// (progress, metric, cost) when JSON field paths are not enough. data
	// is the result payload (JSON with the default converter). Not pinned.
	ResultHook func(node string, data []byte, obs *Observation)
	// GuardWorkflow chooses which new executions are guarded. Default: all.
	// Executions already guarded stay guarded whatever it returns.
	GuardWorkflow func(info *workflow.Info) bool
	// Workflows names the workflow types whose new executions are guarded,
	// e.g. []string{"AgentLoop"}. Default none: every workflow type. With
	// GuardWorkflow too, an execution is guarded when both agree.
	// Executions already guarded stay guarded whatever it says. Not pinned:
	// it only decides about new executions.
	Workflows []string

	// Retire is the first step of removing or rolling back the guard (see
	// docs/rollback.md). Executions already guarded keep their guard, with
	// their pinned options, so their histories replay and they finish as
	// they started; new executions, continued runs included, are left
	// unguarded and get neither a version marker nor pinned options, so no
	// new history depends on the guard. Not pinned.
	Retire bool
}

// NodeOptions overrides Options for one node. Zero fields inherit.
type NodeOptions struct {
	// MaxCalls overrides MaxCallsPerNode.
	MaxCalls int
	// MaxRuntime overrides MaxNodeRuntime.
	MaxRuntime time.Duration
	// Exempt nodes (pollers, heartbeats, reporting) are never counted as
	// steps or transitions, and no detector or budget of theirs halts a
	// workflow; their calls count towards MaxTotalCalls, which bounds even
	// a loop of exempt nodes.
	Exempt bool
	// IgnoreFields are JSON field paths removed before hashing, added to
	// Options.IgnoreFields.
	IgnoreFields []string
	// ProgressFields are JSON field paths whose values form the node's
	// progress signal (a diff hash, a checklist): unchanged for
	// StallIterations steps means stalled; a change resets edge counters.
	ProgressFields []string
	// MetricField is a numeric JSON field path (failing test count) that
	// must improve within NoImproveIterations steps.
	MetricField string
	// HigherIsBetter flips MetricField's direction (default: lower is better).
	HigherIsBetter bool
	// CostField is a numeric JSON field path added to the cost budgets.
	CostField string
}

// config is the validated, defaulted form of Options. Its JSON form is
// pinned in each execution's history; the hooks are not.
type config struct {
	Policy            detect.Policy      `json:"policy"`
	OnHalt            protocol.OnHalt    `json:"onHalt"`
	Warnings          int                `json:"warnings,omitempty"`
	CountRepeats      bool               `json:"countRepeats,omitempty"`
	PauseTimeout      time.Duration      `json:"pauseTimeout,omitempty"`
	OnPauseTimeout    PauseTimeoutAction `json:"onPauseTimeout"`
	ResumeSignal      string             `json:"resumeSignal"`
	EscalateSignal    string             `json:"escalateSignal"`
	HaltSignal        string             `json:"haltSignal"`
	HaltedSignal      string             `json:"haltedSignal"`
	StatusQuery       string             `json:"statusQuery"`
	ResumeUpdate      string             `json:"resumeUpdate"`
	EscalateUpdate    string             `json:"escalateUpdate"`
	Supervisor        string             `json:"supervisor,omitempty"`
	SearchAttribute   string             `json:"searchAttribute,omitempty"`
	PausedSince       string             `json:"pausedSinceAttribute,omitempty"`
	MemoKey           string             `json:"memoKey"`
	MaxPayloadBytes   int                `json:"maxPayloadBytes"`
	HaltSignalTimeout time.Duration      `json:"haltSignalTimeout"`
	// OperatorKeys are pinned with the rest: an execution verifies its
	// answers with the keys it started with, live and in replay.
	OperatorKeys []OperatorKey `json:"operatorKeys,omitempty"`
}

// hooks are the Options functions: code, so never pinned.
type hooks struct {
	nodeName      func(Call) string
	resultHook    func(node string, data []byte, obs *Observation)
	guardWorkflow func(info *workflow.Info) bool
	retire        bool
	// workflows are Options.Workflows, to name a near miss in the log.
	workflows []string
}

// Grain is what one guarded call is (Options.Grain).
type Grain string

// The grains.
const (
	// GrainTurn: a call is a whole agent turn (the default).
	GrainTurn Grain = ""
	// GrainToolCall: a call is one model call or one tool call.
	GrainToolCall Grain = "tool_call"
)

// buildConfig validates o and fills in the defaults.
func buildConfig(o Options) (config, hooks, error) {
	def := detect.DefaultPolicy()
	switch o.Grain {
	case GrainTurn:
	case GrainToolCall:
		def = detect.ToolCallPolicy()
	default:
		return config{}, hooks{}, &OptionError{Field: "Grain", Reason: fmt.Sprintf("unknown grain %q (want \"\" for agent turns or %q)", o.Grain, GrainToolCall)}
	}
	c := config{
		OnHalt:            pick(o.OnHalt, protocol.OnHaltPause),
		Warnings:          o.Warnings,
		CountRepeats:      o.CountRepeats,
		PauseTimeout:      o.PauseTimeout,
		OnPauseTimeout:    pick(o.OnPauseTimeout, TimeoutEscalate),
		ResumeSignal:      pick(o.ResumeSignal, protocol.DefaultResumeSignal),
		EscalateSignal:    pick(o.EscalateSignal, protocol.DefaultEscalateSignal),
		HaltSignal:        pick(o.HaltSignal, protocol.DefaultHaltSignal),
		HaltedSignal:      pick(o.HaltedSignal, protocol.DefaultHaltedSignal),
		StatusQuery:       pick(o.StatusQuery, protocol.DefaultStatusQuery),
		ResumeUpdate:      pick(o.ResumeUpdate, protocol.DefaultResumeUpdate),
		EscalateUpdate:    pick(o.EscalateUpdate, protocol.DefaultEscalateUpdate),
		Supervisor:        o.SupervisorWorkflowID,
		SearchAttribute:   o.SearchAttribute,
		PausedSince:       o.PausedSinceAttribute,
		MemoKey:           pick(o.MemoKey, defaultMemoKey),
		MaxPayloadBytes:   pick(o.MaxPayloadBytes, defaultMaxPayloadBytes),
		HaltSignalTimeout: pick(o.HaltSignalTimeout, defaultHaltTimeout),
	}
	keys, err := validateOperatorKeys(o.OperatorKeys)
	if err != nil {
		return config{}, hooks{}, err
	}
	c.OperatorKeys = keys
	h := hooks{nodeName: o.NodeName, resultHook: o.ResultHook, guardWorkflow: o.GuardWorkflow, retire: o.Retire}
	sel, err := selectWorkflows(o.Workflows, o.GuardWorkflow)
	if err != nil {
		return config{}, hooks{}, err
	}
	h.guardWorkflow = sel
	h.workflows = slices.Clone(o.Workflows)

	ints := []struct {
		field string
		v     int
		def   int
		dst   *int
	}{
		{"MaxCallsPerNode", o.MaxCallsPerNode, def.MaxCallsPerNode, &c.Policy.MaxCallsPerNode},
		{"MaxTotalCalls", o.MaxTotalCalls, def.MaxTotalCalls, &c.Policy.MaxTotalCalls},
		{"MaxCycleIterations", o.MaxCycleIterations, def.MaxCycleIterations, &c.Policy.MaxCycleIterations},
		{"MaxEdgeWithoutProgress", o.MaxEdgeWithoutProgress, def.MaxEdgeWithoutProgress, &c.Policy.MaxEdgeWithoutProgress},
		{"RepeatThreshold", o.RepeatThreshold, def.RepeatThreshold, &c.Policy.RepeatThreshold},
		{"ErrorRepeatThreshold", o.ErrorRepeatThreshold, def.ErrorRepeatThreshold, &c.Policy.ErrorRepeatThreshold},
		{"StallIterations", o.StallIterations, def.StallIterations, &c.Policy.StallIterations},
		{"NoImproveIterations", o.NoImproveIterations, def.NoImproveIterations, &c.Policy.NoImproveIterations},
		{"OscillationPeriods", o.OscillationPeriods, def.OscillationPeriods, &c.Policy.OscillationPeriods},
		{"MaxOscillationPeriod", o.MaxOscillationPeriod, def.MaxOscillationPeriod, &c.Policy.MaxOscillationPeriod},
		{"Window", o.Window, def.Window, &c.Policy.Window},
		{"MaxPayloadBytes", o.MaxPayloadBytes, defaultMaxPayloadBytes, &c.MaxPayloadBytes},
		{"Warnings", o.Warnings, 0, &c.Warnings},
	}
	for _, f := range ints {
		if f.v < 0 {
			return config{}, hooks{}, &OptionError{Field: f.field, Reason: fmt.Sprintf("must not be negative, got %d", f.v)}
		}
		*f.dst = pick(f.v, f.def)
	}
	// The detectors read repetition only from two results on: a threshold
	// of 1 would switch its detector off without a word (detect's
	// newLimits reads it as off), so it is refused.
	for _, f := range []struct {
		field string
		v     int
	}{
		{"RepeatThreshold", o.RepeatThreshold},
		{"ErrorRepeatThreshold", o.ErrorRepeatThreshold},
		{"StallIterations", o.StallIterations},
	} {
		if f.v == 1 {
			return config{}, hooks{}, &OptionError{Field: f.field, Reason: "must be at least 2 (one result is no repetition; 0 is the default)"}
		}
	}
	durations := []struct {
		field string
		v     time.Duration
	}{
		{"MaxNodeRuntime", o.MaxNodeRuntime},
		{"MaxCycleRuntime", o.MaxCycleRuntime},
		{"PauseTimeout", o.PauseTimeout},
		{"HaltSignalTimeout", o.HaltSignalTimeout},
	}
	for _, f := range durations {
		if f.v < 0 {
			return config{}, hooks{}, &OptionError{Field: f.field, Reason: fmt.Sprintf("must not be negative, got %s", f.v)}
		}
	}
	if o.HaltSignalTimeout > 0 && o.HaltSignalTimeout < minHaltSignalTimeout {
		// A local activity given less never raises loop.halted: the
		// supervisor and the workflow's history would miss every halt.
		return config{}, hooks{}, &OptionError{Field: "HaltSignalTimeout", Reason: fmt.Sprintf("must be at least %s (or 0 for the default %s), got %s", minHaltSignalTimeout, defaultHaltTimeout, o.HaltSignalTimeout)}
	}
	c.Policy.MaxNodeRuntime = o.MaxNodeRuntime
	c.Policy.MaxCycleRuntime = o.MaxCycleRuntime
	for _, f := range []struct {
		field string
		v     float64
	}{{"MaxCost", o.MaxCost}, {"MaxCycleCost", o.MaxCycleCost}} {
		// NaN and ±Inf are refused: the config is pinned as JSON, which
		// has no form for them, so every guarded workflow would fail its
		// first task.
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return config{}, hooks{}, &OptionError{Field: f.field, Reason: fmt.Sprintf("must be a finite number, not negative, got %g", f.v)}
		}
	}
	c.Policy.MaxCost = o.MaxCost
	c.Policy.MaxCycleCost = o.MaxCycleCost
	c.Policy.MaxNodes = def.MaxNodes

	if c.Policy.OscillationPeriods < 2 {
		return config{}, hooks{}, &OptionError{Field: "OscillationPeriods", Reason: "must be at least 2 (one period is no repetition)"}
	}
	if c.Policy.MaxOscillationPeriod < 2 {
		return config{}, hooks{}, &OptionError{Field: "MaxOscillationPeriod", Reason: "must be at least 2 (period 1 is RepeatThreshold's job)"}
	}
	type limit struct {
		field string
		v     int
	}
	thresholds := []limit{
		{"RepeatThreshold", c.Policy.RepeatThreshold},
		{"ErrorRepeatThreshold", c.Policy.ErrorRepeatThreshold},
		{"StallIterations", c.Policy.StallIterations},
		{"NoImproveIterations", c.Policy.NoImproveIterations},
		{"OscillationPeriods", c.Policy.OscillationPeriods},
		{"MaxOscillationPeriod", c.Policy.MaxOscillationPeriod},
	}
	// The detectors keep at most detect.MaxWindow entries and would cut a
	// longer window, switching off a threshold beyond the cut: refused
	// here instead, each field by its own name. The product below cannot
	// overflow once both factors are this small.
	for _, t := range append(thresholds, limit{"Window", c.Policy.Window}) {
		if t.v > detect.MaxWindow {
			return config{}, hooks{}, &OptionError{Field: t.field, Reason: fmt.Sprintf("must be at most %d (the longest history the guard keeps), got %d", detect.MaxWindow, t.v)}
		}
	}
	// The loop rule reads the last
	// detect.SequenceSteps steps: a threshold whose repeats do not fit
	// there even for the shortest period it applies to (one step, two
	// for a node stepping twice) would be read as 2, halting far sooner
	// than asked, and a run of failures beyond it is never seen.
	for _, t := range []struct {
		limit
		most int
	}{
		{limit{"RepeatThreshold", c.Policy.RepeatThreshold}, detect.SequenceSteps},
		{limit{"OscillationPeriods", c.Policy.OscillationPeriods}, detect.SequenceSteps / 2},
		{limit{"ErrorRepeatThreshold", c.Policy.ErrorRepeatThreshold}, detect.SequenceSteps - 1},
	} {
		if t.v > t.most {
			return config{}, hooks{}, &OptionError{Field: t.field, Reason: fmt.Sprintf("must be at most %d (the loop rule reads the last %d steps), got %d", t.most, detect.SequenceSteps, t.v)}
		}
	}
	thresholds = append(thresholds, limit{"OscillationPeriods × MaxOscillationPeriod", c.Policy.OscillationPeriods * c.Policy.MaxOscillationPeriod})
	for _, t := range thresholds {
		if t.v > c.Policy.Window {
			return config{}, hooks{}, &OptionError{Field: "Window", Reason: fmt.Sprintf("%d is smaller than %s (%d): the guard could never see that many", c.Policy.Window, t.field, t.v)}
		}
	}

	switch c.OnHalt {
	case protocol.OnHaltPause, protocol.OnHaltFail, protocol.OnHaltObserve:
	default:
		return config{}, hooks{}, &OptionError{Field: "OnHalt", Reason: fmt.Sprintf("unknown action %q (want pause, fail or observe)", c.OnHalt)}
	}
	switch c.OnPauseTimeout {
	case TimeoutEscalate, TimeoutResume:
	default:
		return config{}, hooks{}, &OptionError{Field: "OnPauseTimeout", Reason: fmt.Sprintf("unknown action %q (want escalate or resume)", c.OnPauseTimeout)}
	}

	if err := validateNames(c); err != nil {
		return config{}, hooks{}, err
	}
	for _, n := range []struct{ field, v string }{
		{"SearchAttribute", c.SearchAttribute},
		{"PausedSinceAttribute", c.PausedSince},
		{"SupervisorWorkflowID", c.Supervisor},
		{"MemoKey", c.MemoKey},
	} {
		if strings.TrimSpace(n.v) != n.v {
			return config{}, hooks{}, &OptionError{Field: n.field, Reason: fmt.Sprintf("must not have surrounding spaces, got %q", n.v)}
		}
		if err := validText(n.field, n.v); err != nil {
			return config{}, hooks{}, err
		}
	}
	switch {
	case c.PausedSince != "" && c.PausedSince == c.SearchAttribute:
		return config{}, hooks{}, &OptionError{Field: "PausedSinceAttribute", Reason: "must differ from SearchAttribute (one is a Keyword, the other a Datetime)"}
	}

	if err := validatePaths("IgnoreFields", o.IgnoreFields); err != nil {
		return config{}, hooks{}, err
	}
	c.Policy.Nodes = map[string]detect.NodePolicy{}
	for _, name := range slices.Sorted(maps.Keys(o.Nodes)) {
		n := o.Nodes[name]
		field := fmt.Sprintf("Nodes[%s]", name)
		if strings.TrimSpace(name) == "" {
			return config{}, hooks{}, &OptionError{Field: "Nodes", Reason: "node name must not be empty"}
		}
		if strings.TrimSpace(name) != name {
			// Node names are activity and workflow type names: one with
			// surrounding spaces would never match, and its options would
			// be off without a word.
			return config{}, hooks{}, &OptionError{Field: "Nodes", Reason: fmt.Sprintf("node name must not have surrounding spaces, got %q", name)}
		}
		if err := validText("Nodes", name); err != nil {
			return config{}, hooks{}, err
		}
		if n.MaxCalls < 0 {
			return config{}, hooks{}, &OptionError{Field: field + ".MaxCalls", Reason: fmt.Sprintf("must not be negative, got %d", n.MaxCalls)}
		}
		if n.MaxRuntime < 0 {
			return config{}, hooks{}, &OptionError{Field: field + ".MaxRuntime", Reason: fmt.Sprintf("must not be negative, got %s", n.MaxRuntime)}
		}
		for _, p := range []struct {
			name  string
			paths []string
		}{
			{".IgnoreFields", n.IgnoreFields},
			{".ProgressFields", n.ProgressFields},
			{".MetricField", nonEmpty(n.MetricField)},
			{".CostField", nonEmpty(n.CostField)},
		} {
			if err := validatePaths(field+p.name, p.paths); err != nil {
				return config{}, hooks{}, err
			}
		}
		c.Policy.Nodes[name] = detect.NodePolicy{
			MaxCalls:       n.MaxCalls,
			MaxRuntime:     n.MaxRuntime,
			Exempt:         n.Exempt,
			HigherIsBetter: n.HigherIsBetter,
			Rules: detect.Rules{
				IgnoreFields:   n.IgnoreFields,
				ProgressFields: n.ProgressFields,
				MetricField:    n.MetricField,
				CostField:      n.CostField,
			},
		}
	}
	c.Policy.IgnoreFields = o.IgnoreFields
	for i, e := range o.Graph {
		field := fmt.Sprintf("Graph[%d]", i)
		if strings.TrimSpace(e.From) == "" || strings.TrimSpace(e.To) == "" {
			return config{}, hooks{}, &OptionError{Field: field, Reason: "edge needs both From and To"}
		}
		for _, end := range []string{e.From, e.To} {
			if strings.TrimSpace(end) != end {
				return config{}, hooks{}, &OptionError{Field: field, Reason: fmt.Sprintf("node name must not have surrounding spaces, got %q", end)}
			}
			if err := validText(field, end); err != nil {
				return config{}, hooks{}, err
			}
		}
	}
	c.Policy.Graph = o.Graph
	// The config must not alias the caller's slices and maps.
	return c.clone(), h, nil
}

// clone returns a deep copy of c: executions never share the config's maps
// and slices with each other or with the worker.
func (c config) clone() config {
	c.Policy.IgnoreFields = slices.Clone(c.Policy.IgnoreFields)
	c.Policy.Graph = slices.Clone(c.Policy.Graph)
	if c.Policy.Nodes != nil {
		nodes := make(map[string]detect.NodePolicy, len(c.Policy.Nodes))
		for name, n := range c.Policy.Nodes {
			n.Rules.IgnoreFields = slices.Clone(n.Rules.IgnoreFields)
			n.Rules.ProgressFields = slices.Clone(n.Rules.ProgressFields)
			nodes[name] = n
		}
		c.Policy.Nodes = nodes
	}
	return c
}

// validateNames rejects blank or clashing protocol names.
func validateNames(c config) error {
	names := []struct{ field, v string }{
		{"ResumeSignal", c.ResumeSignal},
		{"EscalateSignal", c.EscalateSignal},
		{"HaltSignal", c.HaltSignal},
		{"HaltedSignal", c.HaltedSignal},
		{"StatusQuery", c.StatusQuery},
		{"ResumeUpdate", c.ResumeUpdate},
		{"EscalateUpdate", c.EscalateUpdate},
	}
	signals := map[string]string{}
	for i, n := range names {
		if strings.TrimSpace(n.v) == "" || strings.TrimSpace(n.v) != n.v {
			return &OptionError{Field: n.field, Reason: fmt.Sprintf("must be a non-blank name without surrounding spaces, got %q", n.v)}
		}
		if err := validText(n.field, n.v); err != nil {
			return err
		}
		if strings.HasPrefix(n.v, "__") {
			// The SDK refuses query and update handlers so named, and the
			// status query is registered in every workflow: each one would
			// fail. Signals follow suit: the prefix is Temporal's.
			return &OptionError{Field: n.field, Reason: fmt.Sprintf("must not start with \"__\" (reserved for Temporal's own), got %q", n.v)}
		}
		if i < 4 { // signal names share one namespace
			if other, ok := signals[n.v]; ok {
				return &OptionError{Field: n.field, Reason: fmt.Sprintf("%q is already the name of %s", n.v, other)}
			}
			signals[n.v] = n.field
		}
	}
	if c.ResumeUpdate == c.EscalateUpdate {
		return &OptionError{Field: "EscalateUpdate", Reason: fmt.Sprintf("%q is already the name of ResumeUpdate", c.EscalateUpdate)}
	}
	return nil
}

// validatePaths rejects empty JSON field paths and empty path segments.
func validatePaths(field string, paths []string) error {
	for i, p := range paths {
		f := fmt.Sprintf("%s[%d]", field, i)
		if p == "" || strings.Contains(p, "..") || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") {
			return &OptionError{Field: f, Reason: fmt.Sprintf("invalid JSON field path %q (want dot-separated keys like \"report.failing\")", p)}
		}
		if err := validText(f, p); err != nil {
			return err
		}
	}
	return nil
}

// validText rejects a string the pinned config cannot carry: the config
// is pinned as JSON, which replaces bytes that are not UTF-8, so the
// execution would run with another name or path than the worker's (and
// protobuf refuses such names outright).
func validText(field, s string) error {
	if !utf8.ValidString(s) {
		return &OptionError{Field: field, Reason: fmt.Sprintf("must be valid UTF-8, got %q", s)}
	}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// pick returns v, or def when v is the zero value.
func pick[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
