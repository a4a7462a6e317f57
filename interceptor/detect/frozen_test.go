package detect

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// readingDigest hashes every Observation Extract gives for the corpus's
// outputs (as they are and as embedded JSON), realistic results and the
// samples below, and every error hash, into one number: a change to how
// results or errors are read changes it. Recorded histories replay
// against these values.
func readingDigest(t *testing.T) uint64 {
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
	h := fnvOffset
	u := func(x uint64) { h = fnvBytes(h, binary.LittleEndian.AppendUint64(nil, x)) }
	for _, in := range inputs {
		o := Extract(p, "n", in)
		u(o.Output)
		u(o.Shape)
		u(uint64(o.Count))
		u(o.Action)
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

// TestRecordedReadingsFrozen: results and errors are read as they were
// when the guarded histories were recorded (the digest was taken at
// d8b0f0c, with the rules then called generation 5, before the other
// rule sets were removed).
func TestRecordedReadingsFrozen(t *testing.T) {
	assert.Equal(t, uint64(0xbb90f3ec8377b550), readingDigest(t))
}

// tokenSamples are texts that exercise every masking rule and its edges.
var tokenSamples = []string{
	"", " ", "a", "ab", "abcdefgh", "abcdefghi", "abcdefghijklmnopq", "A-B", "a-", "-a", "a--b", "a.b.c", "a:b", "x_",
	"2026-11-23", "2026-11-23T12:48:26.5Z", "12:48:26", "12:48:26.5", "287:295", "12:48", "1:2:3",
	"deadbeef", "deadbee", "DEADBEEF1", "9f8e7d6c5b", "chatcmpl-9f8e7d6c5b", "id_0123456789abcdef", "x.deadbeef12.y",
	"550e8400-e29b-41d4-a716-446655440000", "call_00001eef-0001-4001-a001-0000000199a1",
	"2.31s", "150ms", "3us", "4ns", "5m", "6h", "7sec", "8secs", "9min", "10mins", "11msx", "12 s", "1.5", "1.5.6",
	"123456", "1234567", "12345678901234567890", "v1.2.3", "attempt3", "3attempts", "a1b2c3", "x-1", "x-12345678",
	"(line 42)", "foo(1,2)", "[3/4]", "tests/test_mod_001.py::test_case_1", "a\u00e9b", "\u00e9t\u00e9 2026", "\xff\xfe", "12:34:56Z",
	"a\tb\nc\rd\ve\ff", "  lead", "trail  ", "x.", "x.1", ".5", "-5", "5-", "0x1f", "#1", "1e9", "AbC123dEf4567", "___", "::",
}

// escapeSamples are JSON string contents as written, escapes undecoded.
var escapeSamples = []string{
	`a\u0020b`, `a\u0009b\u000Bc\u000cd`, `a\bb\fc`, `a\/b`, `a\\b`, `a\\nb`, `a\"b\"`, `a\ b`, "a\\\tb",
	`\ud83d\ude00 x`, `x\ud83d y`, `x\ud83d\u0020y`, `\ude00\ud83d`, `\ud83dz\ude00`, `caf\u00e9 2026-11-23`,
	`\u007b"a":1}`, `\n\t {"a": 1}`, `\u0020[1, 2]`, ` \n `, `\n`, `{"a":"b\\"}`, `\"{\"a\": 1}\"`,
	`x\u00311234567 y`, `id\u005f0123456789abcdef`, `2026\u002d11-23T12:48:26Z`, `2.31\u0073`, `a\u0000b`,
	`tests/test_mod_001.py::test_case_1 FAILED\n\tline 42\r\n`, strings.Repeat(`word\u003e `, 40),
	`\{\"a\": 1}`, `\[1, 2]`, ` \n\{\"a\": [1]}`, `\u005b1, 2]`, `\u003chtml\u003e 2026`, `\u007b\"k\": \"v\"}`,
}
