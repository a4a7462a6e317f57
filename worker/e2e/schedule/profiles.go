package schedule

import (
	"time"

	"github.com/loopguard/loopguard/interceptor"
)

// The guard profiles a plan can run under: each is one worker's Options.
const (
	ProfileDefault = "default" // the guard's defaults
	ProfileTight   = "tight"   // low thresholds, per-node options, a declared graph
	ProfileObserve = "observe" // OnHalt: observe (feature policy)
	ProfileFail    = "fail"    // OnHalt: fail (feature policy)
	ProfileTimeout = "timeout" // a pause that resumes by itself (feature policy)
)

// Profiles are the recorded options of each profile. Reference fields
// (Nodes, IgnoreFields, Graph) are built afresh on every call.
var Profiles = map[string]func() interceptor.Options{
	ProfileDefault: func() interceptor.Options { return interceptor.Options{} },
	ProfileTight: func() interceptor.Options {
		return interceptor.Options{
			MaxCallsPerNode: 6,
			RepeatThreshold: 2,
			IgnoreFields:    []string{"stamp"},
			Nodes: map[string]interceptor.NodeOptions{
				"Verify": {IgnoreFields: []string{"at"}},
				"Score":  {Exempt: true},
			},
			Graph: []interceptor.Edge{{From: "Code", To: "Verify"}},
		}
	},
	ProfileObserve: func() interceptor.Options { return interceptor.Options{OnHalt: interceptor.OnHaltObserve} },
	ProfileFail:    func() interceptor.Options { return interceptor.Options{OnHalt: interceptor.OnHaltFail} },
	ProfileTimeout: func() interceptor.Options {
		return interceptor.Options{PauseTimeout: time.Second, OnPauseTimeout: interceptor.TimeoutResume}
	},
}

// profileOrder is the order Generate picks profiles from (map order is
// random).
var profileOrder = []string{ProfileDefault, ProfileTight, ProfileObserve, ProfileFail, ProfileTimeout}
