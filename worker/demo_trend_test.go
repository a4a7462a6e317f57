package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/workflows"
)

// TestDemoTrendLine: a halted row shows the evidence trend under "why",
// with a sparkline for a metric named by the node's MetricField.
func TestDemoTrendLine(t *testing.T) {
	sc := workflows.Scenarios()[2]
	nodes := map[string]interceptor.NodeOptions{"Verify": {MetricField: "failing"}}
	for _, tc := range []struct {
		name string
		give protocol.HaltEvent
		want string // "" for no trend line
	}{
		{"metric", protocol.HaltEvent{Node: "Verify", Evidence: protocol.Evidence{Metrics: []float64{7, 4, 4, 4}}},
			"    trend     failing 7 → 4 → 4 → 4  █▅▅▅\n"},
		{"metric of a node without a field name", protocol.HaltEvent{Node: "Code", Evidence: protocol.Evidence{Metrics: []float64{2, 2}}},
			"    trend     metric 2 → 2  ██\n"},
		{"errors", protocol.HaltEvent{Node: "Verify", Evidence: protocol.Evidence{ErrorSignatures: []string{"sandbox:#", "sandbox:#"}}},
			"    trend     errors sandbox:# ×2\n"},
		{"no evidence", protocol.HaltEvent{Node: "Verify"}, ""},
		{"budget with output hashes only", protocol.HaltEvent{HaltReason: protocol.ReasonBudgetExceeded, Node: "Code",
			Evidence: protocol.Evidence{OutputHashes: []string{"16c9db3f00", "a8df18ff00", "16c9db3f00"}}},
			"    trend     outputs 2 different in the last 3 calls of Code: still changing when the budget ran out\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &demo{namespace: "default", address: "127.0.0.1:7233", embedded: true, out: &out, nodes: nodes}
			h := tc.give
			if h.HaltReason == "" {
				h.HaltReason = protocol.ReasonStalled
			}
			h.Message = "stuck"
			d.printTable([]*demoResult{{Scenario: sc, WorkflowID: "wf", Outcome: outcomeHalted, Halt: &h}})
			text := out.String()
			if tc.want == "" {
				assert.NotContains(t, text, "trend", text)
				return
			}
			assert.Contains(t, text, tc.want)
			why := strings.Index(text, "    why ")
			assert.True(t, why >= 0 && why < strings.Index(text, tc.want), "the trend follows why:\n%s", text)
		})
	}
}
