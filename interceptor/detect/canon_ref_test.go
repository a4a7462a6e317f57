package detect

// This file is a frozen copy of canon.go as of f8e493e, the reference the
// optimised canonical reading must match bit for bit (canon_ref_test.go,
// FuzzCanonMatchesReference). Do not edit it: recorded histories replay
// against these values.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The second generation's notion of "the same result" (DetectionV2), with
// zero options: a result is reduced to a sum of (path, value) refLeaf hashes,
// so that
//
//   - object key order does not matter (a refLeaf is named by its path);
//   - strings compare with whitespace runs collapsed and volatile tokens
//     (UUIDs, hex ids, long digit runs, timestamps, durations) masked;
//   - a string holding JSON (tool arguments) is compared as that JSON;
//   - an array of strings is a set (failing test names in another order);
//   - other arrays keep their order.
//
// It also returns the numeric leaves outside arrays (candidates for the
// volatile fields the State learns per node: ids, epochs, counters; string
// ids are masked as tokens already) and a SimHash of the
// string tokens, the near-duplicate measure for long free text. The
// scanner reads the payload once and does not allocate unless a string
// holds escapes or JSON.

// maskDigits is the shortest digit run masked as an id: epoch seconds
// (10 digits) and long ids go, counts, ports, line numbers and step
// numbers (up to a million) stay.

// refCanonical is one result read the second generation's way.
type refCanonical struct {
	sum    uint64 // the result's hash: the sum of its refLeaf contributions
	shape  uint64 // the same with every number masked
	nums   int64  // the sum of the numbers the hash kept (short integers)
	action uint64 // the hash without commentary fields and measurements, 0: none
	sim    uint64 // SimHash of the string tokens, 0: too little text
	fields [maxFields]Field
	nf     int
}

// refCanonScan reads one payload.
type refCanonScan struct {
	b      []byte
	i      int
	c      *refCanonical
	sim    [24]uint64 // bit-sliced per-bit token counts
	tokens int
	text   int
	buf    []byte // unescaped strings
	depth  int
	nums   int64
	comm   uint64 // what commentary fields and measurements add to the hash
	inComm bool
}

// refMix64 is SplitMix64's finaliser: a bijection that spreads every input
// bit, so that sums of mixed leaves do not cancel.
func refMix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// refLeaf is the contribution of a value hash v at path.
func refLeaf(path, v uint64) uint64 {
	return refMix64(path*0x9e3779b97f4a7c15 ^ v)
}

// Value kinds, mixed into value hashes so that 1 and "1" differ.

// refHp is a value's contribution two ways: v (the result's hash) and s (its
// shape, every number masked).
type refHp struct{ v, s uint64 }

func refLeaf2(path, v, s uint64) refHp { return refHp{refLeaf(path, v), refLeaf(path, s)} }

func (x *refHp) add(y refHp) { x.v += y.v; x.s += y.s }

// refReadCanonical reads body (trimmed, non-empty) into c. Invalid JSON is
// hashed as raw bytes.
func refReadCanonical(body []byte, c *refCanonical) {
	sc := refCanonScan{b: body, c: c}
	x, ok := sc.value(fnvOffset, true)
	sc.skipSpace()
	if !ok || sc.i != len(sc.b) {
		h := refLeaf(fnvOffset, fnvBytes(fnvOffset^kindRaw, body))
		*c = refCanonical{sum: h, shape: h}
		return
	}
	c.sum, c.shape, c.nums = x.v, x.s, sc.nums
	if sc.comm != 0 {
		c.action = nonZero(x.v - sc.comm)
	}
	if sc.tokens < counterMinTokens || sc.tokens > counterMaxTokens {
		// Too little text to tell a counter from content, or so much that a
		// number moving by one is content (an edit's line range).
		c.shape = 0
	}
	if sc.tokens >= simMinTokens {
		c.sim = nonZero(sc.simHash())
	}
}

func (sc *refCanonScan) skipSpace() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value reads the value at sc.i and returns its contribution at path.
// top is false inside arrays: leaves there are not volatile candidates.
func (sc *refCanonScan) value(path uint64, top bool) (refHp, bool) {
	sc.skipSpace()
	if sc.i >= len(sc.b) {
		return refHp{}, false
	}
	switch c := sc.b[sc.i]; {
	case c == '{':
		return sc.object(path, top)
	case c == '[':
		return sc.array(path)
	case c == '"':
		raw, ok := sc.str()
		if !ok {
			return refHp{}, false
		}
		return sc.stringValue(path, raw, top), true
	case c == 't' || c == 'f' || c == 'n':
		start := sc.i
		for sc.i < len(sc.b) && sc.b[sc.i] >= 'a' && sc.b[sc.i] <= 'z' {
			sc.i++
		}
		w := string(sc.b[start:sc.i])
		kind := kindBool
		switch w {
		case "true", "false":
		case "null":
			kind = kindNull
		default:
			return refHp{}, false
		}
		h := fnvString(fnvOffset^kind, w)
		return refLeaf2(path, h, h), true
	case c == '-' || c >= '0' && c <= '9':
		start := sc.i
		integer := true
		for sc.i < len(sc.b) {
			d := sc.b[sc.i]
			if d >= '0' && d <= '9' || d == '-' && sc.i == start {
				sc.i++
				continue
			}
			if d == '.' || d == 'e' || d == 'E' || d == '+' || d == '-' {
				integer = false
				sc.i++
				continue
			}
			break
		}
		num := sc.b[start:sc.i]
		h := fnvBytes(fnvOffset^kindNumber, num)
		shape := h
		if integer && len(num) <= 15 {
			var v int64
			for _, d := range num {
				if d != '-' {
					v = v*10 + int64(d-'0')
				}
			}
			if num[0] == '-' {
				v = -v
			}
			sc.nums += v
			shape = fnvOffset ^ kindNumber
		}
		x := refLeaf2(path, h, shape)
		if !integer && !sc.inComm {
			// A measurement (a duration, a cost, a score): left out of the
			// action hash.
			sc.comm += x.v - refLeaf(path, fnvOffset^kindNumber^'.')
		}
		if top {
			sc.addField(path, x.v)
		}
		return x, true
	}
	return refHp{}, false
}

func (sc *refCanonScan) addField(path, s uint64) {
	sc.addFolded(Field{Path: uint32(path) ^ uint32(path>>32), Sum: s})
}

func (sc *refCanonScan) addFolded(f Field) {
	if sc.c.nf < maxFields {
		sc.c.fields[sc.c.nf] = f
		sc.c.nf++
	}
}

func (sc *refCanonScan) object(path uint64, top bool) (refHp, bool) {
	if sc.depth++; sc.depth > maxDepth {
		return refHp{}, false
	}
	defer func() { sc.depth-- }()
	sc.i++ // {
	sum := refLeaf2(path, kindObject, kindObject)
	sc.skipSpace()
	if sc.i < len(sc.b) && sc.b[sc.i] == '}' {
		sc.i++
		return sum, true
	}
	for {
		sc.skipSpace()
		if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
			return refHp{}, false
		}
		key, ok := sc.str()
		if !ok {
			return refHp{}, false
		}
		kp := fnvBytes(fnvByte(path, '.'), key)
		sc.skipSpace()
		if sc.i >= len(sc.b) || sc.b[sc.i] != ':' {
			return refHp{}, false
		}
		sc.i++
		comm := !sc.inComm && refCommentaryKey(key)
		if comm {
			sc.inComm = true
		}
		v, ok := sc.value(kp, top)
		if comm {
			sc.inComm = false
			sc.comm += v.v
		}
		if !ok {
			return refHp{}, false
		}
		sum.add(v)
		sc.skipSpace()
		if sc.i >= len(sc.b) {
			return refHp{}, false
		}
		switch sc.b[sc.i] {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return sum, true
		default:
			return refHp{}, false
		}
	}
}

// array hashes its elements at one wildcard path: an array of strings as
// a set (order ignored), any other array as a sequence.
func (sc *refCanonScan) array(path uint64) (refHp, bool) {
	if sc.depth++; sc.depth > maxDepth {
		return refHp{}, false
	}
	defer func() { sc.depth-- }()
	sc.i++ // [
	elem := fnvByte(path, '*')
	var set, seq refHp
	strs, n := true, uint64(0)
	sc.skipSpace()
	if sc.i < len(sc.b) && sc.b[sc.i] == ']' {
		sc.i++
		return refLeaf2(path, kindArray, kindArray), true
	}
	for {
		sc.skipSpace()
		strs = strs && sc.i < len(sc.b) && sc.b[sc.i] == '"'
		v, ok := sc.value(elem, false)
		if !ok {
			return refHp{}, false
		}
		n++
		set.add(v)
		seq.add(refHp{refMix64(v.v + n*0x9e3779b97f4a7c15), refMix64(v.s + n*0x9e3779b97f4a7c15)})
		sc.skipSpace()
		if sc.i >= len(sc.b) {
			return refHp{}, false
		}
		switch sc.b[sc.i] {
		case ',':
			sc.i++
		case ']':
			sc.i++
			x := refLeaf2(path, kindArray, kindArray)
			if strs {
				x.add(set)
			} else {
				x.add(seq)
			}
			return x, true
		default:
			return refHp{}, false
		}
	}
}

// str reads a JSON string at sc.i and returns its content, unescaped (into
// sc.buf when it holds escapes).
func (sc *refCanonScan) str() ([]byte, bool) {
	sc.i++ // "
	start := sc.i
	q := bytes.IndexByte(sc.b[start:], '"')
	if q < 0 {
		return nil, false
	}
	if e := bytes.IndexByte(sc.b[start:start+q], '\\'); e >= 0 {
		sc.i = start + e
		return sc.strEscaped(start)
	}
	sc.i = start + q + 1
	return sc.b[start : start+q], true
}

// strEscaped unescapes a string from start, sc.i being at its first
// backslash; runs without escapes are copied whole.
func (sc *refCanonScan) strEscaped(start int) ([]byte, bool) {
	if sc.buf == nil {
		sc.buf = make([]byte, 0, len(sc.b)-start)
	}
	out := append(sc.buf[:0], sc.b[start:sc.i]...)
	for sc.i < len(sc.b) {
		rest := sc.b[sc.i:]
		// The next escape or closing quote, whichever comes first; each
		// scan stops there, so the whole string is read once.
		end := rest
		if e := bytes.IndexByte(rest, '\\'); e >= 0 {
			end = rest[:e+1]
		}
		k := bytes.IndexByte(end, '"')
		if k < 0 {
			k = len(end) - 1
			if k < 0 || end[k] != '\\' {
				return nil, false
			}
		}
		out = append(out, rest[:k]...)
		sc.i += k
		if sc.b[sc.i] == '"' {
			sc.i++
			sc.buf = out[:0]
			return out, true
		}
		if sc.i+1 >= len(sc.b) {
			return nil, false
		}
		e := sc.b[sc.i+1]
		sc.i += 2
		switch e {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b', 'f':
			out = append(out, ' ')
		case 'u':
			if sc.i+4 > len(sc.b) {
				return nil, false
			}
			r, ok := refHex4(sc.b[sc.i : sc.i+4])
			if !ok {
				return nil, false
			}
			sc.i += 4
			if r >= 0xd800 && r < 0xdc00 && sc.i+6 <= len(sc.b) && sc.b[sc.i] == '\\' && sc.b[sc.i+1] == 'u' {
				if lo, ok := refHex4(sc.b[sc.i+2 : sc.i+6]); ok && lo >= 0xdc00 && lo < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
					sc.i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		default: // " \ /
			out = append(out, e)
		}
	}
	return nil, false
}

func refHex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// embedded is added to the hash of JSON read from inside a string.

// stringValue hashes a string's content: as JSON when it holds an object
// or array (tool arguments), else as normalised text.
func (sc *refCanonScan) stringValue(path uint64, s []byte, top bool) refHp {
	t := refTrimSpace(s)
	if len(t) >= 2 && len(t) <= maxEmbedLength && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		// The nested scan has its own buffer: t may live in sc.buf.
		var ic refCanonical
		inner := refCanonScan{b: t, c: &ic, depth: sc.depth}
		if x, ok := inner.value(path, top); ok {
			inner.skipSpace()
			if inner.i == len(inner.b) {
				for _, f := range ic.fields[:ic.nf] {
					sc.addFolded(f)
				}
				sc.mergeSim(&inner)
				sc.nums += inner.nums
				// Embedded JSON is not the same as the object itself.
				sc.comm += inner.comm
				return refHp{x.v + embedded, x.s + embedded}
			}
		}
	}
	h, shape, nums := sc.text1(s)
	sc.nums += nums
	return refLeaf2(path, h, shape)
}

// text1 hashes text with whitespace runs collapsed and volatile tokens
// masked, and feeds its tokens to the SimHash. It returns the hash, the
// shape hash (numbers masked too) and the sum of the numbers kept.
func (sc *refCanonScan) text1(s []byte) (h, shape uint64, nums int64) {
	// Tokens are chained by multiplication: "a b" and "ab" differ without
	// hashing the space between them.
	h, shape = fnvOffset^kindString, fnvOffset^kindString
	for i := 0; i < len(s); {
		for i < len(s) && refByteClass[s[i]]&clSpace != 0 {
			i++
		}
		j, cls := i, uint8(0)
		for j < len(s) {
			k := refByteClass[s[j]]
			if k&clSpace != 0 {
				break
			}
			cls |= k
			j++
		}
		if j == i {
			break
		}
		t := refTok{h: fnvOffset, shape: fnvOffset}
		if cls&clDigit == 0 {
			// No digit, nothing to mask: the token hashes at once.
			t.h = refWordHash(s[i:j])
			t.shape = t.h
		} else {
			t.maskToken(s[i:j])
		}
		h = (h ^ t.h) * fnvPrime
		shape = (shape ^ t.shape) * fnvPrime
		nums += t.nums
		sc.simToken(t.h, j-i)
		i = j
	}
	return h, shape, nums
}

// Byte classes, looked up once per byte on the hot path.

var refByteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\r\v\f") {
		t[c] = clSpace
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clAlnum | clDigit
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clAlnum
		t[c-'a'+'A'] = clAlnum
		if c <= 'f' {
			t[c] |= clHex
			t[c-'a'+'A'] |= clHex
		}
	}
	for _, c := range []byte("-.:_") {
		t[c] = clSep
	}
	return t
}()

func refIsSpaceByte(c byte) bool { return refByteClass[c]&clSpace != 0 }

func refTrimSpace(s []byte) []byte {
	for len(s) > 0 && refIsSpaceByte(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && refIsSpaceByte(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// simToken adds a token hash to the SimHash: every token of the first
// simSampleBytes of text, then one in two up to simFullBytes, then one in
// eight (chosen by hash, so the sample is the same for the same text). The per-bit counts are kept as
// bit-sliced counters (sim[k] holds bit k of all 64 counts), so adding a
// token costs a few word operations, not 64.
func (sc *refCanonScan) simToken(th uint64, n int) {
	sc.text += n
	if sc.text > simFullBytes && th&7 != 0 || sc.text > simSampleBytes && th&1 != 0 {
		return
	}
	sc.tokens++
	carry := th
	for k := 0; carry != 0 && k < len(sc.sim); k++ {
		carry, sc.sim[k] = sc.sim[k]&carry, sc.sim[k]^carry
	}
}

// mergeSim adds the token counts of a nested scan.
func (sc *refCanonScan) mergeSim(in *refCanonScan) {
	sc.text += in.text
	sc.tokens += in.tokens
	var carry uint64
	for k := range sc.sim {
		a, b := sc.sim[k], in.sim[k]
		sc.sim[k] = a ^ b ^ carry
		carry = a&b | carry&(a^b)
	}
}

// simHash returns the SimHash: bit b is set when more than half of the
// tokens had it.
func (sc *refCanonScan) simHash() uint64 {
	var h uint64
	for b := 0; b < 64; b++ {
		ones := 0
		for k := range sc.sim {
			ones |= int(sc.sim[k]>>uint(b)&1) << uint(k)
		}
		if 2*ones > sc.tokens {
			h |= 1 << uint(b)
		}
	}
	return h
}

// refNearDup reports whether two SimHashes are near-duplicates.
func refNearDup(a, b uint64) bool {
	return a != 0 && b != 0 && bits.OnesCount64(a^b) <= nearDupBits
}

// refTok hashes one token two ways: h with volatile parts masked, shape with
// every number masked too; nums sums the numbers h kept (short integers),
// so that a counter ("attempt 2", "attempt 3") can be told from other
// changes.
type refTok struct {
	h, shape uint64
	nums     int64
}

func (t *refTok) byte1(c byte) {
	t.h = fnvByte(t.h, c)
	t.shape = fnvByte(t.shape, c)
}

func (t *refTok) bytes(b []byte) {
	t.h = fnvBytes(t.h, b)
	t.shape = fnvBytes(t.shape, b)
}

// maskToken hashes one whitespace-free token with its volatile parts
// replaced by '#': a timestamp or clock time, a hex id or UUID (8 or more
// hex digits, one of them a decimal digit), a run of maskDigits or more
// digits (epochs, long ids), a number followed by a duration unit ("2.31s",
// "150ms"). Shorter numbers (line numbers, counts, step numbers) are kept:
// they are information.
func (t *refTok) maskToken(w []byte) {
	for i := 0; i < len(w); {
		c := w[i]
		if refByteClass[c]&clAlnum == 0 {
			t.byte1(c)
			i++
			continue
		}
		// A word: alphanumerics with inner '-', '.', ':', '_' (ids,
		// versions, times, decimals).
		j, digit := i, false
		for j < len(w) {
			k := refByteClass[w[j]]
			if k&clAlnum != 0 {
				digit = digit || k&clDigit != 0
				j++
				continue
			}
			if k&clSep != 0 && j+1 < len(w) && refByteClass[w[j+1]]&clAlnum != 0 {
				j++
				continue
			}
			break
		}
		if digit {
			t.maskWord(w[i:j])
		} else {
			// No digit, nothing to mask: hash the word once.
			wh := refWordHash(w[i:j])
			t.h = (t.h ^ wh) * fnvPrime
			t.shape = (t.shape ^ wh) * fnvPrime
		}
		i = j
	}
}

// refWordHash hashes a word eight bytes at a time.
func refWordHash(b []byte) uint64 {
	h := uint64(len(b)) * 0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = refMix64(h ^ binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail uint64
	for k, c := range b {
		tail |= uint64(c) << (8 * uint(k))
	}
	return refMix64(h ^ tail)
}

func refIsAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func refIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// maskWord hashes one word, masking it whole when it is a timestamp, a hex
// id or a UUID, else masking its long digit runs and durations.
func (t *refTok) maskWord(w []byte) {
	digits, hexOnly, seps, hexDigits := 0, true, 0, 0
	for _, c := range w {
		k := refByteClass[c]
		switch {
		case k&clDigit != 0:
			digits++
			hexDigits++
		case k&clHex != 0:
			hexDigits++
		case k&clSep != 0:
			seps++
		default:
			hexOnly = false
		}
	}
	// Timestamps and clock times: digits and separators only, at least 6
	// digits and a separator ("2026-11-23", "12:48:26", "2026-11-23T12:48:26.5Z").
	if digits >= 6 && seps > 0 && refTimeLike(w) || hexOnly && digits > 0 && hexDigits >= 8 {
		t.byte1('#')
		return
	}
	for i := 0; i < len(w); {
		c := w[i]
		if c == '-' || c == '_' || c == '.' {
			t.byte1(c)
			i++
			// A separated part of a longer id ("chatcmpl-9f8e7d6c5b").
			if k := refHexPart(w[i:]); k > 0 {
				t.byte1('#')
				i += k
			}
			continue
		}
		if !refIsDigit(c) {
			// A run of letters (and ':'): hashed at once.
			j := i + 1
			for j < len(w) && refByteClass[w[j]]&clDigit == 0 && w[j] != '-' && w[j] != '_' && w[j] != '.' {
				j++
			}
			wh := refWordHash(w[i:j])
			t.h = (t.h ^ wh) * fnvPrime
			t.shape = (t.shape ^ wh) * fnvPrime
			i = j
			continue
		}
		j := i
		for j < len(w) && refIsDigit(w[j]) {
			j++
		}
		n := j - i
		dec := false
		if j+1 < len(w) && w[j] == '.' && refIsDigit(w[j+1]) { // a decimal
			dec = true
			j++
			for j < len(w) && refIsDigit(w[j]) {
				j++
			}
		}
		if u := refUnitLen(w[j:]); u > 0 {
			t.byte1('#')
			t.bytes(w[j : j+u])
			i = j + u
			continue
		}
		if n >= maskDigits {
			t.byte1('#')
		} else {
			t.h = fnvBytes(t.h, w[i:j])
			t.shape = fnvByte(t.shape, '#')
			if !dec {
				v := int64(0)
				for _, d := range w[i:j] {
					v = v*10 + int64(d-'0')
				}
				t.nums += v
			}
		}
		i = j
	}
}

// refTimeLike: a date ("2026-11-23", with a time after it) or a clock time
// ("12:48:26", "12:48:26.5"): digits and '-', ':', '.', 'T', 'Z' only, and
// either four digits then '-', or two-digit groups joined by ':'. A line
// range ("287:295") is not a time.
func refTimeLike(w []byte) bool {
	for _, c := range w {
		if !refIsDigit(c) && c != '-' && c != ':' && c != '.' && c != 'T' && c != 'Z' {
			return false
		}
	}
	if len(w) >= 5 && refIsDigit(w[0]) && refIsDigit(w[1]) && refIsDigit(w[2]) && refIsDigit(w[3]) && w[4] == '-' {
		return true
	}
	colons := 0
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && refIsDigit(w[j]) {
			j++
		}
		if j-i != 2 {
			return false
		}
		if j == len(w) || w[j] == '.' || w[j] == 'Z' {
			return colons >= 1
		}
		if w[j] != ':' {
			return false
		}
		colons++
		i = j + 1
	}
	return false
}

// refHexPart returns the length of a hex id (8+ hex digits, one a decimal
// digit) at the start of w, ending at a separator or the end, or 0.
func refHexPart(w []byte) int {
	n, digit := 0, false
	for n < len(w) && (refIsDigit(w[n]) || w[n] >= 'a' && w[n] <= 'f' || w[n] >= 'A' && w[n] <= 'F') {
		digit = digit || refIsDigit(w[n])
		n++
	}
	if n < 8 || !digit || n < len(w) && refIsAlnum(w[n]) {
		return 0
	}
	return n
}

// refUnitLen returns the length of a duration unit at the start of w that
// ends the word ("s", "ms", "us", "ns", "m", "h", "sec", "secs", "min",
// "mins"), or 0.
func refUnitLen(w []byte) int {
	n := 0
	for n < len(w) && (w[n] >= 'a' && w[n] <= 'z' || w[n] >= 'A' && w[n] <= 'Z') {
		n++
	}
	if n == 0 || n < len(w) && refIsAlnum(w[n]) {
		return 0
	}
	switch string(w[:n]) {
	case "s", "ms", "us", "ns", "m", "h", "sec", "secs", "min", "mins":
		return n
	}
	return 0
}

// refCommentaryKey: an object key whose value is what an agent says about its
// action, not the action (OpenHands compares actions without their
// thought). A change confined to these fields is no new action.
func refCommentaryKey(k []byte) bool {
	switch string(k) {
	case "thought", "thoughts", "thinking", "reasoning", "reason", "rationale", "why",
		"explanation", "comment", "commentary", "analysis", "reflection":
		return true
	}
	return false
}
