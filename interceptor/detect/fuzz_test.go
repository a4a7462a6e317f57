package detect

import (
	"fmt"
	"testing"
	"time"
)

// maxFuzzSize bounds the state of any fuzzed trace: a handful of short node
// names, Window-sized histories, a bounded pending trip.
const maxFuzzSize = 64 << 10

// FuzzState drives a State with a trace decoded from the fuzz bytes: Begins
// of a few nodes (and many names, to overflow MaxNodes), Ends of random
// in-flight refs with small output alphabets, stops, resumes and snapshot
// round trips. It must never panic, and the state must stay bounded.
func FuzzState(f *testing.F) {
	f.Add([]byte{0, 8, 0, 9, 0, 8, 0, 9, 0, 8, 0, 9})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 0x41, 0x42, 0x43, 0x44, 5, 6, 7})
	f.Add([]byte("coder verify coder verify coder verify coder verify"))
	f.Add([]byte{2, 2, 2, 10, 10, 10, 2, 2, 2, 10, 10, 10, 0xff, 0xfe, 0x80})
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzState(t, data)
	})
}

func fuzzState(t *testing.T, data []byte) {
	p := DefaultPolicy()
	p.MaxNodes = 4
	p.MaxCost = 3
	p.MaxCycleCost = 2
	p.MaxCycleRuntime = time.Hour
	p.Nodes = map[string]NodePolicy{"n5": {Exempt: true}, "n1": {MaxCalls: 4, HigherIsBetter: true}}
	p.Graph = []Edge{{"n2", "n3"}, {"n3", "n2"}}
	s := NewState(p)
	now := t0
	var open []StepRef
	var last *Trip
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i]%8, data[i+1]
		now = now.Add(time.Duration(arg) * time.Second)
		switch op {
		case 0, 1, 2:
			name := fmt.Sprintf("n%d", arg%6)
			if op == 2 {
				name = fmt.Sprintf("tool-%d", arg)
			}
			ref, trip := s.Begin(name, now)
			if trip != nil {
				last = trip
			} else {
				open = append(open, ref)
			}
		case 3, 4:
			if len(open) == 0 {
				continue
			}
			k := int(arg) % len(open)
			obs := Observation{Output: uint64(arg % 3)}
			switch arg % 5 {
			case 0:
				obs = Observation{Failed: true, ErrorSig: "e"}
			case 1:
				obs.HasMetric, obs.Metric = true, float64(arg%4)
			case 2:
				obs.HasProgress, obs.Progress = true, uint64(arg%2)
			}
			obs.Cost = float64(arg%4) / 4
			withV2(&obs)
			if arg%7 == 0 {
				obs.Fields = obs.Fields[:arg%5]
			}
			s.End(open[k], obs, now)
			if op == 3 {
				open = append(open[:k], open[k+1:]...)
			} // op 4 leaves a duplicate End possible
		case 5:
			switch arg % 3 {
			case 0:
				s.Timer(now)
			case 1:
				s.Stop("stop", now, false)
			default:
				s.Input(now)
			}
		case 6:
			t := last
			if arg%2 == 0 {
				t = s.Pending()
			}
			s.Resume(t, Extension{MaxCycleIterations: int(arg % 3), MaxCallsPerNode: int(arg % 2), MaxCost: float64(arg % 2)})
		case 7:
			b, err := s.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if s, err = Restore(p, b); err != nil {
				t.Fatal(err)
			}
		}
		_ = s.View()
	}
	if size := s.Size(); size > maxFuzzSize {
		t.Fatalf("state grew to %d bytes", size)
	}
}

// FuzzExtract: Extract and ErrorSignature never panic, whatever the payload.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"a":{"b":[1,2,{"c":"x"}]},"ts":"now","cost":"0.5"}`))
	f.Add([]byte(`"  some   text \n"`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"a":`))
	f.Add([]byte("\"\\u00e9\\n\""))
	f.Add([]byte{0xff, 0xfe, '"'})
	p := DefaultPolicy()
	p.IgnoreFields = []string{"ts", "a.b.*.c", "0"}
	p.Nodes = map[string]NodePolicy{"n": {Rules: Rules{
		IgnoreFields:   []string{"a.b.1", "*"},
		ProgressFields: []string{"a.b", "a.b.2.c", "x.y.z"},
		MetricField:    "a.b",
		CostField:      "cost",
	}}}
	f.Add([]byte(`{"args":"{\"q\": [\"a\", \"b\"], \"n\": 1.5}","thought":"x","id":12345}`))
	f.Add([]byte(`"2026-11-23T12:48:26Z chatcmpl-9f8e7d6c5b 2.31s line 10 287:295 \ud83d\ude00"`))
	f.Add([]byte(`"msg_01XFDUDYJgAACzvnptvVoYEL retry 4: Time: 1.378 s (took 2.1 s) 1732400000"`))
	f.Add([]byte(`"{\"matches\":[],\"requestNo\":7}"`))
	f.Add([]byte(`"100  1256 --:--:-- 6573 5.1 MB/s\nStep 3 of 5: x\r\u0020req_011CUxQ2bT7LmN4pK8rV1sW3 tests/test_mod_096.py::test_case_1234"`))
	f.Add([]byte(`{"output":[{"type":"reasoning","summary":[]},{"type":"function_call","call_id":"call_KqTbWmZrPxYsLnVdHgFcJhQa","arguments":"{\"a\":[{\"thought\":1}]}"}],"usage":{"inputTokens":{"total":3}}}`))
	f.Add([]byte(`[{"type":"text","text":"x"},{"tool_calls":[ ],"content":"y","thought":true}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, pol := range []Policy{p, DefaultPolicy()} {
			for _, node := range []string{"n", "other"} {
				obs := Extract(pol, node, data)
				if len(obs.ProgressRaw) > maxRawLen {
					t.Fatalf("ProgressRaw of %d bytes", len(obs.ProgressRaw))
				}
				if len(obs.Fields) > maxFields {
					t.Fatalf("%d fields", len(obs.Fields))
				}
				if again := Extract(pol, node, data); again.Output != obs.Output || again.Action != obs.Action {
					t.Fatalf("Extract is not deterministic")
				}
			}
		}
		_ = ErrorHash(string(data), string(data))
		if a, b := ExtractError(p, "k", string(data)), ExtractError(p, "k", string(data)); a.ErrorHash != b.ErrorHash || a.ErrorHash == 0 {
			t.Fatalf("the error hash is not deterministic, or 0")
		}
		if sig := ErrorSignature(string(data), string(data)); len(sig) > maxSigLen {
			t.Fatalf("signature of %d bytes", len(sig))
		}
	})
}
