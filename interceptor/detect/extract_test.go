package detect

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestExtract(t *testing.T) {
	rules := func(r Rules) Policy {
		p := DefaultPolicy()
		p.Nodes = map[string]NodePolicy{"n": {Rules: r}}
		return p
	}
	def := DefaultPolicy()
	ignoreTS := rules(Rules{IgnoreFields: []string{"ts", "items.*.at", "meta.run"}})
	tests := []struct {
		name     string
		policy   Policy
		give     string
		sameAs   string // hashes equal to this payload's (same policy)
		differs  string // hashes differently from this payload
		want     Observation
		wantNoOK bool // Output must be 0 (no signal)
	}{
		{name: "raw bytes", policy: def, give: `{"a":1}`, differs: `{"a":2}`},
		{name: "string: whitespace collapsed", policy: def, give: `"fix:\n  add null check\t "`, sameAs: `"fix: add   null check"`},
		{name: "string with escapes", policy: def, give: `"a\n\nb \"q\""`, sameAs: `"a b   \"q\""`},
		{name: "string: other text differs", policy: def, give: `"fix a"`, differs: `"fix b"`},
		{name: "empty is silent", policy: def, give: ``, wantNoOK: true},
		{name: "null is silent", policy: def, give: ` null `, wantNoOK: true},
		{name: "invalid JSON hashed raw", policy: ignoreTS, give: `{"ts": 1, oops`, differs: `{"ts": 2, oops`},
		{name: "trailing garbage is invalid", policy: ignoreTS, give: `{"ts":1} x`, differs: `{"ts":2} x`},
		{name: "ignore fields", policy: ignoreTS, give: `{"ts":"10:01","v":"x","meta":{"run":7,"k":1}}`, sameAs: `{"v":"x","meta":{"k":1,"run":9},"ts":"10:02"}`},
		{name: "ignore fields: others still count", policy: ignoreTS, give: `{"ts":"10:01","v":"x"}`, differs: `{"ts":"10:01","v":"y"}`},
		{name: "ignore with wildcard in arrays", policy: ignoreTS, give: `{"items":[{"id":1,"at":5},{"id":2,"at":6}]}`, sameAs: `{"items":[{"id":1,"at":7},{"id":2}]}`},
		{name: "ignore an array element", policy: rules(Rules{IgnoreFields: []string{"log.0"}}), give: `{"log":["t=1","x"]}`, sameAs: `{"log":["t=2","x"]}`},
		{name: "global ignore fields", policy: func() Policy { p := DefaultPolicy(); p.IgnoreFields = []string{"id"}; return p }(), give: `{"id":"a1","v":1}`, sameAs: `{"v":1,"id":"b2"}`},
		{
			name: "progress fields", policy: rules(Rules{ProgressFields: []string{"diff", "tests.failing"}}),
			give: `{"diff":"+x","tests":{"failing":["t1","t2"]},"msg":"hi"}`,
			want: Observation{HasProgress: true, Progress: 0, ProgressRaw: `+x, ["t1","t2"]`},
		},
		{
			name: "progress: missing fields", policy: rules(Rules{ProgressFields: []string{"nope"}}),
			give: `{"diff":"+x"}`, want: Observation{},
		},
		{
			name: "progress raw truncated", policy: rules(Rules{ProgressFields: []string{"d"}}),
			give: `{"d":"0123456789012345678901234567890123456789012345678901234567890123456789"}`,
			want: Observation{HasProgress: true, ProgressRaw: "0123456789012345678901234567890123456789012345678901234567890123"},
		},
		{name: "metric number", policy: rules(Rules{MetricField: "report.failing"}), give: `{"report":{"failing":4}}`, want: Observation{HasMetric: true, Metric: 4}},
		{name: "metric numeric string", policy: rules(Rules{MetricField: "score"}), give: `{"score":" 0.75 "}`, want: Observation{HasMetric: true, Metric: 0.75}},
		{name: "metric array length", policy: rules(Rules{MetricField: "failing"}), give: `{"failing":["a","b","c"]}`, want: Observation{HasMetric: true, Metric: 3}},
		{name: "metric by array index", policy: rules(Rules{MetricField: "runs.1.failing"}), give: `{"runs":[{"failing":9},{"failing":2}]}`, want: Observation{HasMetric: true, Metric: 2}},
		{name: "metric not a number", policy: rules(Rules{MetricField: "m"}), give: `{"m":{"x":1}}`, want: Observation{}},
		{name: "metric out of range index", policy: rules(Rules{MetricField: "runs.5"}), give: `{"runs":[1]}`, want: Observation{}},
		{name: "cost", policy: rules(Rules{CostField: "usage.cost"}), give: `{"usage":{"cost":0.012}}`, want: Observation{Cost: 0.012}},
		{name: "negative cost ignored", policy: rules(Rules{CostField: "c"}), give: `{"c":-1}`, want: Observation{}},
		{name: "a long digit run is noise", policy: ignoreTS, give: `{"n":12345678901234567890}`, sameAs: `{"n":12345678901234567891}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(tt.policy, "n", []byte(tt.give))
			if tt.wantNoOK {
				assert.Zero(t, got.Output)
				return
			}
			assert.NotZero(t, got.Output)
			if tt.sameAs != "" {
				assert.Equal(t, got.Output, Extract(tt.policy, "n", []byte(tt.sameAs)).Output)
			}
			if tt.differs != "" {
				assert.NotEqual(t, got.Output, Extract(tt.policy, "n", []byte(tt.differs)).Output)
			}
			assert.Equal(t, tt.want.HasProgress, got.HasProgress)
			if tt.want.HasProgress {
				assert.NotZero(t, got.Progress)
			}
			assert.Equal(t, tt.want.ProgressRaw, got.ProgressRaw)
			assert.Equal(t, tt.want.HasMetric, got.HasMetric)
			assert.Equal(t, tt.want.Metric, got.Metric)
			assert.Equal(t, tt.want.Cost, got.Cost)
		})
	}
}

func TestExtractProgressIgnoresOtherFields(t *testing.T) {
	p := DefaultPolicy()
	p.Nodes = map[string]NodePolicy{"coder": {Rules: Rules{ProgressFields: []string{"patch"}}}}
	a := Extract(p, "coder", []byte(`{"patch":"+null check","explanation":"first try"}`))
	b := Extract(p, "coder", []byte(`{"patch":"+null check","explanation":"second try"}`))
	c := Extract(p, "coder", []byte(`{"patch":"+validation","explanation":"first try"}`))
	assert.NotEqual(t, a.Output, b.Output)
	assert.Equal(t, a.Progress, b.Progress)
	assert.NotEqual(t, a.Progress, c.Progress)
	other := Extract(p, "verify", []byte(`{"patch":"+null check"}`))
	assert.False(t, other.HasProgress, "rules are per node")
}

func TestErrorSignature(t *testing.T) {
	tests := []struct {
		name      string
		give      [2]string
		want      string
		sameAs    [2]string
		differsTo [2]string
	}{
		{name: "digits", give: [2]string{"Timeout", "timeout after 31s (attempt 2)"}, want: "timeout:timeout after #s (attempt #)", sameAs: [2]string{"TIMEOUT", "timeout after 45s (attempt 3)"}},
		{name: "whitespace", give: [2]string{"E", "  a \n\t b  "}, want: "e:a b"},
		{name: "uuid", give: [2]string{"NotFound", "run 123e4567-e89b-12d3-a456-426614174000 not found"}, want: "notfound:run # not found", sameAs: [2]string{"NotFound", "run 9f1c2d3e-0000-4abc-8def-0123456789ab not found"}},
		{name: "hex ids", give: [2]string{"git", "commit 3f2a9c1e missing"}, want: "git:commit # missing", sameAs: [2]string{"git", "commit a0b1c2d missing"}},
		{name: "0x literal", give: [2]string{"segv", "at 0xdeadbeef"}, want: "segv:at #"},
		{name: "words that look hex stay", give: [2]string{"E", "bad face added"}, want: "e:bad face added"},
		{name: "line numbers", give: [2]string{"TypeError", "Cannot read property 'id' of null at auth.ts:45"}, want: "typeerror:Cannot read property 'id' of null at auth.ts:#"},
		{name: "ids after underscore", give: [2]string{"E", "request req_8f3a9b failed"}, want: "e:request req_# failed"},
		{name: "empty kind", give: [2]string{"", "boom"}, want: "error:boom"},
		{name: "different kinds differ", give: [2]string{"A", "x"}, differsTo: [2]string{"B", "x"}},
		{name: "different messages differ", give: [2]string{"E", "disk full"}, differsTo: [2]string{"E", "permission denied"}},
		{name: "unicode kept", give: [2]string{"E", "échec   du test 3"}, want: "e:échec du test #"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ErrorSignature(tt.give[0], tt.give[1])
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			}
			if tt.sameAs[1] != "" {
				assert.Equal(t, got, ErrorSignature(tt.sameAs[0], tt.sameAs[1]))
			}
			if tt.differsTo[1] != "" {
				assert.NotEqual(t, got, ErrorSignature(tt.differsTo[0], tt.differsTo[1]))
			}
		})
	}
	long := ErrorSignature("E", strings.Repeat("é", 500))
	assert.LessOrEqual(t, len(long), 160)
	assert.True(t, validUTF8(long))
}

func validUTF8(s string) bool { return utf8.ValidString(s) }
