package interceptor

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Commands are copy-pastable operator commands for one workflow.
type Commands struct {
	Resume       string `json:"resume"`       // temporal CLI signal
	Escalate     string `json:"escalate"`     // temporal CLI signal
	ResumeUpdate string `json:"resumeUpdate"` // temporal CLI update, answers synchronously
	Status       string `json:"status"`       // temporal CLI query
	TctlResume   string `json:"tctlResume"`
	TctlEscalate string `json:"tctlEscalate"`
}

// OperatorCommands returns the commands that resume, escalate or inspect a
// halted workflow guarded with the default protocol names.
func OperatorCommands(namespace, workflowID string) Commands {
	return commandsFor(config{
		ResumeSignal:   protocol.DefaultResumeSignal,
		EscalateSignal: protocol.DefaultEscalateSignal,
		ResumeUpdate:   protocol.DefaultResumeUpdate,
		StatusQuery:    protocol.DefaultStatusQuery,
	}, namespace, workflowID)
}

func commandsFor(c config, namespace, workflowID string) Commands {
	ns := ""
	if namespace != "" && namespace != "default" {
		ns = " --namespace " + shellQuote(namespace)
	}
	wid := shellQuote(workflowID)
	resume := shellQuote(`{"reason":"reviewed the evidence","by":"` + operator + `"}`)
	escalate := shellQuote(`{"reason":"stopping this loop","by":"` + operator + `"}`)
	tctlNS := ""
	if ns != "" {
		tctlNS = " --namespace " + shellQuote(namespace)
	}
	return Commands{
		Resume:       fmt.Sprintf("temporal workflow signal%s --workflow-id %s --name %s --input %s", ns, wid, shellQuote(c.ResumeSignal), resume),
		Escalate:     fmt.Sprintf("temporal workflow signal%s --workflow-id %s --name %s --input %s", ns, wid, shellQuote(c.EscalateSignal), escalate),
		ResumeUpdate: fmt.Sprintf("temporal workflow update execute%s --workflow-id %s --name %s --input %s", ns, wid, shellQuote(c.ResumeUpdate), resume),
		Status:       fmt.Sprintf("temporal workflow query%s --workflow-id %s --type %s", ns, wid, shellQuote(c.StatusQuery)),
		TctlResume:   fmt.Sprintf("tctl%s workflow signal --workflow_id %s --name %s --input %s", tctlNS, wid, shellQuote(c.ResumeSignal), resume),
		TctlEscalate: fmt.Sprintf("tctl%s workflow signal --workflow_id %s --name %s --input %s", tctlNS, wid, shellQuote(c.EscalateSignal), escalate),
	}
}

// operator is the placeholder name in suggested commands.
const operator = "your-name"

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// currentDetails is the markdown the Temporal UI shows for the workflow
// while the guard holds it: why, where in the loop, the evidence trend and
// the commands that answer the halt.
func currentDetails(c config, s protocol.State, ev *protocol.HaltEvent) string {
	if ev == nil || s == protocol.StateRunning {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**loopguard: %s — %s** (%s)\n\n", s, ev.HaltReason, ev.Detector)
	fmt.Fprintf(&b, "%s\n\n", ev.Message)
	if ev.Node != "" {
		fmt.Fprintf(&b, "- node: `%s`\n", ev.Node)
	}
	if ev.CycleID != "" {
		fmt.Fprintf(&b, "- Loop %d/%d (cycle `%s`)\n", ev.Iteration, ev.MaxIterations, ev.CycleID)
	}
	if trend := EvidenceTrend(*ev, c.Policy.Nodes[ev.Node].Rules.MetricField); trend != "" {
		fmt.Fprintf(&b, "- trend: %s\n", trend)
	}
	for _, w := range ev.Warnings {
		fmt.Fprintf(&b, "- ignored warning %d/%d at `%s`: %s\n", w.N, w.Of, w.Node, w.Message)
	}
	if s != protocol.StateHalted {
		return b.String()
	}
	cmd := commandsFor(c, "", ev.WorkflowID)
	if len(c.OperatorKeys) > 0 {
		// A plain answer would be refused: show the signed way.
		cmd = signedCommands(c, ev.WorkflowID)
		b.WriteString("\nAnswers must be signed by an operator's key (docs/halts.md, \"Signed answers\").\n")
	}
	fmt.Fprintf(&b, "\nResume:\n```\n%s\n```\nEscalate:\n```\n%s\n```\n", cmd.Resume, cmd.Escalate)
	return b.String()
}

// signedCommands are the worker's answer commands that sign and send a
// resume or escalate of workflowID's halt in force. Each names what the
// guard was configured with where it is not the default: the status query
// the command reads the halt from, and the update (and, for --signal, the
// signal) it sends, whose name the signed action must match.
func signedCommands(c config, workflowID string) Commands {
	answer := "go run ./worker answer --workflow-id " + shellQuote(workflowID) + " --key " + operator + ".key "
	if c.StatusQuery != protocol.DefaultStatusQuery {
		answer += "--status-query " + shellQuote(c.StatusQuery) + " "
	}
	return Commands{
		Resume:   answer + answerNames(c.ResumeUpdate, protocol.DefaultResumeUpdate, c.ResumeSignal, protocol.DefaultResumeSignal) + `resume --guidance "what to do differently"`,
		Escalate: answer + answerNames(c.EscalateUpdate, protocol.DefaultEscalateUpdate, c.EscalateSignal, protocol.DefaultEscalateSignal) + `escalate --reason "stopping this loop"`,
	}
}

// answerNames are the answer command's flags for an update and a signal
// that are not named as by default.
func answerNames(update, defaultUpdate, signal, defaultSignal string) string {
	s := ""
	if update != defaultUpdate {
		s += "--update-name " + shellQuote(update) + " "
	}
	if signal != defaultSignal {
		s += "--signal-name " + shellQuote(signal) + " "
	}
	return s
}

// handlerDetails heads the current details while the halt handler decides.
func handlerDetails(ev protocol.HaltEvent) string {
	return fmt.Sprintf("**loopguard: the halt handler is deciding halt %d**; a human's resume or escalate answers first.\n\n", ev.Seq)
}

// guidanceDetails are the current details while a resume's guidance is
// in force: what the loop's calls are told, and since which halt.
func guidanceDetails(gd *protocol.Guidance) string {
	if gd == nil {
		return ""
	}
	return fmt.Sprintf("**loopguard: running — resumed with guidance** (halt %d, by %s)\n\n> %s\n\nThe calls of `%s` carry it in their notice until the loop halts again.\n",
		gd.HaltSeq, cmp.Or(gd.By, "a human"), gd.Text, strings.Join(gd.Nodes, "`, `"))
}

// EvidenceTrend renders the most telling evidence list of a halt in one
// line, oldest first: the declared metric with a sparkline ("failing 7 → 4
// → 4 → 4  █▅▅▅"), else progress values, error signatures, output hashes
// (shortened) or transitions. metricLabel names the metric, normally the
// node's MetricField; "" says "metric". The current details and the
// worker's demo table both show it.
func EvidenceTrend(ev protocol.HaltEvent, metricLabel string) string {
	e := ev.Evidence
	switch {
	case len(e.Metrics) > 0:
		vals := make([]string, len(e.Metrics))
		for i, m := range e.Metrics {
			vals[i] = strconv.FormatFloat(m, 'g', -1, 64)
		}
		if metricLabel == "" {
			metricLabel = "metric"
		}
		return metricLabel + " " + strings.Join(vals, " → ") + "  " + Sparkline(e.Metrics)
	case len(e.ProgressValues) > 0:
		return "progress " + joinRuns(e.ProgressValues)
	case len(e.ErrorSignatures) > 0:
		return "errors " + joinRuns(e.ErrorSignatures)
	case len(e.OutputHashes) > 0:
		short := make([]string, len(e.OutputHashes))
		for i, h := range e.OutputHashes {
			short[i] = h[:min(len(h), 8)]
		}
		return "outputs " + joinRuns(short)
	case len(e.Transitions) > 0:
		return "transitions " + strings.Join(e.Transitions, ", ")
	}
	return ""
}

// joinRuns joins values oldest first, writing a run of equal values once
// with its count ("sandbox down ×3 → ok"): a repeated error signature is
// long, and its repetition is the point.
func joinRuns(vals []string) string {
	var b strings.Builder
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if i > 0 {
			b.WriteString(" → ")
		}
		b.WriteString(vals[i])
		if j-i > 1 {
			fmt.Fprintf(&b, " ×%d", j-i)
		}
		i = j
	}
	return b.String()
}
