package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loopguard/loopguard/interceptor"
)

// TestDefaultPolicy: analyze and watch judge under the tool-call grain
// unless --policy says otherwise; --policy defaults still gives the zero
// Options (the interceptor's, budgets per agent turn).
func TestDefaultPolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		give []string
		want interceptor.Grain
	}{
		{name: "no --policy", want: interceptor.GrainToolCall},
		{name: "--policy tool_call", give: []string{"--policy", "tool_call"}, want: interceptor.GrainToolCall},
		{name: "--policy defaults", give: []string{"--policy", "defaults"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseAnalyzeFlags(append(tc.give, fixtureHistories))
			require.NoError(t, err)
			require.Len(t, cfg.policies, 1)
			o, err := analyzeOptions(cfg.policies[0], "")
			require.NoError(t, err)
			assert.Equal(t, tc.want, o.Grain, "analyze")

			_, wo, err := watchOptions(tc.give)
			require.NoError(t, err)
			assert.Equal(t, tc.want, wo.Guard.Grain, "watch")
		})
	}
}

// TestDefaultPolicyHaltsNoProgressingRun: the commands as the docs give
// them, with no --policy, halt none of three progressing real runs
// (testdata/progressing, recorded without the guard by
// worker/cmd/record-traces) and still halt a loop; --policy defaults, the
// zero Options, halts all three progressing runs. The default policy is
// the README's guard: it warns a loop once before it halts it.
func TestDefaultPolicyHaltsNoProgressingRun(t *testing.T) {
	const progressing = "testdata/progressing"
	loop := filepath.Join(fixtureHistories, "unguarded-identical-patch.json")
	for _, tc := range []struct {
		name string
		give []string
		want string
	}{
		{name: "default, progressing", give: []string{progressing}, want: "3 histories (3 guarded under tool_call), 59 calls: 0 would be warned, 0 would halt"},
		{name: "default, a loop", give: []string{loop}, want: "1 histories (1 guarded under tool_call), 40 calls: 1 would be warned, 1 would halt"},
		{name: "zero Options, progressing", give: []string{"--policy", "defaults", progressing}, want: "3 histories (3 guarded under defaults), 59 calls: 0 would be warned, 3 would halt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runAnalyzeArgs(t, append([]string{"--top", "0"}, tc.give...)...)
			require.NoError(t, err, stderr)
			assert.Contains(t, out, tc.want)
		})
	}
}
