package interceptor

import (
	"encoding/json"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// The workflow's data converter (with its codecs: encryption, compression)
// is not exposed to workflow code, but two public paths go through it
// without creating a command:
//
//   - a workflow channel holding *commonpb.Payloads decodes them, on
//     receive, with the data converter of the context it was made in; the
//     non-blocking SendAsync and ReceiveAsync work anywhere, even in
//     HandleSignal, which runs outside any coroutine;
//   - workflow.NewContinueAsNewError encodes its arguments with it, and only
//     the error returned from the workflow function becomes a command.
//
// Everything the guard reads from or writes to history goes through these
// two functions, so a codec sees every byte.

// errUndecodable is decodePayload's error. The SDK logs the converter's
// own error ("Deserialization error") and keeps it.
var errUndecodable = errors.New("the workflow's data converter cannot decode it")

// decodePayload decodes p into ptr with the workflow's data converter.
func decodePayload(ctx workflow.Context, p *commonpb.Payload, ptr any) error {
	ch := workflow.NewBufferedChannel(ctx, 1)
	ch.SendAsync(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	if !ch.ReceiveAsync(ptr) {
		return errUndecodable
	}
	return nil
}

// encodePayload encodes v with the workflow's data converter. The public
// workflow.NewContinueAsNewError gives the error a header of its own, so
// context propagators write into that, not into this run's header.
func encodePayload(ctx workflow.Context, v any) (p *commonpb.Payload, err error) {
	defer func() {
		// The SDK panics when it cannot encode a continue-as-new argument.
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("encode with the workflow's data converter: %v", r)
		}
	}()
	var can *workflow.ContinueAsNewError
	if !errors.As(workflow.NewContinueAsNewError(ctx, carryHeader, v), &can) || len(can.Input.GetPayloads()) != 1 {
		return nil, errors.New("encode with the workflow's data converter: no payload")
	}
	return can.Input.GetPayloads()[0], nil
}

// decode decodes a payload the guard wrote to history, with the
// workflow's data converter.
func (g *guard) decode(ctx workflow.Context, p *commonpb.Payload, ptr any) error {
	return decodePayload(ctx, p, ptr)
}

// capturedBytes takes whatever bytes a data converter hands to the value it
// decodes into: JSON converters call UnmarshalJSON, gob GobDecode, others
// UnmarshalBinary or UnmarshalText. It reads payloads of converters that do
// not support converter.RawValue (those not built on the SDK's composite
// converter).
type capturedBytes []byte

func (c *capturedBytes) UnmarshalJSON(b []byte) error   { return c.capture(b) }
func (c *capturedBytes) GobDecode(b []byte) error       { return c.capture(b) }
func (c *capturedBytes) UnmarshalBinary(b []byte) error { return c.capture(b) }
func (c *capturedBytes) UnmarshalText(b []byte) error   { return c.capture(b) }

func (c *capturedBytes) capture(b []byte) error {
	*c = append((*c)[:0], b...)
	return nil
}

var _ json.Unmarshaler = (*capturedBytes)(nil)

// payload wraps the captured bytes as the JSON payload they are; none
// captured (a null payload) is no payload.
func (c capturedBytes) payload() *commonpb.Payload {
	if c == nil {
		return nil
	}
	return &commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     c,
	}
}

// plainPayload returns a human's payload as the workflow's data converter
// decodes it: a codec's ciphertext (or a custom converter's encoding)
// becomes the JSON its sender meant. Payloads in the SDK's own encodings
// are returned as they are.
func (g *guard) plainPayload(ctx workflow.Context, p *commonpb.Payload) (*commonpb.Payload, error) {
	if p == nil {
		return p, nil
	}
	enc := string(p.GetMetadata()[converter.MetadataEncoding])
	switch enc {
	case converter.MetadataEncodingJSON, converter.MetadataEncodingNil, converter.MetadataEncodingBinary,
		converter.MetadataEncodingProtoJSON, converter.MetadataEncodingProto:
		// The SDK's own encodings: no codec ran, decodeInput judges them.
		return p, nil
	}
	// JSON (through a composite converter, or one of its own) comes out as
	// its bytes; anything else as a RawValue, when the converter can.
	var b capturedBytes
	if err := decodePayload(ctx, p, &b); err != nil {
		var raw converter.RawValue
		if err := decodePayload(ctx, p, &raw); err == nil && raw.Payload() != nil {
			return raw.Payload(), nil
		}
		return nil, fmt.Errorf("payload in encoding %q: %w", enc, err)
	}
	return b.payload(), nil
}
