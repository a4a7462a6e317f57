package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// TestDemoMetrics runs `--demo --metrics-addr` on the embedded server as a
// user would, scrapes /metrics, and checks the guard's series: the halts
// by reason are the scenarios' expected halts, the paused gauge (computed
// from visibility) counts them, and the SDK's own metrics are there too.
func TestDemoMetrics(t *testing.T) {
	isolateEnv(t)
	was := pausedPollInterval
	pausedPollInterval = 200 * time.Millisecond
	t.Cleanup(func() { pausedPollInterval = was })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--demo", "--ephemeral", "--port", "0", "--no-ui", "--demo-timeout", "60s", "--metrics-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the worker did not stop within 30s")
		}
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}()

	addr := waitFor(t, ctx, &stdout, regexp.MustCompile(`metrics +http://(127\.0\.0\.1:\d+)/metrics`))
	waitFor(t, ctx, &stdout, regexp.MustCompile(`All 13 scenarios ended as expected`))

	// Every scenario with a reason halts once, but the one steered by a
	// warning; every one whose detector trips is warned first; only the
	// halted ones stay paused.
	wantHalts := map[string]float64{}
	halted, warned := 0.0, 0.0
	for _, sc := range workflows.Scenarios() {
		if sc.WantReason != "" && sc.Steer != workflows.SteerWarning {
			wantHalts[string(sc.WantReason)]++
		}
		if sc.WantReason != "" && sc.WantReason != protocol.ReasonBudgetExceeded {
			warned++
		}
		if sc.Want == workflows.WantHalted {
			halted++
		}
	}
	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		families = scrape(t, "http://"+addr+"/metrics")
		return sumBy(families["loopguard_halts_total"], "reason") != nil &&
			value(families["loopguard_paused_workflows"]) == halted
	}, 20*time.Second, 250*time.Millisecond, "halts and paused workflows reach /metrics")

	assert.Equal(t, wantHalts, sumBy(families["loopguard_halts_total"], "reason"))
	for _, m := range families["loopguard_halts_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		assert.Equal(t, "pause", labels["on_halt"])
		assert.NotEmpty(t, labels["detector"])
		assert.NotContains(t, labels, "workflow_id", "unbounded label")
	}
	assert.Equal(t, warned, sumBy(families["loopguard_warnings_total"], "")[""], "one warning per tripped loop")
	assert.Equal(t, 1.0, sumBy(families["loopguard_warnings_heeded_total"], "")[""], "heeds-warning's")
	calls := sumBy(families["loopguard_guarded_calls_total"], "kind")
	assert.Positive(t, calls["activity"], "%v", calls)
	assert.Positive(t, calls["child_workflow"], "%v", calls)
	assert.Equal(t, halted, value(families["loopguard_paused_workflows"]))
	assert.Contains(t, families, "temporal_workflow_completed_total", "the SDK's own metrics")

	// The oldest pause grows from the second sighting on.
	require.Eventually(t, func() bool {
		return value(scrape(t, "http://"+addr+"/metrics")["loopguard_oldest_pause_seconds"]) > 0
	}, 10*time.Second, 250*time.Millisecond)
}

// waitFor waits until out matches re and returns the first group (or the match).
func waitFor(t *testing.T, ctx context.Context, out *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %q in the output before the deadline", re)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scrape reads and parses the Prometheus text exposition at url.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "the exposition parses")
	return families
}

// sumBy adds a counter's series up by one label, nil without series.
func sumBy(f *dto.MetricFamily, label string) map[string]float64 {
	if f == nil || len(f.GetMetric()) == 0 {
		return nil
	}
	sums := map[string]float64{}
	for _, m := range f.GetMetric() {
		key := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		sums[key] += m.GetCounter().GetValue()
	}
	return sums
}

// value is the value of a single-series gauge, -1 without one.
func value(f *dto.MetricFamily) float64 {
	if f == nil || len(f.GetMetric()) != 1 {
		return -1
	}
	return f.GetMetric()[0].GetGauge().GetValue()
}
