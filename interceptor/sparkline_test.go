package interceptor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		name string
		give []float64
		want string
	}{
		{"empty", nil, ""},
		{"converging to zero", []float64{7, 4, 2, 0}, "█▅▃▁"},
		{"stuck", []float64{7, 4, 4, 4}, "█▅▅▅"},
		{"flat and high", []float64{4, 4, 4, 4}, "████"},
		{"all zero", []float64{0, 0, 0}, "▁▁▁"},
		{"one value", []float64{3}, "█"},
		{"rising", []float64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
		{"negative values scale from the lowest", []float64{-2, 0, 2}, "▁▅█"},
		{"scores", []float64{0.25, 0.5, 0.5}, "▅██"},
		{"not a number", []float64{1, math.NaN(), math.Inf(1), 2}, "▅  █"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, interceptor.Sparkline(tc.give))
		})
	}
}

func TestEvidenceTrend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		give  protocol.Evidence
		label string
		want  string
	}{
		{"metric with its label", protocol.Evidence{Metrics: []float64{7, 4, 4, 4}}, "failing", "failing 7 → 4 → 4 → 4  █▅▅▅"},
		{"metric without a label", protocol.Evidence{Metrics: []float64{0.5, 0.25}}, "", "metric 0.5 → 0.25  █▅"},
		{"metric before outputs", protocol.Evidence{Metrics: []float64{1}, OutputHashes: []string{"abc"}}, "cost", "cost 1  █"},
		{"progress", protocol.Evidence{ProgressValues: []string{"3/10", "3/10"}}, "x", "progress 3/10 ×2"},
		{"errors", protocol.Evidence{ErrorSignatures: []string{"sandbox:#", "sandbox:#"}}, "", "errors sandbox:# ×2"},
		{"runs are counted, changes kept", protocol.Evidence{ErrorSignatures: []string{"a", "a", "b", "a"}}, "", "errors a ×2 → b → a"},
		{"an oscillation stays visible", protocol.Evidence{OutputHashes: []string{"aaaaaaaaaa", "bbbbbbbbbb", "aaaaaaaaaa"}}, "", "outputs aaaaaaaa → bbbbbbbb → aaaaaaaa"},
		{"outputs shortened", protocol.Evidence{OutputHashes: []string{"0123456789abcdef", "0123"}}, "", "outputs 01234567 → 0123"},
		{"transitions", protocol.Evidence{Transitions: []string{"Code→Verify", "Verify→Code"}}, "", "transitions Code→Verify, Verify→Code"},
		{"nothing", protocol.Evidence{}, "failing", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, interceptor.EvidenceTrend(protocol.HaltEvent{Evidence: tc.give}, tc.label))
		})
	}
}

func ExampleSparkline() {
	fmt.Println(interceptor.Sparkline([]float64{7, 4, 2, 0}))
	// Output: █▅▃▁
}
