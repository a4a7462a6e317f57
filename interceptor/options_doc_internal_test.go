package interceptor

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// TestOptionsDocStatesTheDefaults: the go doc of each Options field with a
// default states the one buildConfig fills in for zero Options (once it
// said generation 1's MaxOscillationPeriod and RepeatThreshold).
func TestOptionsDocStatesTheDefaults(t *testing.T) {
	c, _, err := buildConfig(Options{})
	require.NoError(t, err)
	want := map[string]string{
		"OnHalt":            constName("OnHalt", string(c.OnHalt)),
		"OnPauseTimeout":    constName("Timeout", string(c.OnPauseTimeout)),
		"MemoKey":           strconv.Quote(c.MemoKey),
		"MaxPayloadBytes":   fmt.Sprintf("%d KiB", c.MaxPayloadBytes/1024),
		"HaltSignalTimeout": c.HaltSignalTimeout.String(),
	}
	// The thresholds and budgets: the Policy field of the same name.
	pol := reflect.ValueOf(c.Policy)
	for _, f := range reflect.VisibleFields(reflect.TypeOf(Options{})) {
		if v := pol.FieldByName(f.Name); v.IsValid() && v.CanInt() {
			want[f.Name] = strconv.FormatInt(v.Int(), 10)
		} else if v.IsValid() && v.CanFloat() {
			want[f.Name] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
		}
	}
	stated := regexp.MustCompile(`Default\s+((?:\d+ KiB)|\S+?)[.:](?:\s|$)`)
	seen := 0
	for name, doc := range optionsDocs(t) {
		w, ok := want[name]
		if !ok {
			continue
		}
		seen++
		m := stated.FindStringSubmatch(doc)
		if assert.NotNil(t, m, "Options.%s states no default", name) {
			assert.Equal(t, w, strings.TrimSpace(m[1]), "Options.%s's doc", name)
		}
	}
	assert.Equal(t, len(want), seen, "Options fields with a default")
	assert.GreaterOrEqual(t, seen, 20)
}

// constName is the name of the exported constant of value v: prefix and
// v with its first letter upper case (OnHaltPause, TimeoutEscalate).
func constName(prefix, v string) string {
	return prefix + strings.ToUpper(v[:1]) + v[1:]
}

// TestOptionsDocStatesTheRanges: the ranges the go doc of Options states
// with a figure are the ones buildConfig enforces.
func TestOptionsDocStatesTheRanges(t *testing.T) {
	docs := optionsDocs(t)
	for field, want := range map[string]string{
		"Window":               fmt.Sprintf("At most %d", detect.MaxWindow),
		"HaltSignalTimeout":    fmt.Sprintf("At least %s", minHaltSignalTimeout),
		"RepeatThreshold":      fmt.Sprintf("to %d (detect.SequenceSteps", detect.SequenceSteps),
		"ErrorRepeatThreshold": fmt.Sprintf("to %d (one failure fewer", detect.SequenceSteps-1),
		"OscillationPeriods":   fmt.Sprintf("2 to %d (the loop rule's steps", detect.SequenceSteps/2),
	} {
		assert.Contains(t, strings.Join(strings.Fields(docs[field]), " "), want, "Options.%s's doc", field)
	}
	_, _, err := buildConfig(Options{Window: detect.MaxWindow})
	require.NoError(t, err)
	_, _, err = buildConfig(Options{Window: detect.MaxWindow + 1})
	require.Error(t, err)
	_, _, err = buildConfig(Options{HaltSignalTimeout: minHaltSignalTimeout})
	require.NoError(t, err)
	_, _, err = buildConfig(Options{HaltSignalTimeout: minHaltSignalTimeout - 1})
	require.Error(t, err)
}

// optionsDocs returns the go doc of each field of Options, by name.
func optionsDocs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "options.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Options" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range fld.Names {
				docs[name.Name] = fld.Doc.Text()
			}
		}
		return false
	})
	return docs
}
