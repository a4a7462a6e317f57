package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
)

const (
	dashboardFile  = "grafana/dashboards/loopguard.json"
	datasourceFile = "grafana/provisioning/datasources/prometheus.yml"
	rulesFile      = "prometheus/loopguard-rules.yml"
	rulesTestFile  = "prometheus/loopguard-rules-test.yml"
	thresholdsFile = "prometheus/loopguard-thresholds.yml"
	promConfigFile = "prometheus/prometheus.yml"      // docker-compose.yml's
	hostConfigFile = "prometheus/prometheus-host.yml" // the recipe's on a host
)

var (
	metricRef    = regexp.MustCompile(`\bloopguard_[a-z_]+`)
	recordingRef = regexp.MustCompile(`\bloopguard:[a-z0-9_:]+`)
)

type dashboard struct {
	UID    string `json:"uid"`
	Title  string `json:"title"`
	Panels []struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Type       string `json:"type"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			RefID      string `json:"refId"`
			Expr       string `json:"expr"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

func TestDashboardIsValidAndQueriesExportedMetrics(t *testing.T) {
	raw := read(t, dashboardFile)
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(raw))
	require.NoError(t, dec.Decode(&d), "dashboard JSON")
	assert.False(t, dec.More(), "trailing data after the dashboard")
	assert.Equal(t, "loopguard", d.UID)
	assert.NotEmpty(t, d.Title)

	dsUID := regexp.MustCompile(`(?m)^\s*uid:\s*(\S+)`).FindStringSubmatch(read(t, datasourceFile))
	require.NotNil(t, dsUID, "the provisioned datasource has a uid")

	rules := read(t, rulesFile)
	seenIDs := map[int]bool{}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		assert.False(t, seenIDs[p.ID], "panel id %d used twice", p.ID)
		seenIDs[p.ID] = true
		assert.Equal(t, dsUID[1], p.Datasource.UID, "panel %q datasource", p.Title)
		assert.True(t, p.GridPos.W > 0 && p.GridPos.H > 0 && p.GridPos.X+p.GridPos.W <= 24, "panel %q grid position %+v", p.Title, p.GridPos)
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, q := range p.Targets {
			assert.Equal(t, dsUID[1], q.Datasource.UID, "panel %q query %s datasource", p.Title, q.RefID)
			assert.Equal(t, strings.Count(q.Expr, "("), strings.Count(q.Expr, ")"), "panel %q: unbalanced parentheses in %s", p.Title, q.Expr)
			refs := metricRef.FindAllString(q.Expr, -1)
			recs := recordingRef.FindAllString(q.Expr, -1)
			assert.NotEmpty(t, append(refs, recs...), "panel %q query %s names no loopguard series", p.Title, q.RefID)
			for _, m := range refs {
				assert.Contains(t, interceptor.MetricSeries(), m, "panel %q queries a series nothing exports", p.Title)
			}
			for _, r := range recs {
				assert.Contains(t, rules, "record: "+r, "panel %q uses a recording rule the rules file lacks", p.Title)
			}
		}
	}
	// The panels: halts by reason, paused now, pause wait p50/p95,
	// rejected inputs, guarded calls.
	for _, want := range []string{"Halts by reason", "Paused now", "Pause wait p50 / p95", "Rejected human inputs", "Guarded calls"} {
		assert.Contains(t, titles, want)
	}
}

func TestRulesQueryExportedMetrics(t *testing.T) {
	rules := read(t, rulesFile)
	refs := metricRef.FindAllString(rules, -1)
	require.NotEmpty(t, refs)
	for _, m := range refs {
		assert.Contains(t, interceptor.MetricSeries(), m, "the rules query a series nothing exports")
	}
	for _, alert := range []string{"LoopGuardWorkflowPausedTooLong", "LoopGuardHaltRateSpike"} {
		assert.Contains(t, rules, "alert: "+alert)
	}
	// Every recording rule the alerts use is in the rules or in the
	// thresholds, and the thresholds file holds nothing else.
	thresholds := read(t, thresholdsFile)
	for _, r := range recordingRef.FindAllString(rules, -1) {
		assert.True(t, strings.Contains(rules, "record: "+r) || strings.Contains(thresholds, "record: "+r),
			"the rules use %s, which neither the rules nor the thresholds record", r)
	}
	assert.NotContains(t, thresholds, "alert:")
	assert.Empty(t, metricRef.FindAllString(thresholds, -1), "the thresholds are constants")
	for _, cfgFile := range []string{promConfigFile, hostConfigFile} {
		cfg := read(t, cfgFile)
		for _, f := range []string{rulesFile, thresholdsFile} {
			assert.Contains(t, cfg, "- "+filepath.Base(f), "%s loads %s", cfgFile, f)
		}
	}
	assert.Contains(t, read(t, rulesTestFile), "- "+filepath.Base(thresholdsFile), "the rules' unit tests use the shipped thresholds")
}

// TestPromtool runs promtool over the configuration and the rules, and the
// rules' unit tests, where promtool is installed (Debian: apt-get install
// prometheus).
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus): the rules were not loaded")
	}
	for _, args := range [][]string{
		{"check", "rules", rulesFile, thresholdsFile},
		{"check", "config", promConfigFile},
		{"check", "config", hostConfigFile},
		{"test", "rules", rulesTestFile},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		assert.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
		assert.Contains(t, string(out), "SUCCESS", "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// TestComposeMatchesRecipe checks that docker-compose.yml runs what the
// recipe without Docker runs, and worker/e2e/production tests: the server
// configuration, both setup scripts and the rules directory, and the
// Temporal server version the worker module pins.
func TestComposeMatchesRecipe(t *testing.T) {
	compose := read(t, "../docker-compose.yml")
	pinned := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\S+)`).FindStringSubmatch(read(t, "../worker/go.mod"))
	require.NotNil(t, pinned, "worker/go.mod requires go.temporal.io/server")
	for _, want := range []string{
		"image: temporalio/server:" + pinned[1] + "\n",
		"image: temporalio/admin-tools:" + pinned[1] + "\n",
		"TEMPORAL_SERVER_CONFIG_FILE_PATH: /etc/loopguard/temporal/config/server.yaml",
		"./deploy/temporal/config:/etc/loopguard/temporal/config:ro",
		"DYNAMIC_CONFIG_FILE_PATH: /etc/loopguard/temporal/dynamicconfig/loopguard.yaml",
		"./deploy/temporal/dynamicconfig:/etc/loopguard/temporal/dynamicconfig:ro",
		"./deploy/temporal/scripts:/scripts:ro",
		`command: ["/scripts/setup-schema.sh"]`,
		`command: ["/scripts/setup-namespace.sh"]`,
		"./deploy/prometheus:/etc/prometheus:ro",
	} {
		assert.Contains(t, compose, want)
	}
	for _, f := range []string{"temporal/config/server.yaml", "temporal/dynamicconfig/loopguard.yaml",
		"temporal/scripts/setup-schema.sh", "temporal/scripts/setup-namespace.sh"} {
		_, err := os.Stat(f)
		assert.NoError(t, err, "the compose file mounts %s", f)
	}
	server := read(t, "temporal/config/server.yaml")
	assert.Equal(t, 2, strings.Count(server, "pluginName: postgres12"), "both stores on PostgreSQL")
	assert.True(t, strings.HasPrefix(server, "# enable-template\n"), "the server renders it with the environment")
}
