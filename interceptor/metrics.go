package interceptor

import (
	"time"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The guard's metrics beyond halts, resumes and escalations (whose names
// are declared with the halt logic). All are recorded through the workflow
// metrics handler, which drops them during replay, so a replayed halt is
// never counted twice. Labels are bounded: halt reasons, detectors and
// policies are enums, call kinds are three, input names are the guard's own
// protocol names. No workflow ids and no node names: a fleet has too many.
const (
	// MetricGuardedCalls counts guarded calls by kind (activity,
	// local_activity, child_workflow): the denominator of a halt rate.
	MetricGuardedCalls = "loopguard_guarded_calls"
	// MetricRejectedInputs counts human inputs the guard refused (bad
	// payload, nothing halted, already answered), by signal or update name.
	MetricRejectedInputs = "loopguard_rejected_inputs"
	// MetricPauseWait is the workflow time a paused call waited for its
	// decision, by halt reason and decision (resume or escalate).
	MetricPauseWait = "loopguard_pause_wait"
	// MetricPausedWorkflows is the number of workflows paused now. Workflow
	// code cannot know it; a worker computes it from visibility (see
	// PausedQuery) and sets this gauge.
	MetricPausedWorkflows = "loopguard_paused_workflows"
	// MetricOldestPause is how long, in seconds, the longest-paused running
	// workflow has been paused, from the pause's start as the workflow
	// recorded it (Options.PausedSinceAttribute): the same for every worker,
	// and unchanged when workers restart. Also set by a worker from
	// visibility, with count queries only (see PausedSinceQuery).
	MetricOldestPause = "loopguard_oldest_pause_seconds"
	// MetricSearchAttributeEnabled is 1 when the guard sets its search
	// attributes on this worker's namespace, 0 when it cannot (not
	// registered): then nothing paused can be counted, and the paused
	// gauges and alerts are blind. Set by a worker.
	MetricSearchAttributeEnabled = "loopguard_search_attribute_enabled"
)

// Metric label names.
const (
	labelReason   = "reason"
	labelDetector = "detector"
	labelOnHalt   = "on_halt"
	labelKind     = "kind"
	labelInput    = "input"
	labelDecision = "decision"
)

// PausedQuery is the visibility query that finds the workflows a guard
// holds paused, for a guard configured with the search attribute attr. Only
// running executions count: one terminated or timed out while paused keeps
// its last "halted:<reason>" value.
func PausedQuery(attr string) string {
	return attr + ` STARTS_WITH "` + string(protocol.StateHalted) + `" AND ExecutionStatus = "Running"`
}

// PausedSinceQuery is PausedQuery narrowed to the pauses that began at or
// before t, for a guard configured with the search attributes attr and
// since (Options.PausedSinceAttribute). Counting it for a few t finds the
// oldest pause without listing the paused.
func PausedSinceQuery(attr, since string, t time.Time) string {
	return PausedQuery(attr) + " AND " + since + ` <= "` + t.UTC().Format(time.RFC3339Nano) + `"`
}

// guardMetrics caches the one instrument recorded on the hot path, the
// guarded-call counter, so a call costs no tag maps or handler wrappers.
// The workflow's handler checks for replay when a counter is incremented,
// not when it is made, so caching keeps replay silent.
type guardMetrics struct {
	// calls are the guarded-call counters by kind, indexed by kindIndex:
	// an array, so that counting a call hashes no string.
	calls [3]client.MetricsCounter
}

// kindIndex numbers the three call kinds for guardMetrics.calls.
func kindIndex(kind CallKind) int {
	switch kind {
	case KindLocalActivity:
		return 1
	case KindChildWorkflow:
		return 2
	}
	return 0
}

// countCall counts one guarded call of the given kind.
func (g *guard) countCall(ctx workflow.Context, kind CallKind) {
	i := kindIndex(kind)
	c := g.metrics.calls[i]
	if c == nil {
		c = g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelKind: string(kind)}).Counter(MetricGuardedCalls)
		g.metrics.calls[i] = c
	}
	c.Inc(1)
}

// countHalt counts a halt by reason, detector and the policy applied.
func (g *guard) countHalt(ctx workflow.Context, ev protocol.HaltEvent, policy protocol.OnHalt) {
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{
		labelReason:   string(ev.HaltReason),
		labelDetector: string(ev.Detector),
		labelOnHalt:   string(policy),
	}).Counter(MetricHalts).Inc(1)
}

// countDecision counts a resume or an escalation, by the reason of the halt
// it answered.
func (g *guard) countDecision(ctx workflow.Context, name string, ev *protocol.HaltEvent) {
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelReason: haltReasonOf(ev)}).Counter(name).Inc(1)
}

// recordPauseWait records how long a paused call waited for decision d, in
// workflow time (workflow.Now), which is what the history shows.
func (g *guard) recordPauseWait(ctx workflow.Context, ev protocol.HaltEvent, d protocol.Decision) {
	wait := workflow.Now(ctx).Sub(ev.WorkflowTime)
	if wait < 0 {
		wait = 0
	}
	g.next.GetMetricsHandler(ctx).WithTags(map[string]string{
		labelReason:   string(ev.HaltReason),
		labelDecision: string(d.Action),
	}).Timer(MetricPauseWait).Record(wait)
}

// countRejected counts refused human input named name when err is not nil,
// and returns err, so a validator can count and return in one line.
func (g *guard) countRejected(ctx workflow.Context, name string, err error) error {
	if err != nil {
		g.next.GetMetricsHandler(ctx).WithTags(map[string]string{labelInput: name}).Counter(MetricRejectedInputs).Inc(1)
	}
	return err
}

// haltReasonOf is ev's reason, or "unknown" without a halt.
func haltReasonOf(ev *protocol.HaltEvent) string {
	if ev == nil {
		return "unknown"
	}
	return string(ev.HaltReason)
}

// MetricSeries returns every series name a Prometheus scrape of a worker
// holds for the guard's metrics, as the SDK's tally Prometheus naming
// scope writes them: counters end in _total, the pause wait (a timer) is a
// histogram in seconds, gauges keep their names. Dashboards, alert rules
// and docs must name these, not the names above (a query for
// loopguard_halts finds nothing): tests check them against it.
func MetricSeries() []string {
	var names []string
	for _, c := range []string{MetricHalts, MetricWarnings, MetricHeeded, MetricResumes, MetricEscalations,
		MetricGuardedCalls, MetricRejectedInputs} {
		names = append(names, c+"_total")
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		names = append(names, MetricPauseWait+"_seconds"+suffix)
	}
	return append(names, MetricPausedWorkflows, MetricOldestPause, MetricSearchAttributeEnabled)
}
