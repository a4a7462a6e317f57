package detect

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// sameAsReference4 reads s with text4 and with its frozen reference
// (text4_ref_test.go) in each of the three ways the reader calls it (a
// quoted string as written, plain text as written, decoded text) and
// returns the first difference, or "".
func sameAsReference4(s []byte) string {
	var sc scratch4
	var rc ref4Scratch
	for _, m := range []struct{ quoted, esc bool }{{true, true}, {false, true}, {false, false}} {
		h, shape, nums, end, ok := text4(s, m.quoted, m.esc, &sc)
		rh, rshape, rnums, rend, rok := ref4Text4(s, m.quoted, m.esc, &rc)
		if h != rh || shape != rshape || nums != rnums || end != rend || ok != rok {
			return fmt.Sprintf("quoted %v esc %v: got (%#x %#x %d %d %v), reference (%#x %#x %d %d %v)",
				m.quoted, m.esc, h, shape, nums, end, ok, rh, rshape, rnums, rend, rok)
		}
	}
	return ""
}

// text4Samples are strings that exercise every rule of the fourth
// generation's reading: masking, units, counters, steps, meters, escapes,
// long tokens, and the edges of the eight-byte reads.
var text4Samples = []string{
	"", " ", "a", "9", "10,", "43)", "-", "#3:", "x\"y", `a\"b`, `\u0041\u00e9 x`, `bad \u12`, `end\`,
	"tests/test_mod_003.py::test_case_3 FAILED - AssertionError: expected 9, got 10 (line 43)\n",
	"3 failed, 41 passed in 2.05s", "took 120 ms", "took 1.5 s)", "retry 4 of 9", "attempt #3: failed", "Retrying 2",
	"step 3 of 5", "Step 3/5: plan", "step: 7", "step 3 of", "step three of 5",
	"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n100  1024  100  1024    0     0  51200      0 --:--:-- --:--:-- --:--:-- 51200",
	"Downloading: 45%|████▌     | 45/100 [00:03<00:04, 12.3it/s]", "12.3 MB/s eta 0:00:01",
	"2026-11-23T12:01:02.003Z", "12:01:02", "id 550e8400-e29b-41d4-a716-446655440000 done",
	"chatcmpl-9f8e7d6c5b4a", "req_011CSHvX4b5Fz7kq2mN8pQrT", "deadbeef1234", "1700000000", "v1.2.3", "3.14159",
	"0x1f2e3d4c", "abc123def456", "CamelCaseToken42WithMoreLetters", "a1b2c3d4e5f6g7h8i9",
	"line1\nline2\r\nline3", `line1\nline2\r\nline3\tx`, "tab\there", "nul\x00byte", "ctl\x01x",
	"exactly8", "exactly8 ", "1234567", "12345678", "123456789012345678901234567890",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1",
	`{"path": "tests", "k": 3}`, `  [1, 2]`, `\u007b"a":1}`,
	"1_000_000 rows", "8080:80", "file.go:120:7:", "a-1.b-2", "x__9__y", "9.x", "9-", "-9", "1e10", "5e", "3rd", "1st,2nd",
	"ÉCOLE 3 élèves", "日本 42 語",
}

// TestText4MatchesReference: the optimised reading of generation 4 gives
// the frozen reference's values on every sample, on every string of the
// corpora and on every suffix of the samples (the edges of the eight-byte
// reads).
func TestText4MatchesReference(t *testing.T) {
	for _, s := range text4Samples {
		for k := 0; k <= len(s); k++ {
			if d := sameAsReference4([]byte(s[k:])); d != "" {
				t.Fatalf("%q: %s", s[k:], d)
			}
		}
		q, err := json.Marshal(s)
		require.NoError(t, err)
		if d := sameAsReference4(q[1:]); d != "" {
			t.Fatalf("%s: %s", q, d)
		}
	}
	n := 0
	check := func(name string, out []byte) {
		if d := sameAsReference4(out); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
		for i, c := range out {
			if c == '"' {
				if d := sameAsReference4(out[i+1:]); d != "" {
					t.Fatalf("%s at %d: %s", name, i, d)
				}
				n++
			}
		}
	}
	for _, tr := range loadCorpus(t) {
		for _, c := range tr.Calls {
			check(tr.Name, c.Output)
		}
	}
	for _, tr := range append(loadRealCorpus(t), loadClockCorpus(t)...) {
		for _, s := range tr.Steps {
			check(tr.Name, []byte(s.Observation))
			check(tr.Name, []byte(s.Action))
			q, _ := json.Marshal(s.Observation)
			check(tr.Name, q)
		}
	}
	for i := range 4 {
		check("realistic", realisticResult(4<<10, i))
	}
	t.Logf("%d strings compared", n)
}

// FuzzText4MatchesReference: the optimised reading of generation 4 gives
// the frozen reference's values on any input.
//
//	go test -run '^$' -fuzz FuzzText4MatchesReference ./interceptor/detect/
func FuzzText4MatchesReference(f *testing.F) {
	for _, s := range text4Samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if d := sameAsReference4(s); d != "" {
			t.Fatalf("%q: %s", s, d)
		}
	})
}
