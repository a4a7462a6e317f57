package detect

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The canonical reading's values are recorded in workflow histories and
// replayed, so a faster canon.go must give bit-identical results. These
// tests compare it with the frozen reference (canon_ref_test.go).

// sameAsReference reports the first difference between readCanonical and
// the reference on body, or "".
func sameAsReference(body []byte) string {
	var got canonical
	var want refCanonical
	readCanonical(body, &got, DetectionV2)
	refReadCanonical(body, &want)
	w := canonical{
		sum: want.sum, shape: want.shape, nums: want.nums, action: want.action,
		sim: want.sim, fields: want.fields, nf: want.nf,
	}
	if got != w {
		return fmt.Sprintf("got %+v\nwant %+v", got, w)
	}
	return ""
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

func TestCanonMatchesReference(t *testing.T) {
	var inputs [][]byte
	for _, tr := range loadCorpus(t) {
		for _, c := range tr.Calls {
			inputs = append(inputs, c.Output, []byte(c.Error))
			if s, err := json.Marshal(string(c.Output)); err == nil {
				inputs = append(inputs, s) // the output as embedded JSON
			}
		}
	}
	for _, size := range []int{600, 4 << 10, 64 << 10, 1 << 20} {
		for k := range 3 {
			inputs = append(inputs, realisticResult(size, k))
		}
	}
	for _, s := range tokenSamples {
		b, _ := json.Marshal(s)
		inputs = append(inputs, b, []byte(`{"k":`+string(b)+`,"n":[`+string(b)+`]}`))
	}
	// Random texts of the samples, long enough to pass every SimHash
	// threshold (simSampleBytes, simFullBytes).
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 60 {
		var sb strings.Builder
		words := 1 + rng.IntN(4000)
		if n < 20 {
			words = 1 + rng.IntN(100)
		}
		for range words {
			sb.WriteString(tokenSamples[rng.IntN(len(tokenSamples))])
			sb.WriteString([]string{" ", "  ", "\n", "", "-", ".", ":"}[rng.IntN(7)])
		}
		b, _ := json.Marshal(map[string]any{"text": sb.String(), "nested": []string{sb.String()[:sb.Len()/2]}})
		inputs = append(inputs, b)
	}
	// Escapes as written, which the text is hashed from without decoding
	// the whole string: whitespace escapes, a backslash before whitespace,
	// surrogate pairs and lone halves, and strings that may hold JSON.
	for _, s := range escapeSamples {
		inputs = append(inputs, []byte(`"`+s+`"`), []byte(`{"k":"`+s+`","a":["`+s+`"]}`))
	}
	for i, in := range inputs {
		if d := sameAsReference(in); d != "" {
			t.Fatalf("input %d (%.80q): %s", i, in, d)
		}
	}
}

func FuzzCanonMatchesReference(f *testing.F) {
	for _, s := range tokenSamples {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{"a":{"b":[1,2,{"c":"x 2.31s 2026-11-23"}]},"thought":"hmm","args":"{\"k\": [1, \"x\"]}"}`))
	f.Add(realisticResult(4<<10, 1))
	for _, s := range escapeSamples {
		f.Add([]byte(`{"k":"` + s + `"}`))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if d := sameAsReference(body); d != "" {
			t.Fatal(d)
		}
		// The bytes as a string's content as written, escapes and all:
		// the path that reads text without decoding it first.
		if d := sameAsReference([]byte(`{"k":"` + string(body) + `"}`)); d != "" {
			t.Fatalf("as written in a string: %s", d)
		}
		// The same bytes as a JSON string: the text path.
		if s, err := json.Marshal(string(body)); err == nil {
			if d := sameAsReference(s); d != "" {
				t.Fatalf("as a string: %s", d)
			}
		}
	})
}
