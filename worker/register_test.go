package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/loopguard/loopguard/interceptor"
)

// TestWarnsOfUnregisteredWorkflow: a policy whose workflows name a type the
// worker does not register (a case typo) makes a WARN line naming it, and
// the sample policy makes none.
func TestWarnsOfUnregisteredWorkflow(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	warnUnregistered(interceptor.Options{Workflows: []string{"coderVerifierLoop"}}, zap.New(core))
	if assert.Equal(t, 1, logs.Len()) {
		e := logs.All()[0]
		assert.Contains(t, e.Message, "does not register")
		assert.Contains(t, e.ContextMap()["error"], `did you mean "CoderVerifierLoop"`)
	}

	core, logs = observer.New(zap.WarnLevel)
	opts, err := guardOptions(config{})
	assert.NoError(t, err)
	warnUnregistered(opts, zap.New(core))
	assert.Zero(t, logs.Len(), "the sample policy names registered workflows: %v", logs.All())
}
