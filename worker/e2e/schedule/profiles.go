package schedule

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// The guard profiles a plan can run under: each is one worker's Options.
const (
	ProfileDefault = "default" // the guard's defaults
	ProfileTight   = "tight"   // low thresholds, per-node options, a declared graph, one warning before a halt
	ProfileObserve = "observe" // OnHalt: observe (feature policy)
	ProfileFail    = "fail"    // OnHalt: fail (feature policy)
	ProfileTimeout = "timeout" // a pause that resumes by itself (feature policy)
)

// The search attributes every profile sets: the harness registers them,
// and checks that a terminated paused workflow no longer counts as paused.
const (
	StateAttribute       = "LoopGuardState"
	PausedSinceAttribute = "LoopGuardPausedSince"
)

// MetricPrefix starts the output of a call whose result carries a metric
// for MetricHook ("metric=NaN").
const MetricPrefix = "metric="

// MetricHook is the ResultHook of every profile: a result whose output is
// "metric=<number>" declares that number, parsed as user code would
// (strconv.ParseFloat: NaN, ±Inf, and ±Inf for out-of-range values), as
// the node's metric. Hooks are code, not pinned: the replays use it too.
func MetricHook(_ string, data []byte, obs *interceptor.Observation) {
	var r AgentResult
	if json.Unmarshal(data, &r) != nil {
		return
	}
	v, ok := strings.CutPrefix(r.Output, MetricPrefix)
	if !ok {
		return
	}
	f, _ := strconv.ParseFloat(v, 64)
	obs.HasMetric, obs.Metric = true, f
}

// withCommon adds what every profile has: the search attributes and the
// metric hook.
func withCommon(o interceptor.Options) interceptor.Options {
	o.SearchAttribute, o.PausedSinceAttribute = StateAttribute, PausedSinceAttribute
	o.ResultHook = MetricHook
	return o
}

// Profiles are the recorded options of each profile. Reference fields
// (Nodes, IgnoreFields, Graph) are built afresh on every call.
var Profiles = map[string]func() interceptor.Options{}

func init() {
	for name, f := range profiles {
		Profiles[name] = func() interceptor.Options { return withCommon(f()) }
	}
}

var profiles = map[string]func() interceptor.Options{
	ProfileDefault: func() interceptor.Options { return interceptor.Options{} },
	ProfileTight: func() interceptor.Options {
		return interceptor.Options{
			MaxCallsPerNode: 6,
			RepeatThreshold: 2,
			Warnings:        1,
			IgnoreFields:    []string{"stamp"},
			Nodes: map[string]interceptor.NodeOptions{
				"Verify": {IgnoreFields: []string{"at"}},
				"Score":  {Exempt: true},
			},
			Graph: []interceptor.Edge{{From: "Code", To: "Verify"}},
		}
	},
	ProfileObserve: func() interceptor.Options { return interceptor.Options{OnHalt: protocol.OnHaltObserve} },
	ProfileFail:    func() interceptor.Options { return interceptor.Options{OnHalt: protocol.OnHaltFail} },
	ProfileTimeout: func() interceptor.Options {
		return interceptor.Options{PauseTimeout: time.Second, OnPauseTimeout: interceptor.TimeoutResume}
	},
}

// profileOrder is the order Generate picks profiles from (map order is
// random).
var profileOrder = []string{ProfileDefault, ProfileTight, ProfileObserve, ProfileFail, ProfileTimeout}
