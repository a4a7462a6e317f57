package interceptor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// TestPauseTransitions walks the pause state machine through its
// transitions and checks what status and the input checks read from it.
func TestPauseTransitions(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		name        string
		do          func(p *pause)
		wantPhase   phase
		wantHalted  bool   // status shows halted
		wantDecide  string // checkDecision's refusal, "" when a decision can be taken
		wantResolve int
	}
	halt := func(seq int, policy protocol.OnHalt) func(p *pause) {
		return func(p *pause) { p.set(phaseHalting, &protocol.HaltEvent{Seq: seq}, policy, at, nil) }
	}
	to := func(ph phase, d *protocol.Decision) func(p *pause) {
		return func(p *pause) { p.set(ph, nil, "", time.Time{}, d) }
	}
	decide := func(a protocol.Action) func(p *pause) {
		return func(p *pause) { p.decide(protocol.Decision{Action: a}, detect.Extension{}) }
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "pause, decided while raising, resumed", steps: []step{
			{"start", func(*pause) {}, phaseRunning, false, "nothing is halted", 0},
			{"trip", halt(1, protocol.OnHaltPause), phaseHalting, true, "", 0},
			{"decide", decide(protocol.ActionResume), phaseHalting, true, "already answered", 0},
			{"paused", to(phasePaused, nil), phasePaused, true, "already answered", 0},
			{"resumed", to(phaseRunning, &protocol.Decision{Action: protocol.ActionResume, HaltSeq: 1}), phaseRunning, false, "nothing is halted", 1},
		}},
		{name: "observe never shows halted nor takes decisions", steps: []step{
			{"trip", halt(1, protocol.OnHaltObserve), phaseHalting, false, "nothing is halted", 0},
			{"observed", to(phaseRunning, nil), phaseRunning, false, "nothing is halted", 1},
		}},
		{name: "fail takes no decision", steps: []step{
			{"trip", halt(1, protocol.OnHaltFail), phaseHalting, true, "being raised", 0},
			{"failed", to(phaseEscalated, &protocol.Decision{Action: protocol.ActionEscalate, HaltSeq: 1}), phaseEscalated, false, "already escalated", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pause{}
			for _, s := range tt.steps {
				s.do(p)
				assert.Equal(t, s.wantPhase, p.phase, s.name)
				assert.Equal(t, s.wantHalted, p.showsHalted(), s.name)
				assert.Equal(t, s.wantResolve, p.resolved, s.name)
				err := p.checkDecision("resume")
				if s.wantDecide == "" {
					assert.NoError(t, err, s.name)
				} else if assert.Error(t, err, s.name) {
					assert.Contains(t, err.Error(), s.wantDecide, s.name)
				}
				if !p.inForce() {
					assert.Nil(t, p.decision, "%s: no decision outside a halt", s.name)
				}
			}
		})
	}
}

// TestWarningRung walks the warning rung: warnings per loop are counted,
// the last is in force for its window, heeding or a halt of its loop
// answers a loop's warnings, and a halt of another loop leaves them. From
// guard version 12 the window counts steps (a fan-out's calls are one) and
// a loop's count is not cut at the 8 warnings kept for evidence, and a
// window ends only once the loop brought something new; want11
// gives what version 11 did where it differs.
func TestWarningRung(t *testing.T) {
	news := func([]string) bool { return true }
	nothingNew := func([]string) bool { return false }
	a := protocol.Warning{Node: "Code", Nodes: []string{"Code", "Verify"}, CycleID: "cyc-a"}
	b := protocol.Warning{Node: "Poll", Nodes: []string{"Poll"}}
	type want struct {
		force  string // key of the warning in force, "" for none
		a, b   int    // warnings of loops a and b not answered
		issued int
	}
	tests := []struct {
		name string
		give func(p *pause)
		want want
	}{
		{"one warning", func(p *pause) { p.warn(a, 2) }, want{"cyc-a", 1, 0, 1}},
		{"heeded after its window", func(p *pause) {
			p.warn(a, 2)
			p.heed("Verify", 1, news)
			p.heed("Poll", 2, news) // not its loop: no count
			p.heed("Code", 3, news)
		}, want{"", 0, 0, 1}},
		{"a fan-out is one step of the window", func(p *pause) {
			p.warn(a, 2)
			for range 8 {
				p.heed("Code", 4, news) // eight parallel calls of one step
			}
		}, want{"cyc-a", 1, 0, 1}},
		{"a window with nothing new keeps it in force", func(p *pause) {
			p.warn(a, 2)
			p.heed("Verify", 1, nothingNew)
			p.heed("Code", 2, nothingNew)
			p.heed("Code", 3, nothingNew)
		}, want{"cyc-a", 1, 0, 1}},
		{"a halt of its loop answers it", func(p *pause) {
			p.warn(a, 5)
			ev := &protocol.HaltEvent{CycleID: "cyc-a", Node: "Verify"}
			p.set(phaseHalting, ev, protocol.OnHaltPause, time.Time{}, nil)
			if len(ev.Warnings) != 1 {
				t.Errorf("the halt lists %d warnings, want 1", len(ev.Warnings))
			}
		}, want{"", 0, 0, 1}},
		{"a halt of another loop leaves them", func(p *pause) {
			p.warn(a, 5)
			p.warn(b, 5)
			ev := &protocol.HaltEvent{Node: "Other"}
			p.set(phaseHalting, ev, protocol.OnHaltPause, time.Time{}, nil)
		}, want{"node:Poll", 1, 1, 2}},
		{"the in-force loop halts, the older warning stays but is not in force", func(p *pause) {
			p.warn(a, 5)
			p.warn(b, 5)
			p.set(phaseHalting, &protocol.HaltEvent{Node: "Poll"}, protocol.OnHaltPause, time.Time{}, nil)
		}, want{"", 1, 0, 2}},
		{"a ninth warning is counted", func(p *pause) {
			for range 9 {
				p.warn(a, 5)
			}
		}, want{"cyc-a", 9, 0, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPause()
			tt.give(&p)
			w := tt.want
			force := ""
			if in := p.warning(); in != nil {
				force = keyOf(*in)
			}
			assert.Equal(t, w.force, force)
			assert.Equal(t, w.a, p.warnings("cyc-a"))
			assert.Equal(t, w.b, p.warnings("node:Poll"))
			assert.Equal(t, w.issued, p.Warnings)
		})
	}
}
