package history

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Decoding a history's JSON is most of the analysis's cost, and on agent
// framework histories (each model call re-sends the conversation) most
// of that JSON is payload bytes: base64 strings the proto JSON decoder
// scans byte by byte for escapes, then checks byte by byte for the URL
// alphabet, copies, then decodes. unmarshalHistory lifts the long
// payload strings out first (their end found with one IndexByte, as
// base64 holds no quote or backslash), decodes them itself, lets the
// proto decoder read the rest with a short placeholder in their place,
// and puts the bytes back in the payloads that hold the placeholders.
// The result is the proto decoder's own, or the decoder is run again on
// the original bytes: whenever a placeholder does not come back exactly
// once into a Payload's data (a "data" key of another message, a
// placeholder that could be mistaken for real data).

// liftMin is the shortest base64 string lifted: shorter ones cost the
// decoder little.
const liftMin = 256

// liftMagic starts every placeholder's bytes; a history whose JSON holds
// its base64 anywhere is decoded without lifting, so a placeholder can
// never be taken for a payload's real bytes.
var liftMagic = []byte("\x00loopguard-lifted-payload\x00")

// liftMagicText is liftMagic's base64 without its last group, as it
// stands at the start of every placeholder's text.
var liftMagicText = func() []byte {
	s := base64.StdEncoding.EncodeToString(liftMagic)
	return []byte(s[:len(s)/4*4-4])
}()

// unmarshalHistory decodes data, the JSON of a history, into h.
func unmarshalHistory(data []byte, h *historypb.History) error {
	opts := temporalproto.CustomJSONUnmarshalOptions{DiscardUnknown: true}
	stripped, lifted := liftPayloadData(data)
	if lifted != nil {
		if err := opts.Unmarshal(stripped, h); err == nil && restorePayloadData(h, lifted) {
			return nil
		}
		proto.Reset(h)
	}
	return opts.Unmarshal(data, h)
}

// liftPayloadData copies data with each long base64 value of a "data"
// key replaced by a placeholder, and returns the values' bytes, the
// placeholder's index into them. Nothing lifted: nil, nil.
func liftPayloadData(data []byte) ([]byte, [][]byte) {
	if bytes.Contains(data, liftMagicText) {
		return nil, nil
	}
	var out []byte
	var lifted [][]byte
	key := []byte(`"data"`)
	done := 0 // data[:done] is in out
	for i := 0; ; {
		k := bytes.Index(data[i:], key)
		if k < 0 {
			break
		}
		k += i
		i = k + len(key)
		if escaped(data, k) {
			continue
		}
		j := skipSpace(data, i)
		if j >= len(data) || data[j] != ':' {
			continue
		}
		j = skipSpace(data, j+1)
		if j >= len(data) || data[j] != '"' {
			continue
		}
		start := j + 1
		end := bytes.IndexByte(data[start:], '"')
		if end < liftMin {
			continue
		}
		end += start
		raw, ok := decodeBase64(data[start:end])
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data)/2)
		}
		out = append(out, data[done:start]...)
		out = base64.StdEncoding.AppendEncode(out, placeholder(len(lifted)))
		lifted = append(lifted, raw)
		done, i = end, end
	}
	if lifted == nil {
		return nil, nil
	}
	return append(out, data[done:]...), lifted
}

// escaped reports whether the quote at data[k] is escaped: an odd run of
// backslashes before it.
func escaped(data []byte, k int) bool {
	n := 0
	for k-n-1 >= 0 && data[k-n-1] == '\\' {
		n++
	}
	return n%2 == 1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// decodeBase64 decodes s as the proto JSON decoder does a bytes field
// (standard or URL alphabet, padded or not); false where it holds
// anything else (a backslash escape, another character).
func decodeBase64(s []byte) ([]byte, bool) {
	// Room for the longest reading: unpadded, the last group short.
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(s)))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if n, err := enc.Decode(out, s); err == nil {
			return out[:n], true
		}
	}
	return nil, false
}

// placeholder is the bytes standing for lifted value i.
func placeholder(i int) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), liftMagic...), uint64(i))
}

// restorePayloadData puts the lifted bytes back into the payloads that
// hold their placeholders, and reports whether each came back exactly
// once and no placeholder was left elsewhere.
func restorePayloadData(h *historypb.History, lifted [][]byte) bool {
	seen := make([]bool, len(lifted))
	found := 0
	ok := true
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, isPayload := m.Interface().(*commonpb.Payload); isPayload {
			d := p.GetData()
			if !bytes.HasPrefix(d, liftMagic) {
				return
			}
			rest := d[len(liftMagic):]
			if len(rest) != 8 {
				ok = false
				return
			}
			i := binary.BigEndian.Uint64(rest)
			if i >= uint64(len(lifted)) || seen[i] {
				ok = false
				return
			}
			seen[i] = true
			found++
			p.Data = lifted[i]
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsMap():
				if holdsPayload(fd.MapValue().Message()) {
					v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
						walk(mv.Message())
						return true
					})
				}
			case !holdsPayload(fd.Message()):
			case fd.IsList():
				l := v.List()
				for j := 0; j < l.Len(); j++ {
					walk(l.Get(j).Message())
				}
			default:
				walk(v.Message())
			}
			return ok
		})
	}
	walk(h.ProtoReflect())
	return ok && found == len(lifted)
}

// payloadHolders are the message types of a history that hold a Payload,
// at any depth: restorePayloadData walks only into those.
var payloadHolders = sync.OnceValue(func() map[protoreflect.FullName]bool {
	// Every message type a history reaches, then a fixed point: a type
	// holds a Payload if it is one or a field's type holds one (the graph
	// has cycles: a failure's cause is a failure).
	var all []protoreflect.MessageDescriptor
	seen := map[protoreflect.FullName]bool{}
	var reach func(md protoreflect.MessageDescriptor)
	reach = func(md protoreflect.MessageDescriptor) {
		if md == nil || seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		all = append(all, md)
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if fd.IsMap() {
				reach(fd.MapValue().Message())
			} else {
				reach(fd.Message())
			}
		}
	}
	reach((&historypb.History{}).ProtoReflect().Descriptor())
	holds := map[protoreflect.FullName]bool{(&commonpb.Payload{}).ProtoReflect().Descriptor().FullName(): true}
	for changed := true; changed; {
		changed = false
		for _, md := range all {
			if holds[md.FullName()] {
				continue
			}
			fields := md.Fields()
			for i := 0; i < fields.Len(); i++ {
				fd := fields.Get(i)
				t := fd.Message()
				if fd.IsMap() {
					t = fd.MapValue().Message()
				}
				if t != nil && holds[t.FullName()] {
					holds[md.FullName()], changed = true, true
					break
				}
			}
		}
	}
	return holds
})

// holdsPayload reports whether messages of type md may hold a Payload.
func holdsPayload(md protoreflect.MessageDescriptor) bool {
	return md != nil && payloadHolders()[md.FullName()]
}
