package detect

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// t0 is the workflow clock's start in tests.
var t0 = time.Date(2025, 10, 18, 9, 0, 0, 0, time.UTC)

// h hashes a test output.
func h(s string) uint64 { return nonZero(fnvString(fnvOffset, s)) }

// step parses the test step DSL:
//
//	"node"            a call with a fresh, distinct output
//	"node=out"        output "out"
//	"node!err"        failure with error signature "err"
//	";m=3"            declared metric 3
//	";p=x"            declared progress value "x"
//	";c=0.5"          cost 0.5
//	";dt=10"          the call takes 10 s of workflow time (default 1 s)
//	";silent"         an empty result (Output 0)
type step struct {
	node string
	obs  Observation
	dt   time.Duration
}

var fresh int

func parseStep(s string) step {
	parts := strings.Split(s, ";")
	st := step{dt: time.Second}
	head := parts[0]
	switch {
	case strings.Contains(head, "!"):
		k := strings.Index(head, "!")
		st.node = head[:k]
		st.obs = Observation{Failed: true, ErrorSig: head[k+1:]}
	case strings.Contains(head, "="):
		k := strings.Index(head, "=")
		st.node = head[:k]
		st.obs = Observation{Output: h(head[k+1:])}
	default:
		fresh++
		st.node = head
		st.obs = Observation{Output: h(fmt.Sprintf("fresh-%d", fresh))}
	}
	for _, opt := range parts[1:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "m":
			f, _ := strconv.ParseFloat(v, 64)
			st.obs.HasMetric, st.obs.Metric = true, f
		case "p":
			st.obs.HasProgress, st.obs.Progress, st.obs.ProgressRaw = true, h(v), v
		case "c":
			f, _ := strconv.ParseFloat(v, 64)
			st.obs.Cost = f
		case "silent":
			st.obs.Output = 0
		case "dt":
			f, _ := strconv.ParseFloat(v, 64)
			st.dt = time.Duration(f * float64(time.Second))
		default:
			panic("bad step option " + opt)
		}
	}
	return st
}

// driver feeds steps sequentially to a State on a fake workflow clock.
type driver struct {
	s   *State
	now time.Time
}

func newDriver(p Policy) *driver {
	return &driver{s: NewState(p), now: t0}
}

// do runs one sequential call; it returns the trip that refused it, if any.
func (d *driver) do(spec string) *Trip {
	st := parseStep(spec)
	ref, t := d.s.Begin(st.node, d.now)
	if t != nil {
		return t
	}
	d.now = d.now.Add(st.dt)
	d.s.End(ref, st.obs, d.now)
	return nil
}

// par runs concurrent calls of one node: all Begun, then all Ended. It
// returns the trip that refused one of them, if any.
func (d *driver) par(specs ...string) *Trip {
	steps := make([]step, len(specs))
	refs := make([]StepRef, len(specs))
	for k, sp := range specs {
		steps[k] = parseStep(sp)
		ref, t := d.s.Begin(steps[k].node, d.now)
		if t != nil {
			return t
		}
		refs[k] = ref
	}
	for k := range specs {
		d.s.End(refs[k], steps[k].obs, d.now.Add(steps[k].dt))
	}
	d.now = d.now.Add(steps[len(steps)-1].dt)
	return nil
}

// run runs steps until one is refused. It returns the index of the refused
// call (len(steps) if a trip is pending at the end) and the trip, or -1, nil.
func (d *driver) run(steps ...string) (int, *Trip) {
	for i, sp := range steps {
		if t := d.do(sp); t != nil {
			return i, t
		}
	}
	if t := d.s.Pending(); t != nil {
		return len(steps), t
	}
	return -1, nil
}

// run runs steps on a fresh state with policy p.
func run(p Policy, steps ...string) (int, *Trip) {
	return newDriver(p).run(steps...)
}

// rep repeats a sequence of steps n times.
func rep(n int, steps ...string) []string {
	var out []string
	for range n {
		out = append(out, steps...)
	}
	return out
}

// seq concatenates step lists.
func seq(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func list(steps ...string) []string { return steps }

// detectorOf is the trip's detector, "" for none.
func detectorOf(t *Trip) Detector {
	if t == nil {
		return ""
	}
	return t.Detector
}

// policyWith returns the default policy changed by f.
func policyWith(f func(p *Policy)) Policy {
	p := DefaultPolicy()
	f(&p)
	return p
}
