package detect

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

// The notion of "the same result", with zero options: a result is reduced to a sum of (path, value) leaf hashes,
// so that
//
//   - object key order does not matter (a leaf is named by its path);
//   - strings compare with whitespace runs collapsed and volatile tokens
//     (UUIDs, hex ids, long digit runs, timestamps, durations) masked;
//   - a string holding JSON (tool arguments) is compared as that JSON;
//   - an array of strings is a set (failing test names in another order);
//   - other arrays keep their order.
//
// It also returns the numeric leaves outside arrays (candidates for the
// volatile fields the State learns per node: ids, epochs, counters; string
// ids are masked as tokens already). The
// scanner reads the payload once and does not allocate unless a string
// holds escapes or JSON.

// maskIDDigits is the shortest digit run masked as an id: a 7-digit
// order or record id names the entity a call is about, so only epochs (10
// digits, 13 in milliseconds) and longer ids are masked; counts, ports,
// line numbers and step numbers stay.
const maskIDDigits = 10

// Bounds of one canonical reading.
const (
	maxFields      = 16      // volatile-field candidates kept per result
	maxFieldText   = 64      // longest string leaf that can be a volatile field
	maxDepth       = 64      // deeper JSON is hashed as raw bytes
	maxEmbedLength = 1 << 20 // longest string parsed as embedded JSON
)

// canonical is one result read canonically.
type canonical struct {
	sum    uint64 // the result's hash: the sum of its leaf contributions
	shape  uint64 // the same with every number masked
	nums   int64  // the sum of the numbers the hash kept (short integers)
	action uint64 // the hash without commentary fields and measurements, 0: none
	fields [maxFields]Field
	nf     int
}

// canonScan reads one payload.
type canonScan struct {
	b []byte
	i int
	// The result's volatile-field candidates, kept here rather than
	// through a pointer to the canonical so that neither escapes to the
	// heap.
	fields [maxFields]Field
	nf     int
	buf    []byte  // decoded keys, and strings that may hold JSON
	pooled *[]byte // buf's holder when it came from decodeBufs
	depth  int
	nums   int64
	comm   uint64 // what commentary fields and measurements add to the hash
	inComm bool
	// talk is what the words beside a response's tool calls add to the
	// hash (responses.go), calls how many tool calls the payload holds.
	talk     uint64
	echo     uint64 // what a response's echo of its request and transport adds
	calls    int
	finished bool // the payload states why the model stopped: a response
	s4       scratch4
}

// mix64 is SplitMix64's finaliser: a bijection that spreads every input
// bit, so that sums of mixed leaves do not cancel.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// leaf is the contribution of a value hash v at path.
func leaf(path, v uint64) uint64 {
	return mix64(path*0x9e3779b97f4a7c15 ^ v)
}

// Value kinds, mixed into value hashes so that 1 and "1" differ.
const (
	kindNull uint64 = iota + 1
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
	kindRaw
)

// hp is a value's contribution two ways: v (the result's hash) and s (its
// shape, every number masked).
type hp struct{ v, s uint64 }

func leaf2(path, v, s uint64) hp { return hp{leaf(path, v), leaf(path, s)} }

func (x *hp) add(y hp) { x.v += y.v; x.s += y.s }

// readCanonical reads body (trimmed, non-empty) into c. Invalid JSON is
// hashed as raw bytes.
func readCanonical(body []byte, c *canonical) {
	sc := canonScan{b: body, fields: c.fields, nf: c.nf}
	x, ok := sc.value(fnvOffset, true)
	sc.release()
	sc.skipSpace()
	if !ok || sc.i != len(sc.b) {
		h := leaf(fnvOffset, fnvBytes(fnvOffset^kindRaw, body))
		*c = canonical{sum: h, shape: h}
		return
	}
	c.sum, c.shape, c.nums = x.v, x.s, sc.nums
	c.fields, c.nf = sc.fields, sc.nf
	if strip := sc.stripped(); strip != 0 {
		c.action = nonZero(x.v - strip)
	}
}

// decodeBufs keeps the buffers strings that may hold JSON (tool
// arguments) are decoded into, across results: a result that holds such
// strings would otherwise allocate one buffer each time it is read. What
// a buffer held never reaches a value: it is written before it is read.
var decodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer kept in decodeBufs.
const maxPooledBuf = 1 << 20

// grow makes sc.buf's capacity at least n, from decodeBufs when it can.
func (sc *canonScan) grow(n int) {
	if cap(sc.buf) >= n {
		return
	}
	if sc.pooled == nil {
		sc.pooled = decodeBufs.Get().(*[]byte)
	}
	if cap(*sc.pooled) < n {
		*sc.pooled = make([]byte, 0, max(n, 1<<10))
	}
	sc.buf = (*sc.pooled)[:0]
}

// release returns sc.buf to decodeBufs once the scan is done with it.
func (sc *canonScan) release() {
	if sc.pooled == nil {
		return
	}
	if cap(*sc.pooled) <= maxPooledBuf {
		decodeBufs.Put(sc.pooled)
	}
	sc.pooled, sc.buf = nil, nil
}

func (sc *canonScan) skipSpace() {
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
func (sc *canonScan) value(path uint64, top bool) (hp, bool) {
	sc.skipSpace()
	if sc.i >= len(sc.b) {
		return hp{}, false
	}
	switch c := sc.b[sc.i]; {
	case c == '{':
		return sc.object(path, top)
	case c == '[':
		return sc.array(path)
	case c == '"':
		return sc.string4(path, top)
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
			return hp{}, false
		}
		h := fnvString(fnvOffset^kind, w)
		return leaf2(path, h, h), true
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
		if digits := len(num); integer && (digits >= maskIDDigits+1 || digits == maskIDDigits && num[0] != '-') {
			// An epoch or a long id, as in text.
			h = fnvByte(fnvOffset^kindNumber, '#')
		}
		shape := fnvOffset ^ kindNumber // the shape masks every number
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
			if !sc.inComm {
				// Only what the action compares is summed: a
				// measurement of the call counts nothing.
				sc.nums += v
			}
		}
		x := leaf2(path, h, shape)
		if !sc.inComm && top {
			sc.addField(path, x.v, numValue(num))
		}
		return x, true
	}
	return hp{}, false
}

func (sc *canonScan) addField(path, s uint64, v float64) {
	sc.addFolded(Field{Path: uint32(path) ^ uint32(path>>32), Sum: s, Num: v})
}

// numValue reads a JSON number closely enough to order it: sign, digits
// and a fraction; an exponent scales it. It never fails (0 for nonsense).
func numValue(b []byte) float64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, scale, frac := 0.0, 1.0, false
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case isDigit(c):
			if frac {
				scale /= 10
				v += float64(c-'0') * scale
			} else {
				v = v*10 + float64(c-'0')
			}
		case c == '.':
			frac = true
		default:
			goto exp
		}
	}
exp:
	if i+1 < len(b) && (b[i] == 'e' || b[i] == 'E') {
		e, eneg := 0, false
		for _, c := range b[i+1:] {
			switch {
			case c == '-':
				eneg = true
			case isDigit(c) && e < 400:
				e = e*10 + int(c-'0')
			}
		}
		for ; e > 0; e-- {
			if eneg {
				v /= 10
			} else {
				v *= 10
			}
		}
	}
	if neg {
		v = -v
	}
	return v
}

func (sc *canonScan) addFolded(f Field) {
	if sc.nf < maxFields {
		sc.fields[sc.nf] = f
		sc.nf++
	}
}

func (sc *canonScan) object(path uint64, top bool) (hp, bool) {
	if sc.depth++; sc.depth > maxDepth {
		return hp{}, false
	}
	defer func() { sc.depth-- }()
	sc.i++ // {
	sum := leaf2(path, kindObject, kindObject)
	sc.skipSpace()
	if sc.i < len(sc.b) && sc.b[sc.i] == '}' {
		sc.i++
		return sum, true
	}
	var r5 response5 // the reading of a response part (responses.go)
	if !sc.inComm {
		r5 = sc.openPart()
	}
	for {
		sc.skipSpace()
		if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
			return hp{}, false
		}
		key, ok := sc.str()
		if !ok {
			return hp{}, false
		}
		kp := fnvBytes(fnvByte(path, '.'), key)
		sc.skipSpace()
		if sc.i >= len(sc.b) || sc.b[sc.i] != ':' {
			return hp{}, false
		}
		sc.i++
		comm := !sc.inComm && (commentaryKey(key) || measurementKey(key) || callKey(key) || metaKey(key))
		var role keyRole
		if !sc.inComm {
			role = sc.readKey(key, &r5)
		}
		if comm {
			sc.inComm = true
		}
		c0, t0, n0, f0 := sc.comm, sc.talk, sc.calls, sc.finished
		v, ok := sc.value(kp, top)
		if comm {
			sc.inComm = false
			sc.comm += v.v
		}
		switch role {
		case roleTalk:
			// The words, less what the reader already set aside in them.
			sc.talk = t0 + v.v - (sc.comm - c0)
		case roleEcho:
			// All of it, as one: the calls and finish reasons a
			// request echoes are the conversation's, not this
			// response's.
			sc.comm, sc.talk, sc.calls, sc.finished = c0, t0, n0, f0
			sc.echo += v.v
		}
		if !ok {
			return hp{}, false
		}
		sum.add(v)
		sc.skipSpace()
		if sc.i >= len(sc.b) {
			return hp{}, false
		}
		switch sc.b[sc.i] {
		case ',':
			sc.i++
		case '}':
			sc.i++
			if r5.commentary {
				sc.closeCommentary(&r5, sum.v)
			}
			return sum, true
		default:
			return hp{}, false
		}
	}
}

// array hashes its elements at one wildcard path: an array of strings as
// a set (order ignored), any other array as a sequence.
func (sc *canonScan) array(path uint64) (hp, bool) {
	if sc.depth++; sc.depth > maxDepth {
		return hp{}, false
	}
	defer func() { sc.depth-- }()
	sc.i++ // [
	elem := fnvByte(path, '*')
	var set, seq hp
	strs, n := true, uint64(0)
	var a5 array5 // commentary and words, element by element (responses.go)
	v5 := !sc.inComm
	if v5 {
		a5.open(sc)
	}
	sc.skipSpace()
	if sc.i < len(sc.b) && sc.b[sc.i] == ']' {
		sc.i++
		return leaf2(path, kindArray, kindArray), true
	}
	for {
		sc.skipSpace()
		strs = strs && sc.i < len(sc.b) && sc.b[sc.i] == '"'
		if v5 {
			a5.elemStart(sc)
		}
		v, ok := sc.value(elem, false)
		if !ok {
			return hp{}, false
		}
		n++
		set.add(v)
		seq.add(hp{mix64(v.v + n*0x9e3779b97f4a7c15), mix64(v.s + n*0x9e3779b97f4a7c15)})
		if v5 {
			a5.elemEnd(sc, v.v, n)
		}
		sc.skipSpace()
		if sc.i >= len(sc.b) {
			return hp{}, false
		}
		switch sc.b[sc.i] {
		case ',':
			sc.i++
		case ']':
			sc.i++
			x := leaf2(path, kindArray, kindArray)
			if strs {
				x.add(set)
			} else {
				x.add(seq)
				if v5 {
					a5.close(sc, seq.v)
				}
			}
			return x, true
		default:
			return hp{}, false
		}
	}
}

// strRaw reads a JSON string at sc.i and returns its content as written
// (escapes undecoded) and whether it holds escapes. It checks the escapes
// as it goes: a backslash ends neither the input nor the string's last
// byte, and \u is followed by four hex digits.
func (sc *canonScan) strRaw() (raw []byte, esc, ok bool) {
	sc.i++ // "
	start, i, q := sc.i, sc.i, -1
	for {
		if q < i {
			// The next quote; an escaped one moves the search on. Each
			// byte is searched once, however many escapes the string has.
			k := bytes.IndexByte(sc.b[i:], '"')
			if k < 0 {
				return nil, false, false
			}
			q = i + k
		}
		e := bytes.IndexByte(sc.b[i:q], '\\')
		if e < 0 {
			sc.i = q + 1
			return sc.b[start:q], esc, true
		}
		esc = true
		i += e
		if i+1 >= len(sc.b) {
			return nil, false, false
		}
		if sc.b[i+1] != 'u' {
			i += 2
			continue
		}
		if i+6 > len(sc.b) {
			return nil, false, false
		}
		if _, ok := hex4(sc.b[i+2 : i+6]); !ok {
			return nil, false, false
		}
		i += 6
	}
}

// str reads a JSON string at sc.i and returns its content, decoded (into
// sc.buf when it holds escapes).
func (sc *canonScan) str() ([]byte, bool) {
	raw, esc, ok := sc.strRaw()
	if !ok || !esc {
		return raw, ok
	}
	sc.buf = unescape(sc.buf[:0], raw)
	return sc.buf, true
}

// escape decodes the escape at the start of raw (a backslash and at least
// one byte, as strRaw checked them). A \u escape stands for the rune r
// (u is true; a surrogate pair is one escape); any other for the byte b,
// the escaped byte itself when it is not one of n, t, r, b, f. n is the
// escape's length in raw.
func escape(raw []byte) (b byte, r rune, u bool, n int) {
	switch e := raw[1]; e {
	case 'n':
		return '\n', 0, false, 2
	case 't':
		return '\t', 0, false, 2
	case 'r':
		return '\r', 0, false, 2
	case 'b', 'f':
		return ' ', 0, false, 2
	case 'u':
		if len(raw) < 6 {
			return 0, utf8.RuneError, true, len(raw)
		}
		r, _ = hex4(raw[2:6])
		if r >= 0xd800 && r < 0xdc00 && len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' {
			if lo, ok := hex4(raw[8:12]); ok && lo >= 0xdc00 && lo < 0xe000 {
				return 0, 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), true, 12
			}
		}
		return 0, r, true, 6
	default: // " \ / and any other byte
		return e, 0, false, 2
	}
}

// escapedSpace returns the length of the escape at the start of raw when
// it stands for whitespace, else 0. It is read at every escaped newline of
// a tool's output: all but \u escapes are answered by a table.
func escapedSpace(raw []byte) int {
	if e := raw[1]; e != 'u' {
		return int(escapedSpaces[e])
	}
	return escapedSpaceU(raw)
}

// escapedSpaces holds, for each byte after a backslash but 'u', the
// escape's length when it stands for whitespace.
var escapedSpaces = func() (t [256]uint8) {
	for e := range 256 {
		if e == 'u' {
			continue
		}
		if b, _, _, n := escape([]byte{'\\', byte(e)}); byteClass[b]&clSpace != 0 {
			t[e] = uint8(n)
		}
	}
	return t
}()

// escapedSpaceU is escapedSpace for a \u escape.
func escapedSpaceU(raw []byte) int {
	b, r, u, n := escape(raw)
	if u {
		if r >= utf8.RuneSelf {
			return 0
		}
		b = byte(r)
	}
	if byteClass[b]&clSpace != 0 {
		return n
	}
	return 0
}

// unescape appends the decoded content of raw (checked by strRaw, or a
// whole-escape part of it) to dst.
func unescape(dst, raw []byte) []byte {
	for {
		e := bytes.IndexByte(raw, '\\')
		if e < 0 || e+1 >= len(raw) {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:e]...)
		b, r, u, n := escape(raw[e:])
		if u {
			dst = utf8.AppendRune(dst, r)
		} else {
			dst = append(dst, b)
		}
		raw = raw[e+n:]
	}
}

func hex4(b []byte) (rune, bool) {
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
const embedded = 0x5bd1e9955bd1e995

// embeddedJSON reads a string's decoded content s as JSON when it holds
// an object or an array (tool arguments), as a nested scan.
func (sc *canonScan) embeddedJSON(path uint64, s []byte, top bool) (hp, bool) {
	t := trimSpace(s)
	if len(t) < 2 || len(t) > maxEmbedLength || !(t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		return hp{}, false
	}
	// The nested scan has its own buffer: t may live in sc.buf.
	// What the string stands in is read as the same JSON would be:
	// inside commentary, all of it is.
	inner := canonScan{b: t, depth: sc.depth, inComm: sc.inComm}
	x, ok := inner.value(path, top)
	inner.release()
	if !ok {
		return hp{}, false
	}
	if inner.skipSpace(); inner.i != len(inner.b) {
		return hp{}, false
	}
	for _, f := range inner.fields[:inner.nf] {
		sc.addFolded(f)
	}
	sc.nums += inner.nums
	// Embedded JSON is not the same as the object itself.
	sc.comm += inner.comm
	sc.talk += inner.talk
	sc.echo += inner.echo
	sc.calls += inner.calls
	sc.finished = sc.finished || inner.finished
	return hp{x.v + embedded, x.s + embedded}, true
}

// Eight bytes at once: constants with one value in every byte lane.
const (
	lanes1   = 0x0101010101010101
	lanesTop = 0x8080808080808080
	lanes7   = 0x7f7f7f7f7f7f7f7f
)

// stopLanes flags the bytes of x below 0x21 (whitespace and other
// controls) and the backslashes. A flag above the lowest one may be wrong
// (a borrow), never the lowest, so only the lowest is read.
func stopLanes(x uint64) uint64 {
	b := x ^ 0x5c*lanes1
	return ((x-0x21*lanes1)&^x | (b-lanes1)&^b) & lanesTop
}

// digitLanes flags the ASCII digits of x, exactly per byte.
func digitLanes(x uint64) uint64 {
	m := x & lanes7
	return (m + (0x80-0x30)*lanes1) &^ (m + (0x7f-0x39)*lanes1) &^ x & lanesTop
}

// hexLanes flags the hex digits of x (0-9, a-f, A-F).
func hexLanes(x uint64) uint64 {
	l := x&lanes7 | 0x20*lanes1 // letters folded to lower case
	letter := (l + (0x80-'a')*lanes1) &^ (l + (0x7f-'f')*lanes1)
	return (digitLanes(x) | letter&^x&lanesTop)
}

// Byte classes, looked up once per byte on the hot path.
const (
	clSpace uint8 = 1 << iota
	clAlnum
	clDigit
	clSep    // '-', '.', ':', '_': inside a word when followed by an alphanumeric
	clHex    // a-f, A-F
	clLetter // the other letters, g-z, G-Z
	clEsc    // '\\': an escape in a string as written
	clDot    // '-', '.', '_': where maskToken splits a word's runs
)

var byteClass = func() (t [256]uint8) {
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
		} else {
			t[c] |= clLetter
			t[c-'a'+'A'] |= clLetter
		}
	}
	for _, c := range []byte("-.:_") {
		t[c] = clSep
	}
	for _, c := range []byte("-._") {
		t[c] |= clDot
	}
	t['\\'] = clEsc
	return t
}()

func isSpaceByte(c byte) bool { return byteClass[c]&clSpace != 0 }

func trimSpace(s []byte) []byte {
	for len(s) > 0 && isSpaceByte(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpaceByte(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// maskToken hashes one whitespace-free token two ways: h with its volatile
// parts replaced by '#', shape with every number masked too; nums sums the
// numbers h kept (short integers), so that a counter ("attempt 2",
// "attempt 3") can be told from other changes. Volatile parts are a
// timestamp or clock time, a hex id or UUID (8 or more hex digits, one of
// them a decimal digit), a run of maskIDDigits or more digits (epochs, long
// ids), a number followed by a duration unit ("2.31s", "150ms"). Shorter
// numbers (line numbers, counts, step numbers) are kept: they are
// information.
//
// The token's words (alphanumerics with inner '-', '.', ':', '_': ids,
// versions, times, decimals) are read in one pass: a word's runs are
// hashed as they are read, and when the word turns out to be masked whole
// (a timestamp, an id) or to hold no digit (hashed whole, as a plain
// word), its hashes are redone from where it began. The hashes are passed
// by value, not through a struct pointer, so that they stay in registers.
func maskToken(w []byte) (h, shape uint64, nums int64) {
	h, shape = fnvOffset, fnvOffset
	md := maskIDDigits
	for i := 0; i < len(w); {
		c := w[i]
		if byteClass[c]&clAlnum == 0 {
			h, shape = fnvByte(h, c), fnvByte(shape, c)
			i++
			continue
		}
		if k := byteClass[c]; k&clDigit != 0 {
			// A number alone (a count, a line number, an epoch), the
			// commonest word with digits: hashed at once.
			j := i + 1
			for j < len(w) && isDigit(w[j]) {
				j++
			}
			if j == len(w) || byteClass[w[j]]&clAlnum == 0 && (byteClass[w[j]]&clSep == 0 || j+1 == len(w) || byteClass[w[j+1]]&clAlnum == 0) {
				shape = fnvByte(shape, '#')
				if j-i >= md {
					h = fnvByte(h, '#')
				} else {
					h = fnvBytes(h, w[i:j])
					v := int64(0)
					for _, d := range w[i:j] {
						v = v*10 + int64(d-'0')
					}
					nums += v
				}
				i = j
				continue
			}
		}
		start, h0, s0, n0 := i, h, shape, nums
		digits, seps, dots := 0, 0, 0 // of the word; seps counts '-', '.', ':', '_'
		for {
			// i is at an alphanumeric or at an inner separator.
			c := w[i]
			k := byteClass[c]
			switch {
			case k&clDot != 0: // '-', '.', '_'
				seps++
				dots++
				h, shape = fnvByte(h, c), fnvByte(shape, c)
				i++
				// A separated part of a longer id ("chatcmpl-9f8e7d6c5b").
				// hexPart needs eight hex digits: checked here, eight
				// bytes at once, the call is dearer.
				if len(w)-i >= 8 && hexLanes(binary.LittleEndian.Uint64(w[i:])) == lanesTop {
					if n, d := hexPart(w[i:]); n > 0 {
						h, shape = fnvByte(h, '#'), fnvByte(shape, '#')
						i += n
						digits += d
					}
				}
			case k&clDigit == 0:
				// A run of letters (and inner ':'): hashed at once.
				if c == ':' {
					seps++
				}
				j := i + 1
				for j < len(w) {
					k := byteClass[w[j]]
					if k&(clDigit|clDot) != 0 {
						break
					}
					if k&clAlnum == 0 {
						if w[j] != ':' || j+1 == len(w) || byteClass[w[j+1]]&clAlnum == 0 {
							break
						}
						seps++
					}
					j++
				}
				wh := wordHash(w[i:j])
				h = (h ^ wh) * fnvPrime
				shape = (shape ^ wh) * fnvPrime
				i = j
			default:
				// A number: masked with its unit when a duration unit
				// follows, masked when it has maskIDDigits or more digits,
				// else kept in h (and, an integer, added to nums).
				j := i
				for j < len(w) && isDigit(w[j]) {
					j++
				}
				n := j - i
				dec := false
				if j+1 < len(w) && w[j] == '.' && isDigit(w[j+1]) { // a decimal
					dec = true
					seps++
					j++
					for j < len(w) && isDigit(w[j]) {
						j++
					}
					digits += j - i - 1
				} else {
					digits += n
				}
				// A unit starts with a letter: checked here, the call is
				// dearer.
				if u := 0; j < len(w) && byteClass[w[j]]&(clHex|clLetter) != 0 {
					if u = unitLen(w[j:]); u > 0 {
						h, shape = fnvByte(h, '#'), fnvByte(shape, '#')
						h, shape = fnvBytes(h, w[j:j+u]), fnvBytes(shape, w[j:j+u])
						i = j + u
						break
					}
				}
				if n >= md {
					h, shape = fnvByte(h, '#'), fnvByte(shape, '#')
				} else {
					h = fnvBytes(h, w[i:j])
					shape = fnvByte(shape, '#')
					if !dec {
						v := int64(0)
						for _, d := range w[i:j] {
							v = v*10 + int64(d-'0')
						}
						nums += v
					}
				}
				i = j
			}
			// The word goes on at an alphanumeric, or at a separator
			// followed by one.
			if i == len(w) {
				break
			}
			if k := byteClass[w[i]]; k&clAlnum == 0 && (k&clSep == 0 || i+1 == len(w) || byteClass[w[i+1]]&clAlnum == 0) {
				break
			}
		}
		word := w[start:i]
		switch {
		case digits == 0:
			// No digit, nothing to mask: the word hashes whole (the same
			// as its runs when it has one run).
			if dots > 0 {
				wh := wordHash(word)
				h, shape = (h0^wh)*fnvPrime, (s0^wh)*fnvPrime
			}
		case digits >= 6 && seps > 0 && timeLike(word) || len(word)-seps >= 8 && !hasLetter(word):
			// Timestamps and clock times: digits and separators only, at
			// least 6 digits and a separator ("2026-11-23", "12:48:26",
			// "2026-11-23T12:48:26.5Z"). Hex ids: hex digits (and
			// separators) only, 8 or more, one of them a decimal digit.
			h, shape, nums = fnvByte(h0, '#'), fnvByte(s0, '#'), n0
		case seps > 0 && len(word) >= 18 && generatedID(word):
			h, shape, nums = fnvByte(h0, '#'), fnvByte(s0, '#'), n0
		}
	}
	return h, shape, nums
}

// generatedID reports whether a word holds a provider's generated id: a
// lower-case prefix of at most 12 letters, '_' or '-', then 16 or more
// letters and digits with a digit, an upper-case and a lower-case letter
// (OpenAI's "chatcmpl-…" and "call_…", Anthropic's "msg_…" and
// "toolu_…"). The prefix is what tells an id from a CamelCase name with a
// version number ("MyHandlerClass2023Version"): the mix of letters and
// digits alone does not.
func generatedID(w []byte) bool {
	prefix := false // the part before was a lower-case prefix and a separator
	for i := 0; i < len(w); {
		j := i
		var digit, upper, lower bool
		for ; j < len(w) && isAlnum(w[j]); j++ {
			switch c := w[j]; {
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= 'A' && c <= 'Z':
				upper = true
			default:
				digit = true
			}
		}
		if prefix && j-i >= 16 && digit && upper && lower {
			return true
		}
		prefix = j < len(w) && (w[j] == '_' || w[j] == '-') && j-i >= 1 && j-i <= 12 && lower && !upper && !digit
		i = j + 1
	}
	return false
}

// unitWord: a duration unit, then only punctuation ("s", "ms,", "s)").
func unitWord(w []byte) bool {
	u := unitLen(w)
	return u > 0 && punctOnly(w[u:])
}

// punctOnly: no letter or digit in b.
func punctOnly(b []byte) bool {
	for _, c := range b {
		if isAlnum(c) {
			return false
		}
	}
	return true
}

// counterWord: a word that names a repetition ("attempt", "Retry",
// "try", "iteration", "round"), after which a number counts attempts.
func counterWord(w []byte) bool {
	// Every word is read: its length and first byte leave most at once.
	var cands []string
	switch len(w) {
	case 3:
		cands = []string{"try"}
	case 5:
		cands = []string{"retry", "round"}
	case 7:
		cands = []string{"attempt", "retries"}
	case 8:
		cands = []string{"attempts", "retrying"}
	case 9:
		cands = []string{"iteration"}
	default:
		return false
	}
	for _, c := range cands {
		if w[0]|0x20 == c[0] && suffixFold(w, c) {
			return true
		}
	}
	return false
}

// countToken: an optional '#', digits, then only punctuation ("3", "#3:",
// "4,").
func countToken(w []byte) bool {
	k := countDigits(w)
	return k > 0 && !(k == 1 && w[0] == '#') && punctOnly(w[k:])
}

// countDigits returns the length of w's leading '#' and digits.
func countDigits(w []byte) int {
	k := 0
	if k < len(w) && w[k] == '#' {
		k++
	}
	for k < len(w) && isDigit(w[k]) {
		k++
	}
	return k
}

// numberWord reports whether w is a plain number: digits, with at most one
// '.' between digits.
func numberWord(w []byte) bool {
	dot := false
	for k, c := range w {
		switch {
		case isDigit(c):
		case c == '.' && !dot && k > 0 && k+1 < len(w):
			dot = true
		default:
			return false
		}
	}
	return len(w) > 0
}

// hasLetter reports whether w holds a letter that is not a hex digit.
func hasLetter(w []byte) bool {
	for _, c := range w {
		if byteClass[c]&clLetter != 0 {
			return true
		}
	}
	return false
}

// wordHash hashes a word eight bytes at a time; the last one to seven
// bytes are read with overlapping loads, as the same little-endian word
// a byte-by-byte read would build.
func wordHash(b []byte) uint64 {
	h := uint64(len(b)) * 0x9e3779b97f4a7c15
	whole := b
	for len(b) >= 8 {
		h = mix64(h ^ binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail uint64
	switch n := len(b); {
	case n == 0:
	case len(whole) >= 8:
		tail = binary.LittleEndian.Uint64(whole[len(whole)-8:]) >> (8 * uint(8-n))
	case n >= 4:
		tail = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*uint(n-4))
	case n >= 2:
		tail = uint64(binary.LittleEndian.Uint16(b)) | uint64(binary.LittleEndian.Uint16(b[n-2:]))<<(8*uint(n-2))
	default:
		tail = uint64(b[0])
	}
	return mix64(h ^ tail)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// timeLike: a date ("2026-11-23", with a time after it) or a clock time
// ("12:48:26", "12:48:26.5"): digits and '-', ':', '.', 'T', 'Z' only, and
// either four digits then '-', or two-digit groups joined by ':'. A line
// range ("287:295") is not a time.
func timeLike(w []byte) bool {
	for _, c := range w {
		if !isDigit(c) && c != '-' && c != ':' && c != '.' && c != 'T' && c != 'Z' {
			return false
		}
	}
	if len(w) >= 5 && isDigit(w[0]) && isDigit(w[1]) && isDigit(w[2]) && isDigit(w[3]) && w[4] == '-' {
		return true
	}
	colons := 0
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && isDigit(w[j]) {
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

// hexPart returns the length of a hex id (8+ hex digits, one a decimal
// digit) at the start of w, ending at a separator or the end, and its
// number of decimal digits; or 0, 0.
func hexPart(w []byte) (n, digits int) {
	for n < len(w) && (isDigit(w[n]) || w[n] >= 'a' && w[n] <= 'f' || w[n] >= 'A' && w[n] <= 'F') {
		if isDigit(w[n]) {
			digits++
		}
		n++
	}
	if n < 8 || digits == 0 || n < len(w) && isAlnum(w[n]) {
		return 0, 0
	}
	return n, digits
}

// unitLen returns the length of a duration unit at the start of w that
// ends the word ("s", "ms", "us", "ns", "m", "h", "sec", "secs", "min",
// "mins"), or 0.
func unitLen(w []byte) int {
	n := 0
	for n < len(w) && (w[n] >= 'a' && w[n] <= 'z' || w[n] >= 'A' && w[n] <= 'Z') {
		n++
	}
	if n == 0 || n < len(w) && isAlnum(w[n]) {
		return 0
	}
	switch string(w[:n]) {
	case "s", "ms", "us", "ns", "m", "h", "sec", "secs", "min", "mins":
		return n
	}
	return 0
}

// measurementKey: an object key that names a measurement of the call
// itself, not of the work: how long it took, when it ran.
// Other non-integer numbers are kept (a score is information), so the
// key is the evidence.
func measurementKey(k []byte) bool {
	if len(k) < 3 {
		return false
	}
	// Every key is read: the last byte picks the few suffixes to try.
	var cands []string
	switch k[len(k)-1] | 0x20 {
	case 'e':
		cands = []string{"time"}
	case 'p':
		cands = []string{"timestamp"}
	case 'n':
		cands = []string{"duration"}
	case 'd':
		cands = []string{"elapsed"}
	case 'y':
		cands = []string{"latency"}
	case 'k':
		cands = []string{"took"}
	case 'c':
		cands = []string{"_sec"}
	case 's':
		cands = []string{"_ms", "_ns", "_us", "_secs", "seconds", "millis"}
	default:
		return false
	}
	for _, c := range cands {
		if suffixFold(k, c) {
			return true
		}
	}
	return false
}

// suffixFold reports whether k ends with the lower-case ASCII suffix,
// ignoring case.
func suffixFold(k []byte, suffix string) bool {
	if len(k) < len(suffix) {
		return false
	}
	k = k[len(k)-len(suffix):]
	for i := range len(suffix) {
		c := k[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != suffix[i] {
			return false
		}
	}
	return true
}

// commentaryKey: an object key whose value is what an agent says about its
// action, not the action (OpenHands compares actions without their
// thought). A change confined to these fields is no new action.
func commentaryKey(k []byte) bool {
	switch string(k) {
	case "thought", "thoughts", "thinking", "reasoning", "reason", "rationale", "why",
		"explanation", "comment", "commentary", "analysis", "reflection":
		return true
	}
	return false
}
