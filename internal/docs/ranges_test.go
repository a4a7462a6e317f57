package docs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
)

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
