package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// Feature switches one kind of construct or input on in generated plans.
// Sequential activity calls with repeating or varying results, answered by
// resume signals, are always on.
type Feature string

// The features.
const (
	// Program shapes.
	FeatParallel    Feature = "parallel"    // workflow.Go branches
	FeatLocal       Feature = "local"       // local activity calls
	FeatChild       Feature = "child"       // child workflow calls (guarded themselves)
	FeatTimer       Feature = "timer"       // workflow.Sleep between calls
	FeatSelect      Feature = "select"      // a Selector over calls and a timer
	FeatSelectChild Feature = "selectchild" // child workflow futures in a Selector
	FeatCAN         Feature = "can"         // continue-as-new between runs
	FeatInflight    Feature = "inflight"    // a call still running at continue-as-new
	// Human input.
	FeatEscalate Feature = "escalate" // escalate answers
	FeatUpdates  Feature = "updates"  // resume/escalate as updates
	FeatHalt     Feature = "halt"     // halt signals at random points
	FeatBad      Feature = "bad"      // malformed payloads, signals and updates
	FeatCancel   Feature = "cancel"   // cancellation at a random point
	// An operator terminates a paused workflow.
	FeatTerminate Feature = "terminate"
	// User code: a ResultHook reports metrics that are NaN, ±Inf or huge.
	FeatNonFinite Feature = "nonfinite"
	// The workflow's own signals, named like the guard's or not.
	FeatOwnSignal Feature = "ownsignal" // the workflow waits for a signal of its own
	FeatStartHalt Feature = "starthalt" // a halt sent with SignalWithStart
	// The recovery ladder.
	FeatHandler  Feature = "handler"  // the workflow's halt handler decides first (interceptor.SetHaltHandler)
	FeatGuidance Feature = "guidance" // resumes carry guidance, hostile ones included
	// Runtime budgets on the guard, and (with handler) halt handlers that
	// take longer than them (issue 22).
	FeatRuntime Feature = "runtime"
	// Liveness (issue 30): a stuck loop, with rounds of parallel calls,
	// ends the plan under any Warnings from 0 to 12; and pauses that
	// outlast the runtime budgets end every way a halt can end.
	FeatStuck     Feature = "stuck"     // a stuck loop at the end of the plan
	FeatLongPause Feature = "longpause" // late answers, pause timeouts, slow escalating handlers, cancellation
	// Worker set-up.
	FeatCodec  Feature = "codec"  // an encryption codec on worker, client and replayer
	FeatPolicy Feature = "policy" // OnHalt observe/fail and PauseTimeout profiles
	// Checks.
	FeatDrift Feature = "drift" // replay every history with each Options field drifted
)

// AllFeatures lists every feature, in a fixed order.
var AllFeatures = []Feature{
	FeatParallel, FeatLocal, FeatChild, FeatTimer, FeatSelect, FeatSelectChild, FeatCAN, FeatInflight,
	FeatEscalate, FeatUpdates, FeatHalt, FeatBad, FeatCancel, FeatTerminate, FeatNonFinite, FeatOwnSignal, FeatStartHalt,
	FeatHandler, FeatGuidance, FeatRuntime, FeatStuck, FeatLongPause,
	FeatCodec, FeatPolicy,
	FeatDrift,
}

// Features is a set of features.
type Features map[Feature]bool

// Has reports whether f is on.
func (fs Features) Has(f Feature) bool { return fs[f] }

// String lists the features on, in AllFeatures order, comma-separated.
func (fs Features) String() string {
	var on []string
	for _, f := range AllFeatures {
		if fs[f] {
			on = append(on, string(f))
		}
	}
	if len(on) == 0 {
		return "base"
	}
	return strings.Join(on, ",")
}

// ParseFeatures reads a comma-separated feature list. "all" is every
// feature, "base" (or "") none; a leading "-" takes a feature off ("all,-codec").
func ParseFeatures(s string) (Features, error) {
	fs := Features{}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		off := strings.HasPrefix(w, "-")
		w = strings.TrimPrefix(w, "-")
		switch {
		case w == "" || w == "base":
		case w == "all":
			for _, f := range AllFeatures {
				fs[f] = !off
			}
		case slices.Contains(AllFeatures, Feature(w)):
			fs[Feature(w)] = !off
		default:
			return nil, fmt.Errorf("schedule: unknown feature %q (known: all, base, %s)", w, Features(allOn()).String())
		}
	}
	for f, on := range fs {
		if !on {
			delete(fs, f)
		}
	}
	return fs, nil
}

func allOn() map[Feature]bool {
	m := map[Feature]bool{}
	for _, f := range AllFeatures {
		m[f] = true
	}
	return m
}
