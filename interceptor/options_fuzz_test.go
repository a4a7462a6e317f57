package interceptor

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// FuzzOptions: whatever Options hold, New either refuses them with an
// *OptionError naming a field, or accepts them; then the config an
// execution pins encodes, and decodes to itself, and a stuck loop under
// them is halted within the liveness bound (HaltBound) or is one the docs
// say the guard leaves alone. The same holds for the options' policy file.
//
// The fuzzer's bytes are a list of edits: a field of Options (or of one
// node's NodeOptions) and a value for it, from a table of hard values
// (NaN, ±Inf, negative, 0, the caps and one past them, huge, names with
// spaces or not UTF-8, names that clash) or raw bytes. The fields are
// found by reflection, so a field added to Options is fuzzed without a
// change here. The seed corpus sets every field to every table value, and
// runs in plain go test.
func FuzzOptions(f *testing.F) {
	for ti, tg := range optionTargets {
		for vi := range tg.tableLen() {
			if tg.node {
				for ki := range fuzzNodeKeys {
					f.Add(uint8(ti+vi), []byte{byte(ti), byte(ki), byte(vi)})
				}
				continue
			}
			f.Add(uint8(ti+vi), []byte{byte(ti), byte(vi)})
		}
	}
	// Extremes at once: the longest window with the thresholds at it,
	// warnings, budgets out of reach.
	f.Add(uint8(1), editsOf(map[string]int{
		"Window": 11, "RepeatThreshold": 11, "ErrorRepeatThreshold": 11, "StallIterations": 11,
		"Warnings": 6, "MaxCallsPerNode": 15, "MaxTotalCalls": 15, "MaxCycleIterations": 15, "MaxEdgeWithoutProgress": 10,
	}))
	f.Add(uint8(0), editsOf(map[string]int{"Grain": 17, "Warnings": 5, "Window": 10, "MaxCallsPerNode": 13, "MaxTotalCalls": 13}))
	f.Fuzz(func(t *testing.T, shape uint8, data []byte) {
		o := optionsFrom(t, data)
		checkOptions(t, o, int(shape))
		if p, err := PolicyJSON(o); err == nil {
			checkPolicy(t, o, p, int(shape))
		}
	})
}

// FuzzPolicyFile: a policy file, whatever its bytes, is refused by
// ParsePolicy with a *PolicyError, or its options pass FuzzOptions'
// property: New accepts them, their pinned config encodes and decodes to
// itself, and a stuck loop under them is halted within the bound.
func FuzzPolicyFile(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"maxCost": 1e308, "maxCycleCost": 5e-324}`, `{"maxCost": 1e999}`, `{"maxCost": -0}`,
		`{"window": 256, "repeatThreshold": 96, "errorRepeatThreshold": 95, "stallIterations": 256, "oscillationPeriods": 48, "maxOscillationPeriod": 5}`,
		`{"window": 257}`, `{"repeatThreshold": 1}`, `{"warnings": 9223372036854775807, "maxCallsPerNode": 9223372036854775807}`,
		`{"warnings": 12, "maxCallsPerNode": 100000, "maxTotalCalls": 100000, "maxCycleIterations": 100000, "maxEdgeWithoutProgress": 100000}`,
		`{"maxNodeRuntime": "2562047h47m16.854775807s", "pauseTimeout": "1ns", "haltSignalTimeout": "1s"}`,
		`{"nodes": {" Code": {}}}`, `{"nodes": {"Code": {"exempt": true}}, "maxTotalCalls": 7}`,
		`{"nodes": {"Code": {"maxCalls": 2, "metricField": "failing", "costField": "cost", "progressFields": ["diff"]}}, "maxCost": 2}`,
		`{"graph": [{"from": "Code", "to": "Code"}, {"from": "Code", "to": "Code"}]}`, `{"statusQuery": "__s"}`,
		`{"grain": "tool_call", "warnings": 3}`, `{"workflows": ["Other"]}`, `{"retire": true}`,
	} {
		f.Add(uint8(0), []byte(seed))
		f.Add(uint8(1), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, shape uint8, data []byte) {
		o, err := ParsePolicy(data)
		if err != nil {
			var pe *PolicyError
			require.True(t, errors.As(err, &pe), "ParsePolicy: want a *PolicyError, got %T: %v", err, err)
			return
		}
		_, err = New(o)
		require.NoError(t, err, "ParsePolicy accepted what New refuses: %s", data)
		checkOptions(t, o, int(shape))
	})
}

// checkOptions is FuzzOptions' property for one Options value.
func checkOptions(t *testing.T, o Options, shape int) {
	t.Helper()
	g, err := New(o)
	if err != nil {
		require.Nil(t, g)
		var oe *OptionError
		require.True(t, errors.As(err, &oe), "New: want an *OptionError, got %T: %v", err, err)
		requireNamesAField(t, oe.Field)
		_, jerr := newJudge(o)
		require.Equal(t, err, jerr, "the Judge refuses what New refuses")
		return
	}
	c, _, err := buildConfig(o)
	require.NoError(t, err)
	requirePinnable(t, c)
	requireHalted(t, o, c, shape)
}

// checkPolicy: the policy file of options New judged is read back to the
// same verdict: refused with the JSON path of New's field, or accepted as
// the same Options.
func checkPolicy(t *testing.T, o Options, data []byte, shape int) {
	t.Helper()
	parsed, err := ParsePolicy(data)
	_, newErr := New(o)
	if err != nil {
		var pe *PolicyError
		require.True(t, errors.As(err, &pe), "ParsePolicy: want a *PolicyError, got %T: %v", err, err)
		// The file's options (what JSON could say of o) are refused by
		// New for the field the error names, by its JSON path. A file
		// refused as it is read (a node named "") holds options New
		// refuses too, perhaps for another field first.
		var said Options
		if said.ApplyPolicy(data) != nil {
			require.Error(t, newErr, "ParsePolicy refuses options New accepts: %s", data)
			return
		}
		_, saidErr := New(said)
		var oe *OptionError
		require.True(t, errors.As(saidErr, &oe), "ParsePolicy refuses options New accepts: %s", data)
		require.Equal(t, oe.JSONPath(), pe.Field, "the policy file's error names New's field: %s", data)
		require.Error(t, newErr, "ParsePolicy refuses what New accepts: %s", data)
		return
	}
	if newErr != nil {
		// Only when the file says something else than the Options: JSON
		// has no bytes that are not UTF-8.
		require.NotEqual(t, emptyToNil(o), emptyToNil(parsed), "ParsePolicy accepted what New refuses: %s", data)
	} else {
		require.Equal(t, emptyToNil(o), emptyToNil(parsed), "the policy file says other options: %s", data)
	}
	if _, err := New(parsed); err != nil {
		t.Fatalf("ParsePolicy accepted %s but New refuses it: %v", data, err)
	}
	checkOptions(t, parsed, shape)
}

// requireNamesAField: an OptionError's Field is a path of Options fields,
// "Nodes[name].MaxCalls" or "IgnoreFields[2]" included.
func requireNamesAField(t *testing.T, field string) {
	t.Helper()
	typ := reflect.TypeFor[Options]()
	for part := range strings.SplitSeq(field, ".") {
		name, _, _ := strings.Cut(part, "[")
		f, ok := typ.FieldByName(name)
		require.True(t, ok, "OptionError.Field %q: %q is no field of %s", field, name, typ.Name())
		typ = f.Type
		for typ.Kind() == reflect.Map || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
	}
}

// requirePinnable: the config encodes as setup pins it (a SideEffect
// through the data converter) and as continue-as-new carries it, and
// decodes to the same config, so that an execution runs with what the
// worker was given and replays with what it ran with.
func requirePinnable(t *testing.T, c config) {
	t.Helper()
	pin := c
	dc := converter.GetDefaultDataConverter()
	p, err := dc.ToPayload(pin)
	require.NoError(t, err, "the pinned config does not encode")
	var back config
	require.NoError(t, dc.FromPayload(p, &back))
	require.Equal(t, emptyToNil(pin), emptyToNil(back), "the pinned config decodes to another config")
	st, err := json.Marshal(detect.NewState(c.Policy))
	require.NoError(t, err, "the detector state does not encode")
	_, err = dc.ToPayload(carried{Config: pin, State: st})
	require.NoError(t, err, "the carried state does not encode")
}

// fuzzLoops are the stuck loops FuzzOptions drives: one node called again
// and again, and a two-node turn, each with the same result every time.
var fuzzLoops = [][]string{{"Code"}, {"Code", "Verify"}}

// fuzzResult is every call's result: it has what the fuzzed field paths
// read (progress, metric, cost), all of it unchanging.
const fuzzResult = `{"at":1,"diff":"same","failing":3,"cost":1.5,"report":{"failing":3},"x":"y"}`

// maxFuzzCalls bounds one loop's run: past it, the test checks that the
// verdicts come at the bound's pace instead of waiting for the halt.
const maxFuzzCalls = 5000

// requireHalted drives a stuck loop through a Judge under o and requires
// a halt within the liveness bound: the onset within detect.RetripRounds
// rounds and one more of the start, then each warning's retrip as soon,
// and no more warnings than Options.Warnings (HaltBound). A loop the guard
// does not judge (out of scope) must say nothing; a loop of Exempt nodes
// only MaxTotalCalls halts, which counts them too.
func requireHalted(t *testing.T, o Options, c config, shape int) {
	t.Helper()
	loop := fuzzLoops[shape%len(fuzzLoops)]
	j, err := newJudge(o)
	require.NoError(t, err)
	now := time.Unix(1_000_000, 0)
	info := &workflow.Info{WorkflowType: workflow.Type{Name: "Agent"}, WorkflowExecution: workflow.Execution{ID: "w", RunID: "r"}}
	if !j.Start(info, now) {
		inScope := !o.Retire && (len(o.Workflows) == 0 || slices.Contains(o.Workflows, "Agent"))
		require.False(t, inScope, "a guarded execution left unjudged")
		return
	}
	exempt := true
	for _, n := range loop {
		exempt = exempt && c.Policy.Nodes[n].Exempt
	}
	var result map[string]any
	require.NoError(t, json.Unmarshal([]byte(fuzzResult), &result))
	payloads, err := converter.GetDefaultDataConverter().ToPayloads(result)
	require.NoError(t, err)

	perRound := len(loop)
	// Calls from a start or a warning to the next trip, and from the start
	// to the halt.
	retrip := satMul(satAdd(detect.RetripRounds(c.Policy), 1), perRound)
	bound := satAdd(retrip, haltBound(c, perRound))
	if exempt {
		bound = satAdd(c.Policy.MaxTotalCalls, 1)
	}
	last, warnings := 0, 0
	for call := 1; call <= min(bound, maxFuzzCalls)+perRound; call++ {
		now = now.Add(time.Second)
		j.Now(now)
		id := j.Call(KindActivity, loop[(call-1)%perRound], nil)
		require.GreaterOrEqual(t, id, 0, "call %d refused", call)
		for _, v := range j.Verdicts() {
			if exempt {
				require.True(t, v.Halt != nil && v.Halt.Detector == detect.DetectorTotalCalls, "an Exempt loop got a verdict: %+v", v)
			} else {
				require.LessOrEqual(t, v.Call-last, retrip, "verdict at call %d, %d calls after the last (a retrip takes at most %d)", v.Call, v.Call-last, retrip)
			}
			last = v.Call
			if v.Halt != nil {
				require.LessOrEqual(t, v.Call, bound, "halted at call %d, past the bound", v.Call)
				return
			}
			warnings++
			require.LessOrEqual(t, warnings, c.Warnings, "warning %d at call %d: more than Warnings, and no halt", warnings, v.Call)
		}
		j.Result(id, payloads, nil, nil)
	}
	require.Greater(t, bound, maxFuzzCalls, "no halt within the bound of %d calls", bound)
}

// optionTarget is a field FuzzOptions edits: a field of Options, or of
// the NodeOptions of a node named by the edit.
type optionTarget struct {
	name  string
	index []int
	typ   reflect.Type
	node  bool
}

var optionTargets = func() []optionTarget {
	var ts []optionTarget
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Options]()) {
		switch {
		case f.Type.Kind() == reflect.Func:
		case f.Name == "Nodes":
			for _, nf := range reflect.VisibleFields(f.Type.Elem()) {
				ts = append(ts, optionTarget{name: "Nodes[]." + nf.Name, index: nf.Index, typ: nf.Type, node: true})
			}
		default:
			ts = append(ts, optionTarget{name: f.Name, index: f.Index, typ: f.Type})
		}
	}
	return ts
}()

// The hard values, by kind. An edit's value byte past a table's end reads
// a raw value from the bytes that follow.
var (
	fuzzInts   = []int64{0, -1, 1, 2, 3, 5, 8, 9, 16, 255, detect.MaxWindow, detect.MaxWindow + 1, 1000, 1 << 20, 1 << 40, math.MaxInt64, math.MinInt64, 300}
	fuzzFloats = []float64{0, math.NaN(), math.Inf(1), math.Inf(-1), -1, math.Copysign(0, -1),
		math.SmallestNonzeroFloat64, 1e-300, 0.5, 1, 3, 1e9, 1e308, math.MaxFloat64}
	fuzzDurations = []time.Duration{0, -1, 1, time.Millisecond, 999 * time.Millisecond, time.Second, 2 * time.Second,
		time.Minute, time.Hour, 24 * time.Hour, 1 << 62, math.MaxInt64, math.MinInt64}
	fuzzStrings = []string{"", " ", "x", " x", "x ", "__x", "a\xffb", "a..b", ".a", "a.", "at", "diff", "failing", "cost",
		"report.failing", "Code", "Verify", "Agent", "tool_call", "pause", "fail", "observe", "escalate", "resume",
		protocol.DefaultResumeSignal, protocol.DefaultEscalateSignal, protocol.DefaultHaltSignal, protocol.DefaultHaltedSignal, protocol.DefaultStatusQuery,
		protocol.DefaultResumeUpdate, protocol.DefaultEscalateUpdate, "loopguard", strings.Repeat("n", 300)}
	fuzzNodeKeys = []string{"Code", "Verify", " Code", "Code ", "", "Other", "a\xffb", "__x"}
)

func (tg optionTarget) tableLen() int {
	switch {
	case tg.typ == reflect.TypeFor[time.Duration]():
		return len(fuzzDurations)
	case tg.typ.Kind() == reflect.Float64:
		return len(fuzzFloats)
	case tg.typ.Kind() == reflect.Bool:
		return 2
	case tg.typ.Kind() == reflect.Slice && tg.typ.Elem().Kind() == reflect.Struct:
		return len(fuzzNodeKeys) // an edge's From; its To is the next byte
	case tg.typ.Kind() == reflect.String, tg.typ.Kind() == reflect.Slice:
		return len(fuzzStrings)
	}
	return len(fuzzInts)
}

// editsOf builds fuzzer bytes that set the named fields to table values.
func editsOf(values map[string]int) []byte {
	var b []byte
	for ti, tg := range optionTargets {
		if v, ok := values[tg.name]; ok {
			b = append(b, byte(ti), byte(v))
		}
	}
	return b
}

// fuzzBytes reads the fuzzer's bytes; past their end it reads zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return c
}

func (b *fuzzBytes) u64() uint64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = b.next()
	}
	return binary.LittleEndian.Uint64(buf[:])
}

func (b *fuzzBytes) str() string {
	n := int(b.next() % 40)
	s := make([]byte, n)
	for i := range s {
		s[i] = b.next()
	}
	return string(s)
}

// optionsFrom applies the edits data holds to zero Options.
func optionsFrom(t *testing.T, data []byte) Options {
	var o Options
	b := fuzzBytes(data)
	for len(b) > 0 {
		tg := optionTargets[int(b.next())%len(optionTargets)]
		if !tg.node {
			setFuzzed(t, reflect.ValueOf(&o).Elem().FieldByIndex(tg.index), &b)
			continue
		}
		key := fuzzNodeKeys[int(b.next())%len(fuzzNodeKeys)]
		if o.Nodes == nil {
			o.Nodes = map[string]NodeOptions{}
		}
		n := o.Nodes[key]
		setFuzzed(t, reflect.ValueOf(&n).Elem().FieldByIndex(tg.index), &b)
		o.Nodes[key] = n
	}
	return o
}

// setFuzzed sets (or, for a list, appends to) v from the edit's bytes.
func setFuzzed(t *testing.T, v reflect.Value, b *fuzzBytes) {
	i := int(b.next())
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(tablePick(fuzzDurations, i, func() time.Duration { return time.Duration(b.u64()) })))
	case v.Kind() == reflect.Int:
		v.SetInt(tablePick(fuzzInts, i, func() int64 { return int64(b.u64()) }))
	case v.Kind() == reflect.Float64:
		v.SetFloat(tablePick(fuzzFloats, i, func() float64 { return math.Float64frombits(b.u64()) }))
	case v.Kind() == reflect.Bool:
		v.SetBool(i%2 == 1)
	case v.Kind() == reflect.String:
		v.SetString(tablePick(fuzzStrings, i, b.str))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		v.Set(reflect.Append(v, reflect.ValueOf(tablePick(fuzzStrings, i, b.str)).Convert(v.Type().Elem())))
	case v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[Edge]():
		e := Edge{From: fuzzNodeKeys[i%len(fuzzNodeKeys)], To: fuzzNodeKeys[int(b.next())%len(fuzzNodeKeys)]}
		v.Set(reflect.Append(v, reflect.ValueOf(e)))
	case v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[OperatorKey]():
		// A key of the right size or not, under a fuzzed id: New must
		// refuse the bad ones by name.
		key := make([]byte, []int{32, 32, 31, 0, 64}[i%5])
		for j := range key {
			key[j] = b.next()
		}
		k := OperatorKey{ID: tablePick(fuzzStrings, int(b.next()), b.str), PublicKey: key}
		v.Set(reflect.Append(v, reflect.ValueOf(k)))
	default:
		t.Fatalf("FuzzOptions cannot set a %s: teach setFuzzed", v.Type())
	}
}

func tablePick[T any](table []T, i int, raw func() T) T {
	if i < len(table) {
		return table[i]
	}
	return raw()
}

// emptyToNil returns a copy of v with every empty map and slice nil: JSON
// leaves them out, and they decode as nil.
func emptyToNil[T any](v T) T {
	c := reflect.New(reflect.TypeOf(v)).Elem()
	c.Set(reflect.ValueOf(v))
	nilEmpty(c)
	return c.Interface().(T)
}

func nilEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				nilEmpty(v.Field(i))
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for k, e := range v.Seq2() {
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			nilEmpty(c)
			m.SetMapIndex(k, c)
		}
		v.Set(m)
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
		}
	}
}
