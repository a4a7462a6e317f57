package interceptor_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		name string
		give string
		want interceptor.Options
	}{
		{"empty object", `{}`, interceptor.Options{}},
		{"scope and mode", `{"workflows": ["AgentLoop"], "onHalt": "observe"}`,
			interceptor.Options{Workflows: []string{"AgentLoop"}, OnHalt: protocol.OnHaltObserve}},
		{"durations are strings", `{"maxNodeRuntime": "10m", "maxCycleRuntime": "1h30m", "pauseTimeout": "24h", "haltSignalTimeout": "90s"}`,
			interceptor.Options{MaxNodeRuntime: 10 * time.Minute, MaxCycleRuntime: 90 * time.Minute, PauseTimeout: 24 * time.Hour, HaltSignalTimeout: 90 * time.Second}},
		{"nodes and graph", `{"nodes": {"Verify": {"maxCalls": 12, "maxRuntime": "5m", "metricField": "failing", "higherIsBetter": true}, "Search": {"exempt": true}}, "graph": [{"from": "Code", "to": "Verify"}]}`,
			interceptor.Options{
				Nodes: map[string]interceptor.NodeOptions{
					"Verify": {MaxCalls: 12, MaxRuntime: 5 * time.Minute, MetricField: "failing", HigherIsBetter: true},
					"Search": {Exempt: true},
				},
				Graph: []interceptor.Edge{{From: "Code", To: "Verify"}},
			}},
		{"null keeps the default", `{"maxCost": null, "repeatThreshold": 4}`, interceptor.Options{RepeatThreshold: 4}},
		{"protocol names", `{"resumeSignal": "agent.resume", "memoKey": "guard"}`, interceptor.Options{ResumeSignal: "agent.resume", MemoKey: "guard"}},
		{"the recovery ladder", `{"warnings": 2, "countRepeats": true}`, interceptor.Options{Warnings: 2, CountRepeats: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := interceptor.ParsePolicy([]byte(tt.give))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		wantField  string
		wantReason string
	}{
		{"unknown field", `{"maxCycleIteration": 4}`, "", `unknown field "maxCycleIteration" (did you mean "maxCycleIterations"?)`},
		{"keys are exact", `{"MaxCycleIterations": 4}`, "", `unknown field "MaxCycleIterations"`},
		{"unknown node field", `{"nodes": {"Verify": {"metricFeild": "failing"}}}`, "nodes.Verify", `unknown field "metricFeild" (did you mean "metricField"?)`},
		{"hooks are code", `{"nodeName": "x"}`, "", `unknown field "nodeName"`},
		{"bad node duration", `{"nodes": {"Verify": {"maxRuntime": "10 minutes"}}}`, "nodes.Verify.maxRuntime", `"10 minutes" is not a duration`},
		{"number duration", `{"pauseTimeout": 600}`, "pauseTimeout", `want a duration string such as "90s" or "10m", got 600`},
		{"wrong type", `{"repeatThreshold": "3"}`, "repeatThreshold", `want an integer, got "3"`},
		{"fraction for an integer", `{"window": 8.5}`, "window", "want an integer, got 8.5"},
		{"list element", `{"ignoreFields": ["a", 3]}`, "ignoreFields[1]", "want a string, got 3"},
		{"negative threshold", `{"maxCycleIterations": -1}`, "maxCycleIterations", "must not be negative, got -1"},
		{"negative node threshold", `{"nodes": {"Code": {"maxCalls": -2}}}`, "nodes.Code.maxCalls", "must not be negative, got -2"},
		{"negative duration", `{"maxNodeRuntime": "-1m"}`, "maxNodeRuntime", "must not be negative"},
		{"window too small", `{"window": 2}`, "window", "2 is smaller than"},
		{"window over the cap", `{"window": 257}`, "window", "must be at most 256"},
		{"threshold over the cap", `{"window": 256, "stallIterations": 1000}`, "stallIterations", "must be at most 256"},
		{"threshold of one", `{"repeatThreshold": 1}`, "repeatThreshold", "must be at least 2"},
		{"node name with spaces", `{"nodes": {"Verify ": {"maxCalls": 3}}}`, "nodes", "surrounding spaces"},
		{"reserved query name", `{"statusQuery": "__status"}`, "statusQuery", "reserved"},
		{"halt signal timeout too short", `{"haltSignalTimeout": "10ms"}`, "haltSignalTimeout", "must be at least 1s"},
		{"infinite cost", `{"maxCost": 1e999}`, "maxCost", "want a number"},
		{"bad onHalt", `{"onHalt": "explode"}`, "onHalt", `unknown action "explode"`},
		{"half an edge", `{"graph": [{"from": "Code"}]}`, "graph[0]", "edge needs both From and To"},
		{"blank workflow type", `{"workflows": ["AgentLoop", " "]}`, "workflows[1]", "must be a workflow type name"},
		{"syntax error", "{\n  \"window\": 8,\n}", "", "invalid JSON at line 3, column 1"},
		{"trailing data", `{} {}`, "", "invalid JSON"},
		{"not an object", `[1]`, "", "want a JSON object, got an array"},
		{"empty", " \n", "", "empty, want a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := interceptor.ParsePolicy([]byte(tt.give))
			var pe *interceptor.PolicyError
			require.True(t, errors.As(err, &pe), "want a *PolicyError, got %T: %v", err, err)
			assert.Equal(t, tt.wantField, pe.Field)
			assert.Contains(t, pe.Reason, tt.wantReason)
		})
	}
}

func TestApplyPolicyOverlays(t *testing.T) {
	base := interceptor.Options{
		MaxCallsPerNode: 5,
		IgnoreFields:    []string{"at"},
		Nodes: map[string]interceptor.NodeOptions{
			"Verify": {MaxCalls: 4, MetricField: "failing"},
			"Code":   {CostField: "usage.tokens"},
		},
	}
	o := base
	require.NoError(t, o.ApplyPolicy([]byte(`{"window": 10, "ignoreFields": ["id"], "nodes": {"Verify": {"maxCalls": 12}, "Search": {"exempt": true}}}`)))
	assert.Equal(t, 5, o.MaxCallsPerNode, "absent keys keep the value")
	assert.Equal(t, 10, o.Window)
	assert.Equal(t, []string{"id"}, o.IgnoreFields, "lists replace")
	assert.Equal(t, map[string]interceptor.NodeOptions{
		"Verify": {MaxCalls: 12, MetricField: "failing"}, // merged field by field
		"Code":   {CostField: "usage.tokens"},
		"Search": {Exempt: true},
	}, o.Nodes)
	assert.Equal(t, interceptor.NodeOptions{MaxCalls: 4, MetricField: "failing"}, base.Nodes["Verify"], "the base's map is not modified")
	assert.Len(t, base.Nodes, 2)

	before := o
	require.Error(t, o.ApplyPolicy([]byte(`{"window": 12, "nodes": {"Verify": {"maxCalls": "many"}}}`)))
	assert.Equal(t, before, o, "a bad file changes nothing")
}

// TestPolicyRoundTrip: every data field of Options and NodeOptions has a
// policy form. The sample below must set every such field (checked by
// reflection), so a field added to Options later is covered without a
// policy-file change, or this test says which one is missing.
func TestPolicyRoundTrip(t *testing.T) {
	give := interceptor.Options{
		Grain:           interceptor.GrainToolCall,
		MaxCallsPerNode: 11, MaxNodeRuntime: 10 * time.Minute, MaxTotalCalls: 500, MaxCost: 1.5,
		MaxCycleIterations: 6, MaxCycleRuntime: time.Hour, MaxCycleCost: 0.5, MaxEdgeWithoutProgress: 4,
		RepeatThreshold: 4, ErrorRepeatThreshold: 4, StallIterations: 4, NoImproveIterations: 4,
		OscillationPeriods: 2, MaxOscillationPeriod: 3, Window: 10,
		IgnoreFields: []string{"at"},
		Nodes: map[string]interceptor.NodeOptions{"Verify": {
			MaxCalls: 3, MaxRuntime: time.Minute, Exempt: true, IgnoreFields: []string{"x"},
			ProgressFields: []string{"diff"}, MetricField: "failing", HigherIsBetter: true, CostField: "cost",
		}},
		Graph:  []interceptor.Edge{{From: "Code", To: "Verify"}},
		OnHalt: protocol.OnHaltObserve, Warnings: 2, CountRepeats: true, PauseTimeout: 24 * time.Hour, OnPauseTimeout: interceptor.TimeoutResume,
		ResumeSignal: "r", EscalateSignal: "e", HaltSignal: "h", HaltedSignal: "hd", StatusQuery: "s",
		ResumeUpdate: "ru", EscalateUpdate: "eu", SupervisorWorkflowID: "sup", SearchAttribute: "SA", PausedSinceAttribute: "SAT",
		MemoKey: "m", MaxPayloadBytes: 1024, HaltSignalTimeout: 5 * time.Second,
		Workflows: []string{"AgentLoop"}, Retire: true,
		OperatorKeys: []interceptor.OperatorKey{{ID: "alice", PublicKey: bytes.Repeat([]byte{7}, 32)}},
	}
	requireAllSet(t, "Options", reflect.ValueOf(give))
	requireAllSet(t, "NodeOptions", reflect.ValueOf(give.Nodes["Verify"]))

	data, err := interceptor.PolicyJSON(give)
	require.NoError(t, err)
	got, err := interceptor.ParsePolicy(data)
	require.NoError(t, err, "%s", data)
	assert.Equal(t, give, got)
}

func requireAllSet(t *testing.T, name string, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Func {
			require.False(t, v.Field(i).IsZero(), "%s.%s: give it a value in this test", name, f.Name)
		}
	}
}

func TestOptionErrorJSONPath(t *testing.T) {
	for in, want := range map[string]string{
		"MaxCycleIterations":            "maxCycleIterations",
		"Window":                        "window",
		"Nodes[Verify].MaxCalls":        "nodes.Verify.maxCalls",
		"Nodes[Verify].IgnoreFields[1]": "nodes.Verify.ignoreFields[1]",
		"Nodes":                         "nodes",
		"IgnoreFields[0]":               "ignoreFields[0]",
		"Graph[2]":                      "graph[2]",
		"Workflows[1]":                  "workflows[1]",
	} {
		assert.Equal(t, want, (&interceptor.OptionError{Field: in}).JSONPath(), in)
	}
}

func ExampleParsePolicy() {
	opts, err := interceptor.ParsePolicy([]byte(`{
		"workflows": ["AgentLoop"],
		"onHalt": "observe",
		"maxCycleIterations": 6,
		"maxNodeRuntime": "10m",
		"nodes": {"Verify": {"metricField": "failing"}, "Search": {"exempt": true}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.Workflows, opts.OnHalt, opts.MaxCycleIterations, opts.MaxNodeRuntime, opts.Nodes["Verify"].MetricField, opts.Nodes["Search"].Exempt)
	guard, err := interceptor.New(opts) // for worker.Options{Interceptors: ...}
	fmt.Println(guard != nil, err)

	_, err = interceptor.ParsePolicy([]byte(`{"nodes": {"Verify": {"maxRuntime": 600}}}`))
	fmt.Println(err)
	// Output:
	// [AgentLoop] observe 6 10m0s failing true
	// true <nil>
	// loopguard policy: nodes.Verify.maxRuntime: want a duration string such as "90s" or "10m", got 600
}

// FuzzParsePolicy: arbitrary bytes never panic, and whatever ParsePolicy
// accepts, New accepts too.
func FuzzParsePolicy(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"workflows":["AgentLoop"],"maxNodeRuntime":"10m"}`, `{"nodes":{"V":{"maxRuntime":600}}}`,
		`{"graph":[{"from":"A","to":"B"}]}`, `{"ignoreFields":["a..b"]}`, `[1]`, `null`, `{"nodes":null}`,
		`{"window":2}`, `{"nodes":{"":{}}}`, `{"onHalt":"observe","pauseTimeout":"-1s"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := interceptor.ParsePolicy(data)
		if err != nil {
			return
		}
		if _, err := interceptor.New(o); err != nil {
			t.Fatalf("ParsePolicy accepted %q but New refuses it: %v", data, err)
		}
	})
}
