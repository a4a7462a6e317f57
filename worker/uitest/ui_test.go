package uitest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/activities"
	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/worker/devserver"
	"github.com/loopguard/loopguard/workflows"
)

const (
	searchAttribute = "LoopGuardState"
	taskQueue       = "loopguard-uitest"
	workflowID      = "ui-same-failing-tests"
	// operator is who the test says it is in the resume payload.
	operator = "web-ui-test"
)

// chromiumPath finds a Chromium to drive, "" when there is none.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestResumeAHaltFromTheWebUI(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("no chromium on PATH (Debian: apt-get install chromium): the Web UI path was not tested")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The embedded server and UI, and a worker with the guard, as
	// `go run ./worker` runs them.
	srv, err := devserver.Start(ctx, devserver.Options{
		Ephemeral:        true,
		FreePorts:        true,
		Logger:           zap.NewNop(),
		SearchAttributes: map[string]enumspb.IndexedValueType{searchAttribute: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop()) })
	c, err := srv.NewClient(client.Options{Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	opts := workflows.GuardOptions()
	opts.SearchAttribute = searchAttribute
	// The UI's answers, not the ladder: the loop halts at its first trip
	// (turn 5), with budget to go on after the resume. With the samples'
	// warning it halts at turn 9, where the cycle budget (8) is spent, and
	// a resume meets the budget's halt before any call.
	opts.Warnings = 0
	guard, err := interceptor.New(opts)
	require.NoError(t, err)
	w := worker.New(c, taskQueue, worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{guard}})
	workflows.Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	// A scenario that halts: every patch differs, the same 4 tests fail.
	scenarios := workflows.Scenarios()
	i := slices.IndexFunc(scenarios, func(sc workflows.Scenario) bool { return sc.Name == activities.ScenarioSameFailingTests })
	require.GreaterOrEqual(t, i, 0)
	sc := scenarios[i]
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID, TaskQueue: taskQueue}, sc.Workflow, sc.Input)
	require.NoError(t, err)
	halted := waitStatus(t, ctx, c, func(s protocol.Status) bool { return s.State == protocol.StateHalted })
	require.Equal(t, sc.WantReason, halted.Halt.HaltReason)

	b := newBrowser(t, ctx, chromium)
	ns := srv.Namespace()
	wfURL := srv.UIURL() + "/namespaces/" + ns + "/workflows/" + workflowID + "/" + run.GetRunID()

	// 1. The listing, filtered as an operator would: only halted loops.
	listURL := srv.UIURL() + "/namespaces/" + ns + "/workflows?query=" + url.QueryEscape(interceptor.PausedQuery(searchAttribute))
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(listURL)))
	waitText(t, b, workflowID)
	assert.Contains(t, pageText(t, b), `LoopGuardState starts with "halted"`, "the filter the UI applied")

	// 2. The workflow's current details: why, the trend, the commands.
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(wfURL+"/user-metadata")))
	waitText(t, b, "loopguard: halted")
	text := pageText(t, b)
	assert.Contains(t, text, "loopguard: halted — stalled")
	assert.Contains(t, text, "trend: failing 4 → 4 → 4 → 4 ████", "the numbers and their sparkline (HTML folds the two spaces)")
	assert.Contains(t, text, "temporal workflow signal --workflow-id "+workflowID+" --name resume")
	assert.Contains(t, text, "temporal workflow signal --workflow-id "+workflowID+" --name escalate")
	shot, err := chromedp.Run(b, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	saveScreenshot(t, shot)

	// 3. Resume through the UI's own signal form, from the event history
	// page (queries wait on the details page's markdown frame).
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(wfURL+"/history")))
	waitText(t, b, "Workflow Execution Signaled")
	resume := `{"reason":"reviewed in the Web UI","by":"` + operator + `"}`
	data := `#signal-confirmation-modal [role="textbox"][aria-label="Data"]`
	for _, step := range []struct {
		what string
		do   chromedp.Action[chromedp.Void]
	}{
		{"open More Actions", clickVisible(`button[aria-controls="workflow-actions"]`)},
		{"choose Send a Signal", clickVisible(`[data-testid="signal-button"]`)},
		{"type the signal name", chromedp.Steps(clickVisible(`#signal-name`), chromedp.KeyEvent(protocol.DefaultResumeSignal))},
		{"type the payload", chromedp.Steps(clickVisible(data), chromedp.KeyEvent(resume))},
		{"submit", clickVisible(`#signal-confirmation-modal button[type="submit"]:not([disabled])`)},
	} {
		uiStep(t, b, step.what, step.do)
	}

	// 4. The loop goes on: the guard took the UI's resume, by its sender,
	// and the workflow calls its agents again (it either completes or
	// runs on; with these scripts it stalls again later).
	resumed := waitStatus(t, ctx, c, func(s protocol.Status) bool { return s.LastDecision != nil })
	assert.Equal(t, protocol.Decision{Action: "resume", Reason: "reviewed in the Web UI", By: operator, HaltSeq: 1}, *resumed.LastDecision)
	waitStatus(t, ctx, c, func(s protocol.Status) bool { return s.TotalCalls > halted.TotalCalls })

	// And the UI shows it: the resume signal in the history, the workflow
	// running or completed.
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(wfURL+"/history")))
	waitText(t, b, "Workflow Execution Signaled")
	status, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`[data-testid="workflow-status"], [data-testid="execution-status"]`)))
	require.NoError(t, err)
	assert.Contains(t, []string{"Running", "RUNNING", "Completed", "COMPLETED"}, strings.TrimSpace(status))
}

// uiStep does one browser action within 15 seconds, failing the test with
// what the page shows when it cannot.
func uiStep(t *testing.T, b context.Context, what string, do chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(b, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, do); err != nil {
		if shot, serr := chromedp.Run(b, chromedp.FullScreenshot(100)); serr == nil {
			p := filepath.Join(os.TempDir(), "loopguard-uitest-failed-step.png")
			if os.WriteFile(p, shot, 0o644) == nil {
				t.Logf("screenshot of the failed step: %s", p)
			}
		}
		t.Fatalf("%s: %v; the page shows:\n%s", what, err, pageText(t, b))
	}
}

// clickVisible clicks, with a real mouse event, the centre of the first
// element matching css that is shown on the page, once it has stopped
// moving (menus animate open). The UI keeps hidden copies of some controls
// for narrow windows and of menu items, which a plain selector may find
// first.
func clickVisible(css string) chromedp.Action[chromedp.Void] {
	find := `(() => {
		for (const e of document.querySelectorAll(` + jsString(css) + `)) {
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || getComputedStyle(e).visibility !== "visible") continue;
			e.scrollIntoView({block: "nearest"});
			const s = e.getBoundingClientRect();
			const at = [s.left + s.width / 2, s.top + s.height / 2];
			const key = ` + jsString(css) + ` + "@" + at.join(",");
			const steady = window.__loopguardLastSeen === key;
			window.__loopguardLastSeen = key;
			return steady ? at : null;
		}
		return null;
	})()`
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		at, err := chromedp.Poll[[]float64](find)(ctx, t)
		if err != nil {
			return chromedp.Void{}, fmt.Errorf("no visible %s: %w", css, err)
		}
		return chromedp.MouseClickXY(at[0], at[1])(ctx, t)
	}
}

// waitStatus polls the guard's status query until ok says so.
func waitStatus(t *testing.T, ctx context.Context, c client.Client, ok func(protocol.Status) bool) protocol.Status {
	t.Helper()
	var last protocol.Status
	for {
		v, err := c.QueryWorkflow(ctx, workflowID, "", protocol.DefaultStatusQuery)
		if err == nil && v.Get(&last) == nil && ok(last) {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the guard's status did not get there; last: %+v (error %v)", last, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// newBrowser starts a headless chromium with a fresh profile, closed when
// the test ends.
func newBrowser(t *testing.T, ctx context.Context, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	require.NoError(t, chromedp.Do(bctx), "start chromium")
	return bctx
}

// waitText waits until the page's visible text contains s.
func waitText(t *testing.T, b context.Context, s string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(b, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(wctx, chromedp.Poll[bool](visibleText+".includes("+jsString(s)+")"))
	if err != nil {
		t.Fatalf("the page never showed %q (%v); it shows:\n%s", s, err, pageText(t, b))
	}
}

// visibleText is a JavaScript expression for the page's visible text,
// with that of its frames: the UI renders the current details' markdown in
// an iframe of the same origin.
const visibleText = `(() => {
	let text = document.body.innerText;
	for (const f of document.querySelectorAll("iframe")) {
		try { text += "\n" + f.contentDocument.body.innerText; } catch (e) {}
	}
	return text;
})()`

// pageText is the page's visible text, frames included.
func pageText(t *testing.T, b context.Context) string {
	t.Helper()
	s, err := chromedp.Run(b, chromedp.Evaluate[string](visibleText))
	require.NoError(t, err)
	return s
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// saveScreenshot writes the halted workflow's screenshot where
// LOOPGUARD_UI_SCREENSHOT says, else into the test's temporary directory.
func saveScreenshot(t *testing.T, png []byte) {
	t.Helper()
	path := os.Getenv("LOOPGUARD_UI_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "halted-workflow.png")
	}
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot of the halted workflow: %s", path)
}
