package detect

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// readingDigest hashes every Observation generation g's Extract gives for
// the inputs TestCanonMatchesReference reads, and every error hash, into
// one number: a change to how recorded generations read results or
// errors changes it. Recorded histories replay against these values.
func readingDigest(t *testing.T, g Generation) uint64 {
	var inputs [][]byte
	var errs []string
	for _, tr := range loadCorpus(t) {
		for _, c := range tr.Calls {
			inputs = append(inputs, c.Output)
			if s, err := json.Marshal(string(c.Output)); err == nil {
				inputs = append(inputs, s)
			}
			errs = append(errs, c.Error)
		}
	}
	for _, size := range []int{600, 4 << 10, 64 << 10} {
		for k := range 3 {
			inputs = append(inputs, realisticResult(size, k))
		}
	}
	for _, s := range tokenSamples {
		b, _ := json.Marshal(s)
		inputs = append(inputs, b, []byte(`{"k":`+string(b)+`,"n":[`+string(b)+`]}`))
		errs = append(errs, s)
	}
	for _, s := range escapeSamples {
		inputs = append(inputs, []byte(`"`+s+`"`), []byte(`{"k":"`+s+`","a":["`+s+`"]}`))
	}
	p := DefaultPolicy()
	p.Detection = g
	h := fnvOffset
	u := func(x uint64) { h = fnvBytes(h, binary.LittleEndian.AppendUint64(nil, x)) }
	for _, in := range inputs {
		o := Extract(p, "n", in)
		u(o.Output)
		u(o.Shape)
		u(uint64(o.Count))
		u(o.Action)
		u(o.Sim)
		for _, f := range o.Fields {
			u(uint64(f.Path))
			u(f.Sum)
			u(math.Float64bits(f.Num))
		}
	}
	for _, e := range errs {
		o := ExtractError(p, "ToolError", e)
		u(o.ErrorHash)
		h = fnvString(h, o.ErrorSig)
	}
	return h
}

// TestRecordedReadingsFrozen: generations 2 and 3 read results and errors
// as they did when their histories were recorded (digests taken before
// generation 4 was written).
func TestRecordedReadingsFrozen(t *testing.T) {
	want := map[Generation]uint64{
		DetectionLegacy: 0x6fac4354bc448b84,
		DetectionV2:     0x81a9ea043c4d057c,
		DetectionV3:     0xdbfe36206af6cd87,
	}
	for _, g := range []Generation{DetectionLegacy, DetectionV2, DetectionV3} {
		assert.Equal(t, want[g], readingDigest(t, g), "generation %d", g)
	}
}
