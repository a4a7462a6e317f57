package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
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

// countingClient answers CountWorkflow with n.
type countingClient struct {
	client.Client
	n     int64
	query string
}

func (c *countingClient) CountWorkflow(_ context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
	c.query = req.GetQuery()
	return &workflowservice.CountWorkflowExecutionsResponse{Count: c.n}, nil
}

// TestDemoSaysWhatTheDataDirectoryKeeps: a demo on a data directory where
// earlier runs left workflows paused says how many, and how to start
// afresh; in memory, or with none paused, it says nothing.
func TestDemoSaysWhatTheDataDirectoryKeeps(t *testing.T) {
	for _, tt := range []struct {
		name    string
		dataDir string
		paused  int64
		want    string
	}{
		{"paused runs kept", "loopguard-data", 26, "Data: loopguard-data keeps the workflows of earlier runs: 26 of them are still paused"},
		{"none paused", "loopguard-data", 0, ""},
		{"in memory", "", 26, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &countingClient{n: tt.paused}
			d := &demo{client: c, namespace: "default", out: &out, dataDir: tt.dataDir, searchAttribute: defaultSearchAttribute}
			d.announceKept(context.Background())
			if tt.want == "" {
				assert.Empty(t, out.String())
				return
			}
			assert.Contains(t, out.String(), tt.want)
			assert.Contains(t, out.String(), "--ephemeral")
			assert.Equal(t, interceptor.PausedQuery(defaultSearchAttribute), c.query)
		})
	}
}
