package docs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
)

// root is the repository root, from this package's directory.
const root = "../.."

// doc is one documentation file: a markdown page, or a Go file whose
// comments are documentation (go doc).
type doc struct {
	path string // relative to root
	text string
}

// markdown returns the user and maintainer pages: README, CONTRIBUTING and
// docs/*.md. CHANGELOG.md is history and says what each release did.
func markdown(t *testing.T) []doc {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	paths = append(paths, filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md"))
	return read(t, paths)
}

// goDocs returns the non-test Go files of the packages users read with go
// doc.
func goDocs(t *testing.T) []doc {
	t.Helper()
	var paths []string
	for _, dir := range []string{"interceptor", "interceptor/detect", "testsuite", "worker", "workflows", "activities"} {
		ps, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		require.NoError(t, err)
		for _, p := range ps {
			if !strings.HasSuffix(p, "_test.go") {
				paths = append(paths, p)
			}
		}
	}
	docs := read(t, paths)
	for i := range docs {
		// Comment markers at line starts would break a sentence the
		// checks read; the lines stay where they are.
		docs[i].text = commentMarker.ReplaceAllString(docs[i].text, "\n")
	}
	return docs
}

var commentMarker = regexp.MustCompile(`\n[ \t]*//[ \t]?`)

func read(t *testing.T, paths []string) []doc {
	t.Helper()
	require.NotEmpty(t, paths)
	docs := make([]doc, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		docs = append(docs, doc{path: filepath.ToSlash(rel), text: string(data)})
	}
	return docs
}

// line is the 1-based line of offset i in s.
func line(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// TestDocsStateTheCurrentVersions: a doc that says which guard version
// new executions record, or which detection generation they pin, says what
// the code does. Such statements are better left generic ("every guard
// version", interceptor.GuardVersion); the ones a doc does make are
// checked. Statements about a past version ("from guard version 7",
// "guard versions 1 to 3 pinned no generation") are history and stay.
func TestDocsStateTheCurrentVersions(t *testing.T) {
	guard := interceptor.GuardVersion
	claims := []struct {
		re   *regexp.Regexp
		want int
		what string
	}{
		{regexp.MustCompile(`(?i)\bnow (?:guard )?version (\d+)`), guard, "the guard version new executions record"},
		{regexp.MustCompile(`(?i)\b1 to (\d+) today`), guard, "the newest guard version"},
		{regexp.MustCompile(`(?i)\bdescribes guard version (\d+)`), guard, "the guard version a page describes"},
		{regexp.MustCompile(`(?i)\bnew executions (?:record|run|get) (?:guard )?version (\d+)`), guard, "the guard version new executions record"},
		{regexp.MustCompile(`(?i)\bpinned histories of (?:guard )?versions 1 to (\d+)`), guard, "the guard versions with pinned fixtures"},
	}
	for _, d := range append(markdown(t), goDocs(t)...) {
		for _, c := range claims {
			for _, m := range c.re.FindAllStringSubmatchIndex(d.text, -1) {
				got, _ := strconv.Atoi(d.text[m[2]:m[3]])
				assert.Equal(t, c.want, got, "%s:%d states %s as %d (%q); the code says %d",
					d.path, line(d.text, m[0]), c.what, got, d.text[m[0]:m[1]], c.want)
			}
		}
	}
}

// TestDocsNameNoDetectionGeneration: the release has one rule set, part
// of the guard's version; a doc that names a detection generation (or a
// Go doc that names one of the constants it had) narrates history.
func TestDocsNameNoDetectionGeneration(t *testing.T) {
	re := regexp.MustCompile(`(?i)\bdetection generations?\b|\bDetection(?:V[0-9]|Legacy)\b|\bgenerations? [0-9]\b`)
	for _, d := range append(markdown(t), goDocs(t)...) {
		for _, m := range re.FindAllStringIndex(d.text, -1) {
			t.Errorf("%s:%d names a detection generation (%q): describe the one rule set", d.path, line(d.text, m[0]), d.text[m[0]:m[1]])
		}
	}
}

// TestDocsNameExportedMetrics: every guard metric a doc names is one the
// guard records, and every Prometheus selector (name{...}) names a series
// a scrape holds: loopguard_halts_total, not loopguard_halts (a query for
// which finds nothing).
func TestDocsNameExportedMetrics(t *testing.T) {
	series := interceptor.MetricSeries()
	names := slices.Clone(series)
	for _, n := range []string{interceptor.MetricHalts, interceptor.MetricWarnings, interceptor.MetricHeeded,
		interceptor.MetricResumes, interceptor.MetricEscalations, interceptor.MetricGuardedCalls,
		interceptor.MetricRejectedInputs, interceptor.MetricPauseWait} {
		names = append(names, n, n+"_seconds")
	}
	// The watcher's (worker/watch, another module: read from its source).
	watch, err := os.ReadFile(filepath.Join(root, "worker", "watch", "watch.go"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`\bMetric\w+\s*=\s*"(loopguard_watch_[a-z_]+)"`).FindAllStringSubmatch(string(watch), -1) {
		names = append(names, m[1])
	}
	ref := regexp.MustCompile(`\bloopguard_[a-z_]*[a-z]`)
	checked := 0
	for _, d := range append(markdown(t), goDocs(t)...) {
		for _, m := range ref.FindAllStringIndex(d.text, -1) {
			name, rest := d.text[m[0]:m[1]], d.text[m[1]:]
			if strings.HasPrefix(rest, ".go") || strings.HasPrefix(rest, "_test.go") {
				continue // a file name
			}
			checked++
			where := fmt.Sprintf("%s:%d", d.path, line(d.text, m[0]))
			if strings.HasPrefix(rest, "{") {
				assert.Contains(t, series, name, "%s: the selector %s{…} names no series a scrape holds (interceptor.MetricSeries)", where, name)
				continue
			}
			assert.Contains(t, names, name, "%s: %s is no metric of the guard or the watcher", where, name)
		}
	}
	assert.NotZero(t, checked)
}

// policyField is the value of the detect.Policy field named field, or false
// when the Policy has no such field.
func policyField(p detect.Policy, field string) (float64, bool) {
	v := reflect.ValueOf(p).FieldByName(field)
	if !v.IsValid() {
		return 0, false
	}
	switch x := v.Interface().(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case time.Duration:
		return float64(x), true
	}
	return 0, false
}

// stated reads a stated default: a number, or "off" (0).
func stated(s string) (float64, bool) {
	if s == "off" {
		return 0, true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// TestOptionsDocsStateTheDefaults: the markdown tables (configuration.md's
// of every detector among them) give the defaults detect.DefaultPolicy sets. (The go doc
// of each Options field is checked by interceptor's
// TestOptionsDocStatesTheDefaults.)
func TestOptionsDocsStateTheDefaults(t *testing.T) {
	def := detect.DefaultPolicy()
	table := map[string]bool{}

	// Markdown: "`Field` (N)", "`Field` N", "`Field`, N".
	md := regexp.MustCompile("`([A-Z][A-Za-z]+)`,? \\(?(\\d+|off)\\b")
	for _, d := range markdown(t) {
		for _, m := range md.FindAllStringSubmatchIndex(d.text, -1) {
			field, value := d.text[m[2]:m[3]], d.text[m[4]:m[5]]
			want, ok := policyField(def, field)
			if !ok {
				continue
			}
			got, _ := stated(value)
			assert.Equal(t, want, got, "%s:%d gives %s the default %s; detect.DefaultPolicy sets %v", d.path, line(d.text, m[0]), field, value, want)
			if strings.HasSuffix(d.path, "configuration.md") {
				table[field] = true
			}
		}
	}
	assert.GreaterOrEqual(t, len(table), 14, "fields whose default configuration.md states: %v", table)
}

// TestToolCallGrainIsStatedAsCoded: the tool-call grain's budgets, where a
// doc states them, are detect.ToolCallPolicy's.
func TestToolCallGrainIsStatedAsCoded(t *testing.T) {
	p := detect.ToolCallPolicy()
	re := regexp.MustCompile(`(\d+)\s+steps\s+per\s+node,?\s+(?:and\s+)?(\d+)\s+iterations\s+per\s+cycle,?\s+(?:and\s+)?(\d+)\s+transitions\s+without\s+progress`)
	found := 0
	for _, d := range append(markdown(t), goDocs(t)...) {
		for _, m := range re.FindAllStringSubmatch(d.text, -1) {
			found++
			assert.Equal(t, []string{strconv.Itoa(p.MaxCallsPerNode), strconv.Itoa(p.MaxCycleIterations), strconv.Itoa(p.MaxEdgeWithoutProgress)},
				m[1:], "%s states the tool-call grain's budgets as %q", d.path, m[0])
		}
	}
	assert.NotZero(t, found)
}

// TestExamplesHandleSetHaltHandlerError: SetHaltHandler reports a workflow
// the guard does not guard (ErrNotGuarded), the sign of a typo in
// Options.Workflows; no example may throw that away.
func TestExamplesHandleSetHaltHandlerError(t *testing.T) {
	bad := regexp.MustCompile(`_\s*=\s*(?:interceptor\.)?SetHaltHandler\(`)
	docs := markdown(t)
	var code []string
	require.NoError(t, filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			code = append(code, p)
		}
		return nil
	}))
	require.Greater(t, len(code), 100, "Go files walked")
	for _, d := range append(docs, read(t, code)...) {
		for _, m := range bad.FindAllStringIndex(d.text, -1) {
			t.Errorf("%s:%d discards SetHaltHandler's error", d.path, line(d.text, m[0]))
		}
	}
}

// anchor is GitHub's anchor of a heading: lower case, punctuation other
// than - and _ removed, spaces as -.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("→↔—–“”‘’…×", r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the anchors of a markdown page's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		a := anchor(strings.ReplaceAll(h, "`", ""))
		for i := 0; out[a]; i++ {
			a = fmt.Sprintf("%s-%d", anchor(h), i+1)
		}
		out[a] = true
	}
	return out
}

// TestDocLinksResolve: every relative link of a page names a file of the
// repository, and every #anchor a heading of its page.
func TestDocLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, d := range markdown(t) {
		for _, m := range link.FindAllStringSubmatchIndex(d.text, -1) {
			target := d.text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			where := fmt.Sprintf("%s:%d", d.path, line(d.text, m[0]))
			file, frag, _ := strings.Cut(target, "#")
			// A page that links to itself by name sends the reader to its
			// top (operations.md once did, for a section of its own).
			assert.False(t, file != "" && filepath.ToSlash(filepath.Join(filepath.Dir(d.path), file)) == d.path,
				"%s links to its own page (%s): link the section, #anchor", where, target)
			path := d.path
			if file != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(d.path), file))
			}
			data, err := os.ReadFile(filepath.Join(root, path))
			if !assert.NoError(t, err, "%s links to %s, which does not exist", where, target) || frag == "" {
				continue
			}
			assert.True(t, anchors(string(data))[frag], "%s links to #%s, which no heading of %s makes", where, frag, path)
		}
	}
}

// readmeCommands returns the README's two set-up commands: the lines of
// its first sh block that run go.
func readmeCommands(t *testing.T, readme string) (demo, test string, at int) {
	t.Helper()
	i := strings.Index(readme, "```sh\n")
	require.GreaterOrEqual(t, i, 0, "README has no sh block")
	block := readme[i+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	for l := range strings.SplitSeq(block, "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmd = strings.TrimSpace(cmd)
		switch {
		case strings.HasPrefix(cmd, "go run ./worker"):
			demo = cmd
		case strings.HasPrefix(cmd, "go test "):
			test = cmd
		}
	}
	return demo, test, line(readme, i) + strings.Count(block, "\n")
}

// TestReadmeFirstScreen: the README is a first screen, not a manual: at
// most 250 lines, with the demo and the test command in its first 60, and
// CI runs the README's test command.
func TestReadmeFirstScreen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(data)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 250, "README lines")
	demo, test, end := readmeCommands(t, readme)
	assert.Equal(t, "go run ./worker --demo", demo, "the README's first command")
	assert.NotEmpty(t, test, "the README's test command")
	assert.LessOrEqual(t, end, 60, "the two commands end on this line of the README")

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	// CI runs it with -json through its report: the same packages and
	// flags otherwise.
	args := strings.Fields(strings.TrimPrefix(test, "go test "))
	assert.Contains(t, string(ci), "go test -json "+strings.Join(args, " "), ".ci/run must run the README's test command")
}

// TestDocsStateTheCLIVersion: the temporal CLI version a page names is the
// one CI builds and the CLI test runs (worker/e2e/clitest).
func TestDocsStateTheCLIVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "worker", "e2e", "clitest", "temporal-cli.version"))
	require.NoError(t, err)
	want := strings.TrimSpace(string(data))
	re := regexp.MustCompile("(?:CLI,?\\s+\\(?|temporal-cli-|cli/cmd/temporal@)(v\\d+\\.\\d+\\.\\d+)")
	found := 0
	for _, d := range markdown(t) {
		for _, m := range re.FindAllStringSubmatchIndex(d.text, -1) {
			found++
			assert.Equal(t, want, d.text[m[2]:m[3]], "%s:%d names the temporal CLI %s", d.path, line(d.text, m[0]), d.text[m[2]:m[3]])
		}
	}
	assert.GreaterOrEqual(t, found, 8)
}

// TestReadmeDetectionFiguresAreMeasured: the README's "How well it
// detects" table states only figures that docs/detection.md (where each
// has its command and its test) or docs/measurements.md states too, so a
// re-measured figure cannot stay behind on the first screen.
func TestReadmeDetectionFiguresAreMeasured(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		return string(b)
	}
	readme, measured := read("README.md"), read("docs/detection.md")+read("docs/measurements.md")
	_, sec, ok := strings.Cut(readme, "## How well it detects\n")
	require.True(t, ok, "README has a section \"How well it detects\"")
	sec, _, _ = strings.Cut(sec, "\n## ")
	// Rows labelled tune / check are figures on data the budgets were tuned
	// on, beside held-out ones: the section must not say nobody tuned on
	// them (it once did).
	if strings.Contains(sec, "tune") {
		assert.NotRegexp(t, `(?i)nobody[^.]*tun|untuned|not tuned`, sec, "README's detection section labels rows tune and says nobody tuned on them")
		assert.Contains(t, sec, "held-out", "README's detection section says which half is held out")
	}
	figure := regexp.MustCompile(`\d+/\d+|\d+(\.\d+)?×`)
	n := 0
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| corpus") {
			continue
		}
		for _, cell := range strings.Split(line, "|")[2:] {
			for _, f := range figure.FindAllString(cell, -1) {
				n++
				stated := regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(f) + `($|[^\d])`)
				assert.True(t, stated.MatchString(measured), "README states %s (%s), which docs/detection.md and docs/measurements.md do not", f, strings.TrimSpace(line))
			}
		}
	}
	assert.GreaterOrEqual(t, n, 8, "figures checked")
}

// TestConfigurationStatesTheRanges: each row of configuration.md's
// "Accepted values" table that names one Options field and a figure is
// what New enforces: "to N" or "at most N" is accepted and one more is
// refused naming the field; "at least D" (a duration) is accepted and
// one nanosecond less refused. The other fields are held at their widest
// (Window 256) so that the row's own bound is the one met.
func TestConfigurationStatesTheRanges(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	require.NoError(t, err)
	text := string(data)
	start := strings.Index(text, "## Accepted values")
	require.GreaterOrEqual(t, start, 0, "configuration.md has an Accepted values section")
	end := strings.Index(text[start+1:], "\n## ")
	require.Greater(t, end, 0)
	section := text[start : start+1+end]

	row := regexp.MustCompile("(?m)^\\| `([A-Z][A-Za-z]+)` \\| (.*) \\|$")
	upper := regexp.MustCompile(`(?:\bto|at most) (\d+)\b`)
	lower := regexp.MustCompile(`at least (\d+[a-z]+)\b`)
	checked := 0
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		field, says := m[1], m[2]
		if u := upper.FindStringSubmatch(says); u != nil {
			n, err := strconv.Atoi(u[1])
			require.NoError(t, err)
			requireBound(t, field, int64(n), int64(n+1))
			checked++
		}
		if l := lower.FindStringSubmatch(says); l != nil {
			d, err := time.ParseDuration(l[1])
			require.NoError(t, err, "%s: %q", field, l[0])
			requireBound(t, field, int64(d), int64(d-1))
			checked++
		}
	}
	assert.GreaterOrEqual(t, checked, 7, "figures checked in the Accepted values table")
}

// requireBound: field at ok is accepted, at bad refused naming field.
func requireBound(t *testing.T, field string, ok, bad int64) {
	t.Helper()
	with := func(v int64) interceptor.Options {
		o := interceptor.Options{Window: 256}
		f := reflect.ValueOf(&o).Elem().FieldByName(field)
		require.True(t, f.IsValid(), "configuration.md names Options.%s", field)
		f.SetInt(v)
		return o
	}
	_, err := interceptor.New(with(ok))
	assert.NoError(t, err, "configuration.md: %s accepts %d", field, ok)
	_, err = interceptor.New(with(bad))
	var oe *interceptor.OptionError
	if assert.True(t, errors.As(err, &oe), "configuration.md: %s refuses %d", field, bad) {
		assert.Equal(t, field, oe.Field)
	}
}

// TestAnalysisFiguresAgree: analysis.md's example summary line is the
// defaults column of its own table (it once said 779 halts where the table
// said 659), and a duration it quotes for a command is the one
// measurements.md gives that command (it once said 13.5 minutes where
// measurements.md said 10 min 44 s).
func TestAnalysisFiguresAgree(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		return string(b)
	}
	analysis, measurements := read("docs/analysis.md"), read("docs/measurements.md")

	line := regexp.MustCompile(`(\d+) histories \(\d+ guarded under defaults\), (\d+) calls: (\d+) would be warned, (\d+) would halt \((\d+) halts\), (\d+) calls saved`).FindStringSubmatch(analysis)
	require.NotNil(t, line, "analysis.md's example summary line")
	column := map[string]string{}
	for _, row := range regexp.MustCompile(`(?m)^\| ([a-z_ ]+?) +\| ([\d,]+) \|`).FindAllStringSubmatch(analysis, -1) {
		column[row[1]] = strings.ReplaceAll(row[2], ",", "")
	}
	for i, name := range []string{"histories", "calls", "would warn", "would halt", "halts", "calls saved"} {
		assert.Equal(t, column[name], line[i+1], "analysis.md: the summary line's %s, and the table's defaults column", name)
	}

	// A duration quoted just before an indented command.
	quoted := regexp.MustCompile(`(\d+(?:\.\d+)? minutes|\d+ min \d+ s)\):\n\n    (go [^\n]+)`).FindAllStringSubmatch(analysis, -1)
	require.NotEmpty(t, quoted, "analysis.md quotes a duration for a command")
	for _, q := range quoted {
		found := false
		for _, row := range strings.Split(measurements, "\n") {
			if strings.Contains(row, "`"+q[2]+"`") {
				found = true
				assert.Contains(t, row, q[1], "analysis.md quotes %s for %s; measurements.md's row does not", q[1], q[2])
			}
		}
		assert.True(t, found, "measurements.md has no row for %s", q[2])
	}
}

// TestDocsQuoteTheHaltsQuery: a page that gives the listing of every halt
// (the guard's and Workflow Pause's) gives interceptor.HaltsQuery's, so
// that operators copy a query that finds both.
func TestDocsQuoteTheHaltsQuery(t *testing.T) {
	want := interceptor.HaltsQuery("LoopGuardState")
	quoted := 0
	for _, d := range markdown(t) {
		text := strings.Join(strings.Fields(d.text), " ") // queries wrapped over lines
		for _, m := range regexp.MustCompile(`(?:^|[\s'\x60])(\(?LoopGuardState STARTS_WITH[^'\x60]*?ExecutionStatus = "Paused")`).FindAllStringSubmatch(text, -1) {
			quoted++
			assert.Equal(t, want, m[1], "%s gives a listing of every halt that is not interceptor.HaltsQuery", d.path)
		}
	}
	assert.GreaterOrEqual(t, quoted, 3, "README, halts.md and operations.md give it")
}
