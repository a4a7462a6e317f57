package detect

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

// The step sequence in a snapshot: one base64 string, the steps oldest
// first, each as
//
//	flags byte | node uvarint | exact 4 bytes | key 4 bytes (when it differs
//	from exact) | count varint (when not 0) | shape 4 bytes (when not 0)
//
// The sequence keeps half hashes (pushSeq): about 12 bytes a step before
// base64, so that the 96 steps the rule keeps add about 1.5 KB to a
// continued run's state, not the 9 KB of JSON objects.

const (
	stepFailed uint8 = 1 << iota
	stepWaited
	stepSilent
	stepBarrier
	stepKey   // key differs from exact
	stepCount // count is not 0
	stepShape // shape is not 0
)

// encodeSteps returns the step sequence in its snapshot form ("" when
// empty).
func (s *State) encodeSteps() string {
	if s.steps.n == 0 {
		return ""
	}
	b := make([]byte, 0, s.steps.n*24)
	put := func(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }
	for k := s.steps.n - 1; k >= 0; k-- {
		st := s.steps.at(k)
		var f uint8
		for _, x := range []struct {
			on  bool
			bit uint8
		}{{st.failed, stepFailed}, {st.waited, stepWaited}, {st.silent, stepSilent}, {st.node < 0, stepBarrier},
			{st.key != st.exact, stepKey}, {st.count != 0, stepCount}, {st.shape != 0, stepShape}} {
			if x.on {
				f |= x.bit
			}
		}
		b = append(b, f)
		if st.node < 0 {
			continue
		}
		b = binary.AppendUvarint(b, uint64(st.node))
		b = put(b, st.exact)
		if f&stepKey != 0 {
			b = put(b, st.key)
		}
		if f&stepCount != 0 {
			b = binary.AppendVarint(b, st.count)
		}
		if f&stepShape != 0 {
			b = put(b, st.shape)
		}
	}
	return base64.RawStdEncoding.EncodeToString(b)
}

// decodeSteps restores the step sequence from its snapshot form; valid
// says whether a node index exists.
func (s *State) decodeSteps(enc string, valid func(int) bool) error {
	if enc == "" {
		return nil
	}
	b, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil {
		return fmt.Errorf("step sequence: %w", err)
	}
	bad := errors.New("step sequence: truncated")
	u64 := func() (uint64, error) {
		if len(b) < 4 {
			return 0, bad
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return uint64(v), nil
	}
	for n := 0; len(b) > 0; n++ {
		if n >= seqCap {
			return errors.New("step sequence: too long")
		}
		f := b[0]
		b = b[1:]
		st := seqStep{node: -1, failed: f&stepFailed != 0, waited: f&stepWaited != 0, silent: f&stepSilent != 0}
		if f&stepBarrier == 0 {
			node, k := binary.Uvarint(b)
			if k <= 0 || !valid(int(node)) {
				return fmt.Errorf("step sequence: step %d: no such node", n)
			}
			b = b[k:]
			st.node = int32(node)
			if st.exact, err = u64(); err != nil {
				return err
			}
			st.key = st.exact
			if f&stepKey != 0 {
				if st.key, err = u64(); err != nil {
					return err
				}
			}
			if f&stepCount != 0 {
				c, k := binary.Varint(b)
				if k <= 0 {
					return bad
				}
				b, st.count = b[k:], c
			}
			if f&stepShape != 0 {
				if st.shape, err = u64(); err != nil {
					return err
				}
			}
		}
		s.steps.push(st)
	}
	return nil
}
