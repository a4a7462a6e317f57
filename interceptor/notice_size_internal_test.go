package interceptor

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/loopguard/loopguard/interceptor/detect"
	"github.com/loopguard/loopguard/interceptor/protocol"
)

// largestWarning is a warning as long as the guard makes them: the longest
// directive, a legacy transition_oscillation message naming a period of 8
// transitions between 200-byte node names (longer than any generation 3
// message, whose paths are cut to 200 bytes), a 64-member cycle of such
// names, and counts as large as an int holds.
func largestWarning() *protocol.Warning {
	name := strings.Repeat("ß", 100) // 200 bytes, detect's cap on a node name
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = name + "->" + name
	}
	nodes := make([]string, 64) // DefaultPolicy's MaxNodes
	for i := range nodes {
		nodes[i] = name
	}
	var directive string
	for _, d := range directives {
		if len(d) > len(directive) {
			directive = d
		}
	}
	return &protocol.Warning{
		Detector: detect.DetectorTransitionOscillation, Reason: protocol.ReasonRepeatedError,
		Message:   "transitions repeat with period 8 without progress: " + strings.Join(parts, ", "),
		Directive: directive, N: math.MaxInt, Of: math.MaxInt,
		Node: name, Nodes: nodes, CycleID: "cyc-0123456789ab",
	}
}

// TestNoticeHeaderIsBounded: from guard version 8 the largest notice the
// guard can write encodes to at most MaxNoticeBytes, cut least useful
// first: the guidance is whole unless escapes make it longer than its 512
// bytes, and the directive always is. A notice that fits is not touched,
// and version 7 cuts nothing.
func TestNoticeHeaderIsBounded(t *testing.T) {
	multiByte := strings.Repeat("é", protocol.MaxGuidanceBytes/2) // 512 bytes
	escaped := strings.Repeat("<", protocol.MaxGuidanceBytes)     // 3 KiB of JSON
	longBy := strings.Repeat("<", maxTextLen)
	typical := protocol.Notice{Warning: &protocol.Warning{Detector: detect.DetectorIdenticalOutput, Reason: protocol.ReasonStalled,
		Message: "Code returned the same result 3 times in a row", Directive: directives[protocol.ReasonStalled],
		N: 1, Of: 2, Node: "Code", Nodes: []string{"Code", "Verify"}, CycleID: "cyc-0123456789ab"},
		Guidance: "read config/prod.yaml", By: "ana", HaltSeq: 1, Repeats: 2}
	tests := []struct {
		name      string
		give      protocol.Notice
		wantSame  bool // the plain encoding, untouched
		wantWhole bool // the guidance is whole
	}{
		{"typical", typical, true, true},
		{"largest, multi-byte guidance", protocol.Notice{Warning: largestWarning(), Guidance: multiByte, By: longBy, HaltSeq: math.MaxInt, Repeats: math.MaxInt}, false, true},
		{"largest, guidance of escapes", protocol.Notice{Warning: largestWarning(), Guidance: escaped, By: longBy, HaltSeq: math.MaxInt, Repeats: math.MaxInt}, false, false},
		{"no warning", protocol.Notice{Guidance: multiByte, By: longBy, HaltSeq: math.MaxInt, Repeats: math.MaxInt}, false, true},
	}
	dc := converter.GetDefaultDataConverter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before protocol.Warning
			if tt.give.Warning != nil {
				before = *tt.give.Warning
			}
			p := encodeNotice(tt.give)
			plain, err := dc.ToPayload(tt.give)
			require.NoError(t, err)
			if tt.wantSame {
				assert.Equal(t, plain.GetData(), p.GetData())
				return
			}
			assert.LessOrEqual(t, proto.Size(p), protocol.MaxNoticeBytes, "the header as history stores it")
			got, ok := readNotice(map[string]*commonpb.Payload{protocol.NoticeHeader: p})
			require.True(t, ok, "the cut notice decodes")
			var msg int
			if got.Warning != nil {
				msg = len(got.Warning.Message)
			}
			t.Logf("%d bytes of JSON cut to %d: guidance %d bytes, by %d, message %d",
				len(plain.GetData()), len(p.GetData()), len(got.Guidance), len(got.By), msg)
			assert.True(t, strings.HasPrefix(tt.give.Guidance, got.Guidance))
			assert.Equal(t, tt.wantWhole, got.Guidance == tt.give.Guidance)
			assert.Equal(t, tt.give.Repeats, got.Repeats)
			assert.Equal(t, tt.give.HaltSeq, got.HaltSeq)
			if tt.give.Warning != nil {
				require.NotNil(t, got.Warning)
				assert.Equal(t, tt.give.Warning.Directive, got.Warning.Directive)
				assert.Equal(t, tt.give.Warning.N, got.Warning.N)
				assert.Equal(t, before.Nodes, tt.give.Warning.Nodes, "the guard's own warning is not cut")
				assert.Equal(t, before.Message, tt.give.Warning.Message)
			}
		})
	}
}

// TestSameNotice: a notice is encoded again only when something in it
// changed; a warning changed in place is a change.
func TestSameNotice(t *testing.T) {
	w := &protocol.Warning{Reason: protocol.ReasonStalled, N: 1, Of: 2, Node: "Code", Nodes: []string{"Code", "Verify"}}
	w2 := *w
	w2.N = 2
	tests := []struct {
		name string
		a, b protocol.Notice
		want bool
	}{
		{"empty", protocol.Notice{}, protocol.Notice{}, true},
		{"same warning, another copy", protocol.Notice{Warning: w}, protocol.Notice{Warning: &protocol.Warning{Reason: protocol.ReasonStalled, N: 1, Of: 2, Node: "Code", Nodes: []string{"Code", "Verify"}}}, true},
		{"warning n", protocol.Notice{Warning: w}, protocol.Notice{Warning: &w2}, false},
		{"warning or none", protocol.Notice{Warning: w}, protocol.Notice{}, false},
		{"guidance", protocol.Notice{Guidance: "a"}, protocol.Notice{Guidance: "b"}, false},
		{"by", protocol.Notice{Guidance: "a", By: "ana"}, protocol.Notice{Guidance: "a"}, false},
		{"repeats", protocol.Notice{Repeats: 1}, protocol.Notice{Repeats: 2}, false},
		{"halt", protocol.Notice{Guidance: "a", HaltSeq: 1}, protocol.Notice{Guidance: "a", HaltSeq: 2}, false},
	}
	for _, tt := range tests {
		if got := sameNotice(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: sameNotice = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestFitsAgreesWithTheStoredSize: the shortcut of fits never accepts a
// payload whose stored size is over MaxNoticeBytes.
func TestFitsAgreesWithTheStoredSize(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	for n := protocol.MaxNoticeBytes - payloadOverhead - 8; n <= protocol.MaxNoticeBytes+8; n++ {
		p, err := dc.ToPayload(protocol.Notice{Guidance: strings.Repeat("x", n-len(`{"guidance":""}`))})
		require.NoError(t, err)
		assert.Equal(t, proto.Size(p) <= protocol.MaxNoticeBytes, fits(p), "data %d bytes, stored %d", len(p.GetData()), proto.Size(p))
	}
}
