package history

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// TestHaltedKeepsWhatItIsGiven: a halt kept compact comes back as it was
// handed over, stripped of its evidence, message and warnings, whatever
// its numbers, time and names, including those too wide to pack (kept
// whole) and past the name table's size.
func TestHaltedKeepsWhatItIsGiven(t *testing.T) {
	at := time.Date(2026, 11, 29, 3, 0, 0, 7, time.UTC)
	halt := func(call, seq int, when time.Time, node string) interceptor.Verdict {
		return interceptor.Verdict{Call: call, Period: 2, OnHalt: protocol.OnHaltPause,
			Evidence: &detect.Evidence{}, Warning: nil,
			Halt: &protocol.HaltEvent{CycleID: "c-" + node, HaltReason: protocol.ReasonBudgetExceeded, Detector: detect.DetectorCycleIterations,
				Node: node, Iteration: 4, MaxIterations: 3, WorkflowTime: when, WorkflowID: "wf", RunID: "run", WorkflowType: "Agent",
				Seq: seq, Loop: node, Message: "the loop went round", Warnings: []protocol.Warning{{Node: node}}, SuggestedActions: []string{"resume"}}}
	}
	tests := []struct {
		name string
		give []interceptor.Verdict
	}{
		{"packed", []interceptor.Verdict{halt(11, 1, at, "Verify"), halt(17, 2, at.Add(time.Second), "Code")}},
		{"the zero time", []interceptor.Verdict{halt(3, 1, time.Time{}, "Think")}},
		{"the epoch (0 is the zero time packed)", []interceptor.Verdict{halt(3, 1, time.Unix(0, 0).UTC(), "Think")}},
		{"a time UnixNano cannot hold", []interceptor.Verdict{halt(3, 1, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), "Think")}},
		{"a call past int32", []interceptor.Verdict{halt(math.MaxInt32+1, 1, at, "Think"), halt(4, 2, at, "Think")}},
		{"a period past uint16", []interceptor.Verdict{withPeriod(halt(3, 1, at, "Think"), math.MaxUint16+1), halt(4, 2, at, "Think")}},
		{"a halt naming another run", []interceptor.Verdict{halt(3, 1, at, "Think"), otherRun(halt(4, 2, at, "Think")), halt(5, 3, at, "Think")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k haltKeeper
			for _, v := range tt.give {
				k.keep(v)
			}
			if k.Len() != len(tt.give) {
				t.Fatalf("%d halts kept, want %d", k.Len(), len(tt.give))
			}
			for i, v := range tt.give {
				want := stripped(v)
				if got := k.At(i); !reflect.DeepEqual(got, want) {
					t.Errorf("halt %d is %+v, want %+v", i, *got.Halt, *want.Halt)
				}
				if k.Seq(i) != v.Halt.Seq || k.Call(i) != v.Call {
					t.Errorf("halt %d: seq %d, call %d; want %d, %d", i, k.Seq(i), k.Call(i), v.Halt.Seq, v.Call)
				}
			}
		})
	}

	t.Run("more names than the table holds", func(t *testing.T) {
		var k haltKeeper
		n := math.MaxUint16 + 10
		for i := range n {
			k.keep(halt(i+1, i+1, at, fmt.Sprint("node-", i)))
		}
		for _, i := range []int{0, n / 2, n - 1} {
			if got, want := k.At(i), stripped(halt(i+1, i+1, at, fmt.Sprint("node-", i))); !reflect.DeepEqual(got, want) {
				t.Errorf("halt %d is %+v, want %+v", i, *got.Halt, *want.Halt)
			}
		}
	})

	t.Run("decisions handed with their halts", func(t *testing.T) {
		tests := []struct {
			name string
			give protocol.Decision
		}{
			{"packed", protocol.Decision{Action: protocol.ActionResume, By: "ops", HaltSeq: 1}},
			{"every field", protocol.Decision{Action: protocol.ActionEscalate, Reason: "looked", By: "ops", HaltSeq: 1, Guidance: "try the other tool", KeyID: "k1"}},
			{"a seq past int32 (kept whole)", protocol.Decision{Action: protocol.ActionResume, By: "ops", HaltSeq: math.MaxInt32 + 1}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var k haltKeeper
				v := halt(4, tt.give.HaltSeq, at, "Think")
				d := tt.give
				v.Decision = &d
				k.keep(v)
				k.keep(halt(5, 2, at, "Think"))
				if got := k.At(0).Decision; got == nil || *got != tt.give {
					t.Errorf("decision %+v, want %+v", got, tt.give)
				}
				if got := k.At(1).Decision; got != nil {
					t.Errorf("the other halt's decision %+v, want none", got)
				}
			})
		}
	})

	keptSize(t, "history.Halted", unsafe.Sizeof(keptHalt{}))
}

// keptSize checks that what keeps a kept thing compact (a halt, a
// pause) is at most 40 bytes, and that docs/watch.md says its size.
func keptSize(t *testing.T, what string, size uintptr) {
	t.Helper()
	if size > 40 {
		t.Errorf("a %s entry is %d bytes, want at most 40", what, size)
	}
	doc, err := os.ReadFile("../../docs/watch.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(`%s`, %d B:", what, size); !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/watch.md does not say %q", want)
	}
}

func withPeriod(v interceptor.Verdict, p int) interceptor.Verdict {
	v.Period = p
	return v
}

func otherRun(v interceptor.Verdict) interceptor.Verdict {
	ev := *v.Halt
	ev.RunID = "another"
	v.Halt = &ev
	return v
}

// stripped is v as Halted keeps it.
func stripped(v interceptor.Verdict) interceptor.Verdict {
	ev := *v.Halt
	ev.Evidence, ev.Warnings, ev.SuggestedActions, ev.Message = protocol.Evidence{}, nil, nil, ""
	ev.WorkflowTime = ev.WorkflowTime.UTC()
	v.Halt, v.Evidence, v.Warning = &ev, nil, nil
	return v
}
