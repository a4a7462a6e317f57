package schedule

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// EncryptedEncoding marks a payload the test codec encrypted.
const EncryptedEncoding = "binary/encrypted"

// xorKey is the test codec's "key": enough to make every byte of a payload
// unreadable to anything that skips the codec.
var xorKey = []byte("loopguard-schedule-test-key")

// Codec is a stand-in for an encryption codec: it marshals the whole
// payload (metadata and data) and XORs it with a key, under the encoding
// binary/encrypted, as production codecs do with AES.
type Codec struct{}

// Encode encrypts every payload.
func (Codec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		b, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("codec: marshal payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncryptedEncoding)},
			Data:     xor(b),
		}
	}
	return out, nil
}

// Decode decrypts the payloads Encode encrypted and leaves others as they
// are.
func (Codec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncryptedEncoding {
			out[i] = p
			continue
		}
		var dec commonpb.Payload
		if err := proto.Unmarshal(xor(p.GetData()), &dec); err != nil {
			return nil, fmt.Errorf("codec: unmarshal payload: %w", err)
		}
		out[i] = &dec
	}
	return out, nil
}

func xor(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = c ^ xorKey[i%len(xorKey)]
	}
	return out
}

// DataConverter is the default converter behind the test codec: what the
// worker, the client and the replayer of a codec plan use.
func DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), Codec{})
}
