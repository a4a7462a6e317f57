package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// EncryptedEncoding marks payloads the test codec encrypted.
const EncryptedEncoding = "binary/encrypted"

// xorCodec stands in for an encryption codec: it XORs every payload (its
// metadata included) and wraps it in a payload of EncryptedEncoding. Like a
// real one, it leaves payloads it did not encrypt alone on decode.
type xorCodec struct{}

const xorKey = 0x5a

func xor(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = c ^ xorKey
	}
	return out
}

func (xorCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		data, err := p.Marshal()
		if err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncryptedEncoding)},
			Data:     xor(data),
		}
	}
	return out, nil
}

func (xorCodec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncryptedEncoding {
			out[i] = p
			continue
		}
		var d commonpb.Payload
		if err := d.Unmarshal(xor(p.GetData())); err != nil {
			return nil, fmt.Errorf("decrypt: %w", err)
		}
		out[i] = &d
	}
	return out, nil
}

// EncryptingDataConverter is the default converter behind an
// encryption-like codec, as converter.NewCodecDataConverter builds it.
func EncryptingDataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), xorCodec{})
}

// Ciphertext reports whether a payload is the test codec's: what history
// holds when the codec ran.
func Ciphertext(p *commonpb.Payload) bool {
	return string(p.GetMetadata()[converter.MetadataEncoding]) == EncryptedEncoding
}

// OwnJSONDataConverter is a data converter not built on the SDK's composite
// converter, like samples-go's pso sample: JSON for everything, in payloads
// of its own encoding, and no support for converter.RawValue.
func OwnJSONDataConverter() converter.DataConverter { return ownJSON{} }

type ownJSON struct{}

func (c ownJSON) ToPayloads(values ...any) (*commonpb.Payloads, error) {
	out := &commonpb.Payloads{}
	for _, v := range values {
		p, err := c.ToPayload(v)
		if err != nil {
			return nil, err
		}
		out.Payloads = append(out.Payloads, p)
	}
	return out, nil
}

func (ownJSON) ToPayload(v any) (*commonpb.Payload, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("raw")}, Data: buf.Bytes()}, nil
}

func (c ownJSON) FromPayloads(ps *commonpb.Payloads, ptrs ...any) error {
	for i, p := range ps.GetPayloads() {
		if i >= len(ptrs) {
			break
		}
		if err := c.FromPayload(p, ptrs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (ownJSON) FromPayload(p *commonpb.Payload, ptr any) error {
	if err := json.NewDecoder(bytes.NewReader(p.GetData())).Decode(ptr); err != nil {
		return fmt.Errorf("decode %T: %w", ptr, err)
	}
	return nil
}

func (ownJSON) ToString(p *commonpb.Payload) string { return string(p.GetData()) }

func (c ownJSON) ToStrings(ps *commonpb.Payloads) []string {
	var out []string
	for _, p := range ps.GetPayloads() {
		out = append(out, c.ToString(p))
	}
	return out
}

var (
	_ converter.PayloadCodec  = xorCodec{}
	_ converter.DataConverter = ownJSON{}
)
