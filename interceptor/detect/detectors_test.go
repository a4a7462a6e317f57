package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detectorCase: run give on a state with policy (default if nil); want the
// call index at which the trip surfaces (-1: none; len(give): pending at the
// end) and the detector.
type detectorCase struct {
	name       string
	policy     *Policy
	give       []string
	wantAt     int
	wantDet    Detector
	wantReason Reason
}

func runCases(t *testing.T, cases []detectorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			if tt.policy != nil {
				p = *tt.policy
			}
			at, trip := run(p, tt.give...)
			require.Equal(t, tt.wantAt, at, "trip: %+v", trip)
			assert.Equal(t, tt.wantDet, detectorOf(trip))
			if trip != nil {
				assert.NotEmpty(t, trip.Message)
				if tt.wantReason != "" {
					assert.Equal(t, tt.wantReason, trip.Reason)
				}
				assert.Equal(t, reasonOf(trip.Detector), trip.Reason)
			}
		})
	}
}

func TestIdenticalOutput(t *testing.T) {
	runCases(t, []detectorCase{
		{name: "three in a row", give: list("A=x", "A=x", "A=x", "A"), wantAt: 3, wantDet: DetectorIdenticalOutput, wantReason: ReasonStalled},
		{name: "a period of two nodes", give: list("A=x", "B=y", "A=x", "B=y", "A=x"), wantAt: 5, wantDet: DetectorIdenticalOutput},
		{name: "news from another node between", give: list("A=x", "B", "A=x", "B", "A=x", "B", "A=x"), wantAt: -1},
		{name: "two then different", give: list("A=x", "A=x", "A=y", "A=x"), wantAt: -1},
		{name: "failure breaks the run", give: list("A=x", "A=x", "A!boom", "A=x"), wantAt: -1},
		{name: "other nodes' outputs do not count", give: list("A=x", "B=x", "C=x"), wantAt: -1},
		{name: "threshold 4", policy: ptr(policyWith(func(p *Policy) { p.RepeatThreshold = 4 })), give: list("A=x", "B=y", "A=x", "B=y", "A=x", "B=y", "A=x"), wantAt: 7, wantDet: DetectorIdenticalOutput},
		{name: "disabled", policy: ptr(policyWith(func(p *Policy) { p.RepeatThreshold = 0 })), give: list("A=x", "B", "A=x", "B", "A=x"), wantAt: -1},
		{name: "empty results are no signal", give: list("A;silent", "B", "A;silent", "B", "A;silent", "B", "A;silent"), wantAt: -1},
	})
}

func TestRepeatedError(t *testing.T) {
	runCases(t, []detectorCase{
		{name: "three identical errors", give: list("A!timeout:#s", "A!timeout:#s", "A!timeout:#s"), wantAt: 3, wantDet: DetectorRepeatedError, wantReason: ReasonRepeatedError},
		{name: "a period of two nodes", give: list("A!e", "B=o", "A!e", "B=o", "A!e", "B=o"), wantAt: 5, wantDet: DetectorRepeatedError},
		{name: "different errors", give: list("A!e1", "A!e2", "A!e1"), wantAt: -1},
		{name: "success in between", give: list("A!e", "A!e", "A=ok", "A!e"), wantAt: -1},
		{name: "one failure then success", give: list("A!e", "A=ok", "B"), wantAt: -1},
		{name: "two failures then success", give: list("A!e", "A!e", "A=ok", "B"), wantAt: -1},
		{name: "threshold 2", policy: ptr(policyWith(func(p *Policy) { p.ErrorRepeatThreshold = 2 })), give: list("A!e", "A!e", "A!e"), wantAt: 3, wantDet: DetectorRepeatedError},
	})
}

func TestOutputOscillation(t *testing.T) {
	runCases(t, []detectorCase{
		{name: "A/B/A/B at the 4th output", give: list("A=a", "A=b", "A=a", "A=b", "A"), wantAt: 4, wantDet: DetectorOutputOscillation, wantReason: ReasonOscillating},
		{name: "A/B/C/A/B/C at the 6th output", give: list("A=a", "A=b", "A=c", "A=a", "A=b", "A=c", "A"), wantAt: 6, wantDet: DetectorOutputOscillation},
		{name: "with another node's constant result", give: list("A=a", "B=o", "A=b", "B=o", "A=a", "B=o", "A=b", "B=o"), wantAt: 8, wantDet: DetectorOutputOscillation},
		{name: "a failure breaks the period", give: list("A=a", "A!e", "A=b", "A=a", "A=b"), wantAt: -1},
		{name: "A/B/A/C", give: list("A=a", "A=b", "A=a", "A=c"), wantAt: -1},
		{name: "A/A/B/B", give: list("A=a", "A=a", "A=b", "A=b"), wantAt: -1},
		{name: "three periods asked", policy: ptr(policyWith(func(p *Policy) { p.OscillationPeriods = 3 })), give: list("A=a", "A=b", "A=a", "A=b", "A=a", "A"), wantAt: -1},
		{name: "three periods reached", policy: ptr(policyWith(func(p *Policy) { p.OscillationPeriods = 3; p.MaxCycleIterations = 0 })), give: list("A=a", "A=b", "A=a", "A=b", "A=a", "A=b"), wantAt: 6, wantDet: DetectorOutputOscillation},
		{name: "disabled", policy: ptr(policyWith(func(p *Policy) { p.OscillationPeriods = 0 })), give: list("A=a", "B", "A=b", "B", "A=a", "B", "A=b", "B"), wantAt: -1},
	})
}

func TestUnchangedProgress(t *testing.T) {
	runCases(t, []detectorCase{
		{name: "same diff three times", give: list("A;p=d1", "A;p=d1", "A;p=d1", "B"), wantAt: 3, wantDet: DetectorUnchangedProgress, wantReason: ReasonStalled},
		{name: "diff changes", give: list("A;p=d1", "A;p=d2", "A;p=d1", "A;p=d3"), wantAt: -1},
		{name: "steps without a value skipped", give: list("A;p=d1", "A!e", "A;p=d1", "A;p=d1"), wantAt: 4, wantDet: DetectorUnchangedProgress},
		{name: "two only", give: list("A;p=d1", "A;p=d1", "A;p=d2"), wantAt: -1},
	})
}

func TestNoImprovement(t *testing.T) {
	higher := policyWith(func(p *Policy) { p.Nodes = map[string]NodePolicy{"A": {HigherIsBetter: true}} })
	runCases(t, []detectorCase{
		{name: "7,4,4,4,4 trips at the last 4", give: list("A;m=7", "A;m=4", "A;m=4", "A;m=4", "A;m=4"), wantAt: 5, wantDet: DetectorNoImprovement, wantReason: ReasonStalled},
		{name: "7,4,2,1 never", give: list("A;m=7", "A;m=4", "A;m=2", "A;m=1"), wantAt: -1},
		{name: "plateau of two then better", give: list("A;m=7", "A;m=4", "A;m=4", "A;m=4", "A;m=2"), wantAt: -1},
		{name: "noisy, never below best", give: list("A;m=5", "B", "A;m=6", "B", "A;m=5", "B", "A;m=6"), wantAt: 7, wantDet: DetectorNoImprovement},
		{name: "higher is better: rising", policy: &higher, give: list("A;m=1", "A;m=2", "A;m=3", "A;m=4"), wantAt: -1},
		{name: "higher is better: falling", policy: &higher, give: list("A;m=3", "A;m=2", "A;m=2", "A;m=1"), wantAt: 4, wantDet: DetectorNoImprovement},
	})
}

func TestTransitionOscillation(t *testing.T) {
	runCases(t, []detectorCase{
		{name: "two nodes are no round of three", give: list("A=a", "B=x", "A=b", "B=y", "A=b", "B=y", "A=a", "B=x", "A"), wantAt: -1},
		{name: "period 3", wantReason: ReasonOscillating, give: list("I=a", "T=f1", "F=y1", "I=b", "T=f2", "F=y2", "I=a", "T=f1", "F=y1", "I=a", "T=f1", "F=y1", "I"), wantAt: 12, wantDet: DetectorTransitionOscillation},
		{name: "converging: new outputs", give: rep(4, "A", "B"), wantAt: -1},
		{name: "progress at one step", give: list("A=a", "B=x", "A=b", "B=y", "A=b", "B=y", "A=c", "B=x"), wantAt: -1},
	})
}

func TestConvergingLoopsNeverTrip(t *testing.T) {
	verifier := policyWith(func(p *Policy) {
		p.Nodes = map[string]NodePolicy{"verify": {Rules: Rules{MetricField: "failing"}}}
	})
	runCases(t, []detectorCase{
		{name: "distinct outputs", give: rep(4, "coder", "verify"), wantAt: -1},
		{name: "failing tests 7,4,2,0", policy: &verifier, give: list("coder", "verify;m=7", "coder", "verify;m=4", "coder", "verify;m=2", "coder", "verify;m=0"), wantAt: -1},
		{name: "diff changes every turn", give: list("coder;p=d1", "verify", "coder;p=d2", "verify", "coder;p=d3", "verify", "coder;p=d4", "verify"), wantAt: -1},
		{name: "retry then success", give: list("plan", "fetch!timeout", "fetch=page", "plan", "fetch=page2"), wantAt: -1},
	})
}

func ptr[T any](v T) *T { return &v }
