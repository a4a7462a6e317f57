package watch

import (
	"testing"
	"time"
)

func TestJudgePause(t *testing.T) {
	tests := []struct {
		give      string
		capKnown  bool
		capPause  bool
		version   string
		namespace string
		wantPause bool
		wantRace  bool
		wantWhy   string
	}{
		{give: "flag on", capKnown: true, capPause: true, version: "1.32.1", namespace: "default", wantPause: true,
			wantWhy: "the namespace offers Workflow Pause (server 1.32.1)"},
		{give: "flag off", capKnown: true, version: "1.32.1", namespace: "default",
			wantWhy: "the namespace does not offer Workflow Pause: turn on the dynamic config frontend.WorkflowPauseEnabled for it"},
		{give: "cloud without the feature", capKnown: true, version: "1.32.0", namespace: "agents.a2dd6",
			wantWhy: "Temporal Cloud namespace without Workflow Pause (offered by invitation): ask Temporal for it"},
		{give: "the known race", capKnown: true, capPause: true, version: "v1.31.2", namespace: "default", wantRace: true,
			wantWhy: "server v1.31.2 has the known Workflow Pause race, fixed in v1.32: upgrade"},
		{give: "no pause yet", capKnown: false, version: "1.29.1", namespace: "default",
			wantWhy: "server 1.29.1 has no Workflow Pause (v1.30 or later)"},
		{give: "no capabilities", capKnown: false, version: "", namespace: "default", wantPause: true,
			wantWhy: "the server reports no capabilities (version ): the first halt finds out"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got := judgePause(tt.capKnown, tt.capPause, tt.version, tt.namespace)
			if got.Pause != tt.wantPause || got.Race != tt.wantRace || got.Reason != tt.wantWhy {
				t.Errorf("judgePause = %+v, want pause %v race %v why %q", got, tt.wantPause, tt.wantRace, tt.wantWhy)
			}
		})
	}
}

// Where the namespace offers pause, the watcher says so at start and
// keeps pause; TestWatchPauseRefused's signal case is the other side.
func TestWatchSaysPauseAtStart(t *testing.T) {
	ctx := testContext(t, time.Minute)
	ts := startServer(t, true)
	logger, logs := observed()
	w, _ := ts.watcher(t, Options{Logger: logger})
	eventually(t, ctx, "the start-up line", func() bool { return logs.FilterMessage("watch: halts will pause").Len() > 0 })
	if n := logs.FilterMessage("watch: halts will pause").Len() + logs.FilterMessageSnippet("fall back").Len(); n != 1 {
		t.Errorf("%d start-up lines, want 1", n)
	}
	if r := w.Status().Refusal; r != nil {
		t.Errorf("refusal %+v with pause on", r)
	}
}
