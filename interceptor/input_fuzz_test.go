package interceptor

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// FuzzDecodeInput feeds arbitrary bytes to the human-input decoder: it must
// never panic, and whatever it accepts must pass its own validation.
func FuzzDecodeInput(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `"looks fine"`, `{}`, `{"reason":"x","by":"y"}`,
		`{"extend":{"maxCycleIterations":4}}`, `{"extend":{"maxCycleIterations":-1}}`,
		`{"extend":"lots"}`, `{"bogus":1}`, `{"reason":42}`, `{"reason":"a"} {"reason":"b"}`,
		`[1,2,3]`, `{"reason":"\xff"}`, `{"extend":{"maxNodeRuntime":"10m"}}`,
	} {
		f.Add([]byte(seed), true)
	}
	f.Add([]byte{0xff, 0x00}, false)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		enc := converter.MetadataEncodingBinary
		if asJSON {
			enc = converter.MetadataEncodingJSON
		}
		p := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(enc)}, Data: data}
		var req protocol.ResumeRequest
		err := decodeInput(defaultMaxPayloadBytes, p, &req)
		if err == nil {
			if verr := validateResume(&req); verr != nil {
				t.Fatalf("accepted input fails validation: %v", verr)
			}
			if !asJSON && len(data) > 0 {
				t.Fatalf("accepted a non-JSON payload")
			}
		}
	})
}
