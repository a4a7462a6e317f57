package judge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/internal/judge"
)

// TestNew: interceptor hands over a Judge with every method of the
// interface (the assertion in New would panic otherwise), and options New
// refuses come back as interceptor.New's error, not as a nil Judge.
func TestNew(t *testing.T) {
	j, err := judge.New(interceptor.Options{})
	require.NoError(t, err)
	require.NotNil(t, j)
	assert.Zero(t, j.Calls())
	assert.Empty(t, j.Verdicts())

	_, err = judge.New(interceptor.Options{MaxCallsPerNode: -1})
	var oe *interceptor.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "MaxCallsPerNode", oe.Field)
	_, werr := interceptor.New(interceptor.Options{MaxCallsPerNode: -1})
	assert.Equal(t, werr.Error(), err.Error())
}
