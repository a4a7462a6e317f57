package activities

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// Error types of the agents' failures. Both are non-retryable: retrying
// cannot help, and the workflow decides what to do next.
const (
	// ErrSandboxUnavailable is the type of the verifier's error in the
	// repeated-error scenario.
	ErrSandboxUnavailable = "SandboxUnavailable"
	// ErrUnknownScenario is the type of the error every agent returns for a
	// scenario name it does not know.
	ErrUnknownScenario = "UnknownScenario"
)

// Plan decisions (PlanStep.Next).
const (
	NextResearch = "research"
	NextDone     = "done"
)

// Job states (JobStatus.State).
const (
	JobRunning = "running"
	JobDone    = "done"
)

// Agents are the simulated agents. Register a pointer to it as an activity
// struct: each exported method is an activity named after the method.
type Agents struct{}

// CodeRequest asks the coder for a patch.
type CodeRequest struct {
	Scenario string `json:"scenario"`
	Task     string `json:"task,omitempty"`
	// Turn numbers the coder's turns from 1.
	Turn int `json:"turn"`
	// FailingTests and LastError are the feedback from the previous turn.
	FailingTests []string `json:"failingTests,omitempty"`
	LastError    string   `json:"lastError,omitempty"`
}

// Patch is the coder's output.
type Patch struct {
	// ID is derived from the content: equal patches have equal ids.
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Files []string `json:"files"`
	Diff  string   `json:"diff"`
	// Cost is the model tokens spent (a function of the patch content).
	Cost float64 `json:"cost"`
	// GeneratedAt is a simulated timestamp that differs on every turn.
	GeneratedAt string `json:"generatedAt"`
	// Heeded is what made the coder change approach, when its notice did:
	// the guard's warning or the guidance of a resume.
	Heeded string `json:"heeded,omitempty"`
}

// VerifyRequest asks the verifier to run the tests against a patch.
type VerifyRequest struct {
	Scenario string `json:"scenario"`
	Turn     int    `json:"turn"`
	Patch    Patch  `json:"patch"`
}

// Verdict is the verifier's output.
type Verdict struct {
	PatchID string `json:"patchId"`
	Passed  bool   `json:"passed"`
	// Failing is the failing test count: lower is better.
	Failing int `json:"failing"`
	// FailingTests names the failing tests (at most maxListedTests).
	FailingTests []string `json:"failingTests"`
	Summary      string   `json:"summary"`
	Cost         float64  `json:"cost"`
	GeneratedAt  string   `json:"generatedAt"`
}

// PlanRequest asks the planner for its next step.
type PlanRequest struct {
	Scenario string `json:"scenario"`
	Goal     string `json:"goal,omitempty"`
	// Step numbers the planner's steps from 1.
	Step int `json:"step"`
	// LastFindings is the researcher's previous summary.
	LastFindings string `json:"lastFindings,omitempty"`
}

// PlanStep is the planner's output.
type PlanStep struct {
	// Next is NextResearch (ask the researcher Query) or NextDone (Answer
	// is the final answer).
	Next        string  `json:"next"`
	Action      string  `json:"action"`
	Query       string  `json:"query,omitempty"`
	Answer      string  `json:"answer,omitempty"`
	Cost        float64 `json:"cost"`
	GeneratedAt string  `json:"generatedAt"`
}

// ResearchRequest asks the researcher a question.
type ResearchRequest struct {
	Scenario string `json:"scenario"`
	Step     int    `json:"step"`
	Query    string `json:"query"`
}

// Findings is the researcher's output.
type Findings struct {
	Query          string   `json:"query"`
	Summary        string   `json:"summary"`
	NewInformation bool     `json:"newInformation"`
	Sources        []string `json:"sources,omitempty"`
	Cost           float64  `json:"cost"`
	GeneratedAt    string   `json:"generatedAt"`
}

// StatusRequest asks for the status of a long-running job.
type StatusRequest struct {
	Scenario string `json:"scenario"`
	JobID    string `json:"jobId"`
	// Poll numbers the polls from 1.
	Poll int `json:"poll"`
}

// JobStatus is the poller's output.
type JobStatus struct {
	JobID       string `json:"jobId"`
	State       string `json:"state"` // JobRunning or JobDone
	Progress    int    `json:"progress"`
	Message     string `json:"message"`
	GeneratedAt string `json:"generatedAt"`
}

// SummarizeRequest asks for a summary of a finished job.
type SummarizeRequest struct {
	Scenario string    `json:"scenario"`
	Status   JobStatus `json:"status"`
	Polls    int       `json:"polls"`
}

// Summary is the summariser's output.
type Summary struct {
	Text        string  `json:"text"`
	Cost        float64 `json:"cost"`
	GeneratedAt string  `json:"generatedAt"`
}

// Code proposes a patch. It reads the guard's notice as an agent would
// put it into its prompt: in the steerable scenarios the coder changes
// approach when told (a warning, or a human's or reviewer's guidance).
func (a *Agents) Code(ctx context.Context, req CodeRequest) (Patch, error) {
	n, _ := interceptor.NoticeFrom(ctx)
	p, err := scriptPatch(req, n)
	if err != nil {
		return Patch{}, err
	}
	activity.GetLogger(ctx).Info("Coder proposed a patch", "scenario", req.Scenario, "turn", req.Turn, "patch", p.ID, "title", p.Title, "heeded", p.Heeded)
	return p, nil
}

// Verify runs the tests against a patch.
func (a *Agents) Verify(ctx context.Context, req VerifyRequest) (Verdict, error) {
	v, err := scriptVerdict(req)
	if err != nil {
		activity.GetLogger(ctx).Warn("Verifier failed", "scenario", req.Scenario, "turn", req.Turn, "error", err)
		return Verdict{}, err
	}
	activity.GetLogger(ctx).Info("Verifier ran the tests", "scenario", req.Scenario, "turn", req.Turn, "patch", v.PatchID, "failing", v.Failing)
	return v, nil
}

// Plan chooses the planner's next step.
func (a *Agents) Plan(ctx context.Context, req PlanRequest) (PlanStep, error) {
	s, err := scriptPlan(req)
	if err != nil {
		return PlanStep{}, err
	}
	activity.GetLogger(ctx).Info("Planner decided", "scenario", req.Scenario, "step", req.Step, "next", s.Next, "action", s.Action)
	return s, nil
}

// Research answers the planner's question.
func (a *Agents) Research(ctx context.Context, req ResearchRequest) (Findings, error) {
	f, err := scriptFindings(req)
	if err != nil {
		return Findings{}, err
	}
	activity.GetLogger(ctx).Info("Researcher answered", "scenario", req.Scenario, "step", req.Step, "query", f.Query, "new", f.NewInformation)
	return f, nil
}

// ReviewRequest asks the reviewer about a halted loop: what the guard
// found (protocol.HaltEvent's reason, node and message).
type ReviewRequest struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
	Node     string `json:"node"`
	Message  string `json:"message"`
	// Warnings is how many warnings the loop ignored before it halted.
	Warnings int `json:"warnings,omitempty"`
}

// ReviewNote is the reviewer's answer: Guidance for the coder, or empty
// when the reviewer cannot help and a human must decide.
type ReviewNote struct {
	Guidance    string  `json:"guidance,omitempty"`
	Cost        float64 `json:"cost"`
	GeneratedAt string  `json:"generatedAt"`
}

// Review looks at a halted loop and suggests what the coder should do
// instead (seed 000's spawn_reviewer). Only the reviewed scenario's
// reviewer knows an answer.
func (a *Agents) Review(ctx context.Context, req ReviewRequest) (ReviewNote, error) {
	if !IsScenario(req.Scenario) {
		return ReviewNote{}, unknownScenario(req.Scenario)
	}
	note := ReviewNote{Cost: 300, GeneratedAt: stamp(0, time.Hour)}
	if req.Scenario == ScenarioReviewed {
		note.Guidance = reviewerGuidance
	}
	activity.GetLogger(ctx).Info("Reviewer answered", "scenario", req.Scenario, "reason", req.Reason, "node", req.Node, "guidance", note.Guidance)
	return note, nil
}

// reviewerGuidance is the reviewed scenario's reviewer's advice (the
// guided scenario's human gives the same).
const reviewerGuidance = "Stop re-proposing the config default: the failing tests are not about it. Fix the cache TTL arithmetic in cache/ttl.go, then cap the retry backoff."

// OperatorGuidance is what a human could tell the guided scenario's coder
// when resuming its halt.
const OperatorGuidance = reviewerGuidance

// CheckStatus polls a long-running job.
func (a *Agents) CheckStatus(ctx context.Context, req StatusRequest) (JobStatus, error) {
	s, err := scriptStatus(req)
	if err != nil {
		return JobStatus{}, err
	}
	activity.GetLogger(ctx).Info("Job status", "job", s.JobID, "poll", req.Poll, "state", s.State, "progress", s.Progress)
	return s, nil
}

// Summarize writes the report of a finished job.
func (a *Agents) Summarize(ctx context.Context, req SummarizeRequest) (Summary, error) {
	if !IsScenario(req.Scenario) {
		return Summary{}, unknownScenario(req.Scenario)
	}
	text := fmt.Sprintf("job %s %s after %d polls (%d%%): %s", req.Status.JobID, req.Status.State, req.Polls, req.Status.Progress, req.Status.Message)
	return Summary{Text: text, Cost: 150 + float64(len(text)), GeneratedAt: stamp(req.Polls, 50*time.Second)}, nil
}

// maxListedTests caps Verdict.FailingTests.
const maxListedTests = 10

// suite is the converging scenario's test suite, in the order the coder
// fixes it.
var suite = []string{
	"TestParseConfig", "TestParseEmpty", "TestRenderHTML", "TestRenderMarkdown",
	"TestCacheEviction", "TestCacheTTL", "TestRetryBackoff",
}

// stuckTests fail whatever the patch in the stalled scenarios.
var stuckTests = []string{"TestParseConfig", "TestParseEmpty", "TestRenderHTML", "TestCacheTTL"}

type edit struct{ title, file, line string }

var (
	convergingEdits = []edit{
		{"guard a nil config in the parser", "parser/config.go", "if cfg == nil { return ErrNoConfig }"},
		{"render empty documents", "render/html.go", `if len(doc.Blocks) == 0 { return "", nil }`},
		{"fix the cache TTL arithmetic", "cache/ttl.go", "expires := now.Add(ttl)"},
		{"cap the retry backoff", "retry/backoff.go", "delay = min(delay*2, maxDelay)"},
	}
	identicalEdit = edit{"default an empty config name", "parser/config.go", `if cfg != nil && cfg.Name == "" { cfg.Name = "default" }`}
	// Different ideas for the same-failing-tests and repeated-error coders;
	// the turn number keeps later rounds distinct too.
	approaches = []edit{
		{"validate the config before parsing", "parser/config.go", "if err := cfg.Validate(); err != nil { return err }"},
		{"trim whitespace from keys", "parser/keys.go", "key = strings.TrimSpace(key)"},
		{"escape HTML in headings", "render/html.go", "title = html.EscapeString(title)"},
		{"use monotonic time for TTLs", "cache/ttl.go", "age := time.Since(entry.created)"},
		{"lower-case config keys", "parser/keys.go", "key = strings.ToLower(key)"},
	}
	oscillatingEdits = [2]edit{
		{"make the parser strict about unknown fields", "parser/config.go", "return fmt.Errorf(\"unknown field %q\", k)"},
		{"make the parser lenient about unknown fields", "parser/config.go", "log.Printf(\"ignoring unknown field %q\", k)"},
	}
	// The verdicts of the oscillating patches A and B.
	oscillatingFailures = [2][]string{
		{"TestRenderHTML", "TestRenderMarkdown", "TestParseLegacy"},
		{"TestParseConfig", "TestParseUnknownField"},
	}
)

// fixedTests fail after a steerable coder's first patch of its new approach.
var fixedTests = suite[len(suite)-2:]

// heard is what the steerable coder of scenario takes from its notice, ""
// if nothing: guidance always, a warning only in the heeds-warning
// scenario (the others ignore warnings).
func heard(scenario string, n protocol.Notice) string {
	switch {
	case n.Guidance != "":
		return fmt.Sprintf("guidance from %s: %s", cmp.Or(n.By, "a human"), n.Guidance)
	case n.Warning != nil && scenario == ScenarioHeedsWarning:
		return fmt.Sprintf("warning %d/%d: %s", n.Warning.N, n.Warning.Of, n.Warning.Directive)
	}
	return ""
}

func scriptPatch(req CodeRequest, n protocol.Notice) (Patch, error) {
	turn := max(req.Turn, 1)
	var e edit
	heeded := ""
	switch req.Scenario {
	case ScenarioHeedsWarning, ScenarioReviewed, ScenarioGuided:
		// Until told, the identical patch; told, the cache fix; once the
		// cache fix is verified, the backoff cap, which passes.
		switch heeded = heard(req.Scenario, n); {
		case slices.Equal(req.FailingTests, fixedTests):
			e = convergingEdits[3]
		case heeded != "":
			e = convergingEdits[2]
		default:
			e = identicalEdit
		}
	case ScenarioIdenticalPatch, ScenarioChildStalled:
		e = identicalEdit
	case ScenarioSameFailingTests, ScenarioRepeatedError:
		a := approaches[(turn-1)%len(approaches)]
		e = edit{a.title, a.file, fmt.Sprintf("%s // revision %d", a.line, turn)}
	case ScenarioOscillating:
		e = oscillatingEdits[(turn-1)%2]
	case ScenarioBudget:
		e = edit{fmt.Sprintf("fix TestCase%02d", turn), fmt.Sprintf("suite/case%02d.go", turn), fmt.Sprintf("want := expected[%d]", turn)}
	case ScenarioConverging, ScenarioChildConverging, ScenarioPolling, ScenarioPlannerResearch:
		// Scenarios without a coder script of their own converge.
		e = convergingEdits[min(turn, len(convergingEdits))-1]
	default:
		return Patch{}, unknownScenario(req.Scenario)
	}
	diff := fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ %s @@\n+%s\n", e.file, e.file, e.title, e.line)
	return Patch{
		ID:          "patch-" + shortHash(e.title+"\x00"+diff),
		Title:       e.title,
		Files:       []string{e.file},
		Diff:        diff,
		Cost:        250 + float64(len(diff)),
		GeneratedAt: stamp(turn, 0),
		Heeded:      heeded,
	}, nil
}

func scriptVerdict(req VerifyRequest) (Verdict, error) {
	turn := max(req.Turn, 1)
	var failing []string
	count := -1 // len(failing) unless the list is truncated
	switch req.Scenario {
	case ScenarioConverging, ScenarioChildConverging, ScenarioPolling, ScenarioPlannerResearch:
		left := []int{7, 4, 2, 0}[min(turn, 4)-1]
		failing = suite[len(suite)-left:]
	case ScenarioIdenticalPatch, ScenarioChildStalled, ScenarioSameFailingTests:
		failing = stuckTests
	case ScenarioHeedsWarning, ScenarioReviewed, ScenarioGuided:
		// The verdict follows the patch: the steerable coder's patches.
		switch req.Patch.Title {
		case convergingEdits[2].title:
			failing = fixedTests
		case convergingEdits[3].title:
		default:
			failing = stuckTests
		}
	case ScenarioOscillating:
		failing = oscillatingFailures[(turn-1)%2]
	case ScenarioRepeatedError:
		return Verdict{}, temporal.NewNonRetryableApplicationError(
			`sandbox unavailable: exec: "go": executable file not found in $PATH`, ErrSandboxUnavailable, nil)
	case ScenarioBudget:
		// Turn t fixes TestCase<t> of a 41-test suite.
		count = max(41-turn, 0)
		for i := turn + 1; i <= turn+min(count, maxListedTests); i++ {
			failing = append(failing, fmt.Sprintf("TestCase%02d", i))
		}
	default:
		return Verdict{}, unknownScenario(req.Scenario)
	}
	if count < 0 {
		count = len(failing)
	}
	summary := "all tests pass"
	if count > 0 {
		summary = fmt.Sprintf("%d failing: %s", count, strings.Join(failing, ", "))
		if count > len(failing) {
			summary += ", …"
		}
	}
	return Verdict{
		PatchID:      req.Patch.ID,
		Passed:       count == 0,
		Failing:      count,
		FailingTests: append([]string{}, failing...),
		Summary:      summary,
		Cost:         120 + 30*float64(count),
		GeneratedAt:  stamp(turn, 40*time.Second),
	}, nil
}

// The planner's questions, and what the researcher finds, when they
// converge.
var research = []struct{ query, finding, source string }{
	{"auth module", "the auth module already issues refresh tokens", "docs/auth.md"},
	{"session store", "sessions live in Redis with a 24h TTL", "docs/sessions.md"},
	{"token refresh", "clients refresh tokens 5 minutes before expiry", "docs/tokens.md"},
}

// The two things the stuck planner keeps wanting to assess.
var stuckQueries = [2]string{"auth module", "session store"}

func scriptPlan(req PlanRequest) (PlanStep, error) {
	step := max(req.Step, 1)
	var s PlanStep
	switch req.Scenario {
	case ScenarioPlannerResearch:
		q := stuckQueries[(step-1)%2]
		s = PlanStep{Next: NextResearch, Action: "need to assess the " + q, Query: q}
	case ScenarioConverging, ScenarioIdenticalPatch, ScenarioSameFailingTests, ScenarioOscillating,
		ScenarioRepeatedError, ScenarioBudget, ScenarioPolling, ScenarioChildConverging, ScenarioChildStalled,
		ScenarioHeedsWarning, ScenarioReviewed, ScenarioGuided:
		// Scenarios without a planner script of their own converge.
		if step <= len(research) {
			q := research[step-1].query
			s = PlanStep{Next: NextResearch, Action: "assess the " + q, Query: q}
		} else {
			s = PlanStep{Next: NextDone, Action: "write the migration plan",
				Answer: "move sessions to refresh tokens: the auth module already issues them, clients refresh early, and the Redis session TTL can go"}
		}
	default:
		return PlanStep{}, unknownScenario(req.Scenario)
	}
	s.Cost = 90 + 2*float64(len(s.Action)+len(s.Answer))
	s.GeneratedAt = stamp(step, 0)
	return s, nil
}

func scriptFindings(req ResearchRequest) (Findings, error) {
	step := max(req.Step, 1)
	f := Findings{Query: req.Query}
	switch req.Scenario {
	case ScenarioPlannerResearch:
		f.Summary = fmt.Sprintf("already done: the %s was assessed in an earlier step; no new information", req.Query)
	default:
		if !IsScenario(req.Scenario) {
			return Findings{}, unknownScenario(req.Scenario)
		}
		f.Summary = "nothing found about " + req.Query
		for _, r := range research {
			if r.query == req.Query {
				f.Summary, f.NewInformation, f.Sources = r.finding, true, []string{r.source}
			}
		}
	}
	f.Cost = 400 + float64(len(f.Summary))
	f.GeneratedAt = stamp(step, 30*time.Second)
	return f, nil
}

// jobProgress is the job's progress at each poll while it runs; the poll
// after the last one finds it done.
var jobProgress = []int{0, 10, 25, 40, 40, 40, 55, 70, 85, 95}

func scriptStatus(req StatusRequest) (JobStatus, error) {
	if !IsScenario(req.Scenario) {
		return JobStatus{}, unknownScenario(req.Scenario)
	}
	poll := max(req.Poll, 1)
	s := JobStatus{JobID: req.JobID, State: JobRunning, GeneratedAt: stamp(poll, 5*time.Second)}
	if poll > len(jobProgress) {
		s.State, s.Progress, s.Message = JobDone, 100, "all 412 tests passed"
		return s, nil
	}
	s.Progress = jobProgress[poll-1]
	switch {
	case s.Progress == 0:
		s.Message = "queued"
	case s.Progress < 40:
		s.Message = "compiling"
	case s.Progress == 40:
		s.Message = "waiting for a test runner"
	default:
		s.Message = "running tests"
	}
	return s, nil
}

// epoch is the simulated clock's origin.
var epoch = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// stamp is a simulated timestamp for the turn: it changes every turn, like a
// real agent's, but stays a pure function of the request.
func stamp(turn int, offset time.Duration) string {
	return epoch.Add(time.Duration(turn)*90*time.Second + offset).Format(time.RFC3339)
}

func shortHash(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

func unknownScenario(name string) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown scenario %q", name), ErrUnknownScenario, nil)
}
