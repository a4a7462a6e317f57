package detect

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestJSONInString: a JSON string result is read as the JSON it holds
// when that parses (generation 4), and mayStartJSON, which spares text
// results the decoding, never turns one away that would parse.
func TestJSONInString(t *testing.T) {
	tests := []struct {
		name string
		give string // the string's content, encoded as JSON by the test
		raw  string // or the body as written, when set
		want string // the JSON read, "" for none
	}{
		{name: "object", give: `{"matches":[],"requestNo":7}`, want: `{"matches":[],"requestNo":7}`},
		{name: "array, spaces around", give: " \n\t[1, 2] \r", want: `[1, 2]`},
		{name: "text", give: "3 tests failed", want: ""},
		{name: "empty", give: "", want: ""},
		{name: "a brace, not JSON", give: "{not json", want: ""},
		{name: "two values", give: `{} {}`, want: ""},
		{name: "escaped brace", raw: `"\u007b\"a\":1}"`, want: `{"a":1}`},
		{name: "escaped newline before", raw: `"\n{\"a\":1}"`, want: `{"a":1}`},
		{name: "no-break space before", give: "\u00a0{\"a\":1}", want: `{"a":1}`},
		{name: "vertical tab before", raw: "\"\v{}\"", want: ""}, // a raw control byte: not a JSON string
		{name: "unterminated", raw: `"{\"a\":1}`, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.raw)
			if tt.raw == "" {
				body, _ = json.Marshal(tt.give)
			}
			got, ok := jsonInString(body)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, string(got))
			if !mayStartJSON(body[1:]) {
				_, slow := jsonInStringDecoded(body)
				assert.False(t, slow, "mayStartJSON turned away a string that holds JSON")
			}
		})
	}
}

// jsonInStringDecoded is jsonInString without its prefilter.
func jsonInStringDecoded(body []byte) ([]byte, bool) {
	var s string
	if json.Unmarshal(body, &s) != nil {
		return nil, false
	}
	t := bytes.TrimSpace([]byte(s))
	if len(t) < 2 || t[0] != '{' && t[0] != '[' || !json.Valid(t) {
		return nil, false
	}
	return t, true
}

// FuzzMayStartJSON: the prefilter never changes what jsonInString reads.
func FuzzMayStartJSON(f *testing.F) {
	for _, s := range []string{`"{}"`, `" [1]"`, `"\u007b}"`, "\"\u00a0{}\"", `"text"`, `"\n\t{\"a\":1}"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 || body[0] != '"' || len(body) > maxEmbedLength {
			return
		}
		got, ok := jsonInString(body)
		want, wok := jsonInStringDecoded(body)
		if ok != wok || string(got) != string(want) {
			t.Fatalf("%q: read %q, %v; without the prefilter %q, %v", body, got, ok, want, wok)
		}
	})
}
