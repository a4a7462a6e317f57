package detect

import (
	"encoding/binary"
	"math/bits"
)

// The reading of strings. canonScan reads the JSON structure; a string
// is read in the same pass that finds its end: tokens are
// recognised, masked and hashed as their bytes are read, eight at a time,
// with no intermediate value, no second pass over the bytes and no
// allocation (a token that holds escapes is decoded into a buffer on the
// stack; a string that holds JSON is the one exception, decoded once and
// read as that JSON).
//
// A string's hash chains its tokens' hashes: a token is hashed whole
// (tokHash, eight bytes a step) when it holds no digit, else with its
// volatile parts replaced by '#' (maskToken4). The masking is maskToken's
// (canon.go: timestamps, clock times, UUIDs and hex ids, digit runs of 10
// or more, generated ids, durations, attempt counters), and three rules of
// this reader:
//
//   - a "step N of M" (or "step N/M") counter is masked: an agent that
//     rewrites its plan's step number each turn has not moved;
//   - a progress meter's line (one that shows a rate such as "3.2 MB/s"
//     or "5.1it/s", or curl's unknown time "--:--:--") is read as one
//     masked token: a transfer's speed and times measure the call;
//   - errors are read by the same tokens (ErrorHash): a provider's
//     request id is noise in an error as in a result.

// string4 reads the string at sc.i (its opening quote) and returns its
// contribution at path.
func (sc *canonScan) string4(path uint64, top bool) (hp, bool) {
	start := sc.i + 1
	if startsJSON(sc.b[start:]) {
		// Tool arguments: decoded and read as JSON when they parse.
		raw, esc, ok := sc.strRaw()
		if !ok {
			return hp{}, false
		}
		s := raw
		if esc {
			sc.grow(len(raw)) // decoding never lengthens
			sc.buf = unescape(sc.buf[:0], raw)
			s = sc.buf
		}
		if x, ok := sc.embeddedJSON(path, s, top); ok {
			return x, true
		}
		h, shape, nums, _, ok := text4(raw, false, true, &sc.s4)
		if !ok {
			return hp{}, false
		}
		if !sc.inComm {
			sc.nums += nums
		}
		return leaf2(path, h, shape), true
	}
	h, shape, nums, end, ok := text4(sc.b[start:], true, true, &sc.s4)
	if !ok {
		return hp{}, false
	}
	sc.i = start + end + 1
	if !sc.inComm {
		sc.nums += nums
	}
	return leaf2(path, h, shape), true
}

// startsJSON is mayHoldJSON for a string's content as written that has
// not been checked yet: b runs on past the string, and may end inside an
// escape.
func startsJSON(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case byteClass[c]&clSpace != 0:
			i++
		case c != '\\':
			return c == '{' || c == '['
		case i+1 >= len(b):
			return false
		default:
			if n := escapedSpace4(b[i:]); n > 0 {
				i += n
				continue
			}
			if b[i+1] != 'u' {
				return b[i+1] == '{' || b[i+1] == '['
			}
			if len(b)-i < 6 {
				return false
			}
			r, ok := hex4(b[i+2 : i+6])
			return ok && (r == '{' || r == '[')
		}
	}
	return false
}

// Hashes of what a masked stretch of text reads as.
var (
	meterHash = tokHash([]byte("#meter"))
	stepHash  = tokHash([]byte("#step"))
)

// text4 hashes the text s, with esc as written in JSON (escapes
// undecoded), up to its closing quote when quoted (a string inside the
// payload: end is the quote's index) or to its end: whitespace runs collapsed, tokens masked.
// It returns the hash, the shape (every number masked too) and the sum of
// the integers kept; ok is false on an unterminated string or a bad
// escape.
func text4(s []byte, quoted, esc bool, sc *scratch4) (h, shape uint64, nums int64, end int, ok bool) {
	h, shape = fnvOffset^kindString, fnvOffset^kindString
	tok, bufs := &sc.tok, &sc.bufs
	// The line so far (for the meter rule) and the token before (for the
	// unit, counter and step rules).
	lineH, lineS, lineN, meter := h, shape, nums, false
	var numH, numS, stepH, stepS uint64
	var numN, stepN int64
	afterNum, afterCount, afterStep := false, false, false
	stepState := 0 // 1: "step N" read, 2: "step N of" read
	i := 0
	for {
		// Whitespace, raw or escaped; a newline ends a line. The
		// commonest, one space before a word, is taken at once.
		nl := false
		if i+1 < len(s) && s[i] == ' ' && byteClass[s[i+1]]&(clSpace|clEsc) == 0 && s[i+1] != '"' {
			i++
		} else {
			for i < len(s) {
				c := s[i]
				if k := byteClass[c]; k&clSpace != 0 {
					nl = nl || c == '\n' || c == '\r'
					i++
					continue
				}
				if c != '\\' || !esc {
					break
				}
				if i+1 >= len(s) {
					return 0, 0, 0, 0, false
				}
				if e := s[i+1]; e == 'n' || e == 'r' {
					nl = true
					i += 2
					continue
				}
				if n := escapedSpace4(s[i:]); n > 0 {
					i += n
					continue
				}
				break
			}
			last := i >= len(s) || quoted && s[i] == '"'
			if nl || last {
				if meter {
					h, shape, nums = (lineH^meterHash)*fnvPrime, (lineS^meterHash)*fnvPrime, lineN
					meter = false
				}
				lineH, lineS, lineN = h, shape, nums
				afterNum, afterCount, afterStep, stepState = false, false, false, 0
			}
			if last {
				if quoted && i >= len(s) {
					return 0, 0, 0, 0, false
				}
				return h, shape, nums, i, true
			}
		}
		// A token: up to whitespace, a whitespace escape or the quote,
		// eight bytes at a time.
		start, digits, dec := i, uint64(0), false
		for {
			for i+8 <= len(s) {
				x := binary.LittleEndian.Uint64(s[i:])
				stop := stopLanes(x)
				if quoted {
					q := x ^ 0x22*lanes1
					stop |= (q - lanes1) &^ q & lanesTop
				}
				if stop == 0 {
					digits |= digitLanes(x)
					i += 8
					continue
				}
				k := bits.TrailingZeros64(stop) / 8
				digits |= digitLanes(x) & lowBytes[k]
				i += k
				break
			}
			if i+8 > len(s) {
				for i < len(s) {
					c := s[i]
					if byteClass[c]&(clSpace|clEsc) != 0 || quoted && c == '"' {
						break
					}
					if isDigit(c) {
						digits = 1
					}
					i++
				}
			}
			if i >= len(s) {
				break
			}
			c := s[i]
			if c == '"' && quoted || byteClass[c]&clSpace != 0 {
				break
			}
			if c != '\\' || !esc {
				i++ // a control byte that is not whitespace, or a backslash in plain text: content
				continue
			}
			if i+1 >= len(s) {
				return 0, 0, 0, 0, false
			}
			if e := s[i+1]; e == 'n' || e == 'r' || escapedSpace4(s[i:]) > 0 {
				break
			}
			n := escapeLen(s[i:])
			if n == 0 {
				return 0, 0, 0, 0, false
			}
			i += n
			dec = true
		}
		w := s[start:i]
		if dec {
			if len(w) > len(tok) {
				// A long token with escapes: hashed as written, which
				// is as stable and as rare.
				dec = false
			} else {
				w = unescape(tok[:0], w)
			}
			digits = 0
			for _, c := range w {
				if isDigit(c) {
					digits = 1
				}
			}
		}
		digit := digits != 0
		if len(w) >= minProviderID {
			if th, ok := providerID(w); ok {
				// A provider's generated id, with a digit or without.
				h, shape = (h^th)*fnvPrime, (shape^th)*fnvPrime
				afterNum, afterCount, afterStep, stepState = false, false, false, 0
				continue
			}
		}
		if !digit && !afterNum && !afterCount && !afterStep && stepState == 0 && !ruleStart[w[0]] {
			// The commonest token, a word no rule reads or waits for:
			// hashed as it is.
			th := tokHash(w)
			h = (h ^ th) * fnvPrime
			shape = (shape ^ th) * fnvPrime
			continue
		}
		if digit && !afterCount && !afterStep && stepState == 0 {
			// A token with a digit that no counter or step word waits
			// for: masked, and read as the number a unit may follow.
			th, ts, n := maskToken4(w, bufs)
			if !meter && (w[len(w)-1] == 's' || w[len(w)-1] == ']') && rateToken(w) {
				meter = true
			}
			if afterNum = numberWord(w); afterNum {
				numH, numS, numN = h, shape, n
			}
			nums += n
			h = (h ^ th) * fnvPrime
			shape = (shape ^ ts) * fnvPrime
			continue
		}
		var th, ts uint64
		var n int64
		if !digit {
			th = tokHash(w)
			ts = th
			if !meter && (afterNum || w[0] == '-') && meterWord(w, afterNum) {
				meter = true
			}
		} else {
			th, ts, n = maskToken4(w, bufs)
			if !meter && (w[len(w)-1] == 's' || w[len(w)-1] == ']') && rateToken(w) {
				meter = true
			}
		}
		switch {
		case afterCount && digit && countToken(w):
			// "retry 4", "attempt #3:": the number counts attempts.
			th = fnvBytes(fnvByte(fnvOffset, '#'), w[countDigits(w):])
			ts, n = th, 0
		case afterStep && digit && fractionToken(w):
			// "step 3/5": a plan's counter.
			th, ts, n = stepHash, stepHash, 0
		case afterStep && digit && countToken(w):
			stepH, stepS, stepN, stepState = h, shape, nums, 1
		case stepState == 1 && !digit && len(w) == 2 && w[0]|0x20 == 'o' && w[1]|0x20 == 'f':
			stepState = 2
		case stepState == 2 && digit && countToken(w):
			// "step 3 of 5": the whole counter is masked.
			h, shape, nums = stepH, stepS, stepN
			th, ts, n = stepHash, stepHash, 0
			stepState = 0
		default:
			stepState = 0
		}
		afterCount, afterStep = false, false
		if c0 := w[0] | 0x20; !digit && (c0 == 't' || c0 == 'r' || c0 == 'a' || c0 == 'i') {
			afterCount = counterWord(w)
		} else if !digit && c0 == 's' {
			afterStep = stepWord(w)
		}
		if afterNum && !digit && unitWord(w) {
			// A duration written with a space, masked with its number.
			th = fnvBytes(fnvByte(fnvOffset, '#'), w)
			ts = th
			h, shape, nums = numH, numS, nums-numN
			n = 0
			afterNum = false
		} else if afterNum = digit && numberWord(w); afterNum {
			numH, numS, numN = h, shape, n
		}
		nums += n
		h = (h ^ th) * fnvPrime
		shape = (shape ^ ts) * fnvPrime
	}
}

// ruleStart flags the first bytes of the words a rule of text4 reads
// without a number before them: a meter's "--:--:--", and the counter
// and step words ("try", "retry", "attempt", "iteration", "step", in
// either case).
var ruleStart = func() (t [256]bool) {
	for _, c := range []byte("-tTrRaAiIsS") {
		t[c] = true
	}
	return t
}()

// tokHash hashes a token: one of up to seven bytes is its bytes and its
// length as they are (the chain that joins a string's tokens multiplies
// them in, one bijection per token, and the leaf mixes the result); a
// longer one folds its eight-byte words with a multiplication and a
// rotation each, its last word read overlapping the one before.
func tokHash(b []byte) uint64 {
	n := len(b)
	if n < 8 {
		return load8(b) | uint64(n)<<56
	}
	h := uint64(n) * 0x9e3779b97f4a7c15
	w := b
	for len(w) >= 8 {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(w))*0xbf58476d1ce4e5b9, 29)
		w = w[8:]
	}
	if len(w) > 0 {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[n-8:]))*0x94d049bb133111eb, 29)
	}
	return h
}

// load8 reads up to eight bytes of b as a little-endian word, the bytes
// past b's end zero: short reads overlap rather than copy.
func load8(b []byte) uint64 {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*uint(n-4)&63)
	case n >= 2:
		return uint64(binary.LittleEndian.Uint16(b)) | uint64(binary.LittleEndian.Uint16(b[n-2:]))<<(8*uint(n-2)&63)
	case n == 1:
		return uint64(b[0])
	}
	return 0
}

// escapedSpace4 is escapedSpace for an escape that may be cut short.
func escapedSpace4(raw []byte) int {
	if raw[1] == 'u' && len(raw) < 6 {
		return 0
	}
	return escapedSpace(raw)
}

// escapeLen returns the length of the escape at the start of raw (a
// backslash and at least one byte), or 0 when it is malformed: a \u not
// followed by four hex digits.
func escapeLen(raw []byte) int {
	if raw[1] != 'u' {
		return 2
	}
	if len(raw) < 6 {
		return 0
	}
	if _, ok := hex4(raw[2:6]); !ok {
		return 0
	}
	return 6
}

// stepWord: "step" or "Step", after which "N of M" counts a plan's steps.
func stepWord(w []byte) bool {
	if len(w) == 5 && w[4] == ':' {
		w = w[:4]
	}
	return len(w) == 4 && w[0]|0x20 == 's' && w[1]|0x20 == 't' && w[2]|0x20 == 'e' && w[3]|0x20 == 'p'
}

// fractionToken: digits '/' digits, then only punctuation ("3/5", "3/5:").
func fractionToken(w []byte) bool {
	k := 0
	for k < len(w) && isDigit(w[k]) {
		k++
	}
	if k == 0 || k+1 >= len(w) || w[k] != '/' || !isDigit(w[k+1]) {
		return false
	}
	return countToken(w[k+1:])
}

// meterWord: a token without digits that only a progress meter prints:
// curl's unknown time ("--:--:--"), or a rate unit after a number
// ("MB/s", "it/s", "kB/s").
func meterWord(w []byte, afterNum bool) bool {
	if len(w) >= 8 && string(w[:8]) == "--:--:--" {
		return true
	}
	return afterNum && len(w) >= 3 && len(w) <= 8 && rateToken(w)
}

// rateToken: a token that ends (before punctuation) with "/s" after a
// letter or a digit: a transfer rate ("5.1it/s]", "12.3MB/s", "MiB/s").
func rateToken(w []byte) bool {
	j := len(w)
	for j > 0 && !isAlnum(w[j-1]) {
		j--
	}
	return j >= 3 && w[j-1] == 's' && w[j-2] == '/' && isAlnum(w[j-3])
}

// maskToken4 hashes a token that holds a digit: its words (alphanumeric
// runs with inner '-', '.', ':', '_') are written to a buffer, masked by
// maskToken's rules, the buffer is hashed
// eight bytes at a time. shape masks every number; nums sums the integers
// kept. A token longer than the buffer is hashed by maskToken.
func maskToken4(w []byte, bufs *maskBufs) (h, shape uint64, nums int64) {
	if len(w) > len(bufs.m) {
		return maskToken(w)
	}
	if h, shape, nums, ok := plainToken4(w); ok {
		return h, shape, nums
	}
	return maskToken4Slow(w, bufs)
}

// maskToken4Slow is maskToken4 word by word.
func maskToken4Slow(w []byte, bufs *maskBufs) (h, shape uint64, nums int64) {
	mb, sb := &bufs.m, &bufs.s
	m, o := 0, 0
	for i := 0; i < len(w); {
		c := w[i]
		if byteClass[c]&clAlnum == 0 {
			mb[m], sb[o] = c, c
			m, o, i = m+1, o+1, i+1
			continue
		}
		start, digits, seps, letters := i, 0, 0, false
		for i < len(w) {
			k := byteClass[w[i]]
			if k&clAlnum != 0 {
				if k&clDigit != 0 {
					digits++
				} else if k&clLetter != 0 {
					letters = true
				}
				i++
				continue
			}
			if k&clSep != 0 && i+1 < len(w) && byteClass[w[i+1]]&clAlnum != 0 {
				seps++
				i++
				continue
			}
			break
		}
		word := w[start:i]
		switch {
		case digits == 0:
			m = put(mb, m, word)
			o = put(sb, o, word)
			continue
		case digits >= 6 && seps > 0 && timeLike(word) || len(word)-seps >= 8 && !letters,
			seps > 0 && len(word) >= 18 && generatedID(word):
			// A timestamp, a clock time, a hex id or UUID, a
			// provider's generated id.
			mb[m], sb[o] = '#', '#'
			m, o = m+1, o+1
			continue
		}
		// The word's runs: numbers masked or kept, separated hex ids
		// masked, letters kept.
		for j := 0; j < len(word); {
			c := word[j]
			k := byteClass[c]
			switch {
			case k&clDigit != 0:
				e := j
				for e < len(word) && isDigit(word[e]) {
					e++
				}
				n, dec := e-j, false
				if e+1 < len(word) && word[e] == '.' && isDigit(word[e+1]) {
					dec = true
					for e++; e < len(word) && isDigit(word[e]); e++ {
					}
				}
				if u := 0; e < len(word) && byteClass[word[e]]&(clHex|clLetter) != 0 {
					if u = unitLen(word[e:]); u > 0 {
						mb[m], sb[o] = '#', '#'
						m, o = m+1, o+1
						m = put(mb, m, word[e:e+u])
						o = put(sb, o, word[e:e+u])
						j = e + u
						continue
					}
				}
				if n >= maskIDDigits {
					mb[m] = '#'
					m++
				} else {
					m = put(mb, m, word[j:e])
					if !dec {
						v := int64(0)
						for _, d := range word[j:e] {
							v = v*10 + int64(d-'0')
						}
						nums += v
					}
				}
				sb[o] = '#'
				o++
				j = e
			case k&clSep != 0:
				mb[m], sb[o] = c, c
				m, o, j = m+1, o+1, j+1
				if n, _ := hexPart(word[j:]); n > 0 && (c == '-' || c == '_' || c == '.') {
					// "chatcmpl-9f8e7d6c5b": a separated hex id.
					mb[m], sb[o] = '#', '#'
					m, o, j = m+1, o+1, j+n
				}
			default:
				e := j + 1
				for e < len(word) && byteClass[word[e]]&(clDigit|clSep) == 0 {
					e++
				}
				m = put(mb, m, word[j:e])
				o = put(sb, o, word[j:e])
				j = e
			}
		}
	}
	return tokHash(mb[:m]), tokHash(sb[:o]), nums
}

// scratch4 is text4's memory, held by the reader so that it is zeroed
// once per result, not once per string: a token's decoded bytes, and
// maskToken4's buffers.
type scratch4 struct {
	tok  [64]byte
	bufs maskBufs
}

// maskBufs are maskToken4's buffers: the token masked, and its shape.
type maskBufs struct{ m, s [64]byte }

// put writes b into buf at k and returns the new end; b fits.
func put(buf *[64]byte, k int, b []byte) int {
	if len(b) > 8 {
		return k + copy(buf[k:], b)
	}
	for _, c := range b {
		buf[k] = c
		k++
	}
	return k
}

// plainToken4 hashes the commonest token with a digit, one with nothing
// maskToken4 could mask, without a buffer: it gives up (ok false)
// at a letter right after a digit (a unit, a hex id), a digit, a
// separator and a digit (a time, a date, a decimal, a version), six
// digits in a row, eight hex digits or separators in a row (a hex id, a
// UUID), or an upper-case letter in a token of 18 bytes or more (a
// generated id). Otherwise nothing is masked: h is the token's hash,
// shape the hash of the token with each number written '#', nums the
// sum of its numbers, all as maskToken4 would give them.
func plainToken4(w []byte) (h, shape uint64, nums int64, ok bool) {
	n := len(w)
	if n <= 8 {
		return plainWord4(w)
	}
	// A byte at a time: the rules look at runs and at pairs of bytes,
	// which lane arithmetic on eight-byte words computed more slowly.
	upper := n >= 18
	var dm uint64         // bit k: byte k is a digit
	digits, hexes := 0, 0 // the runs of digits and of hex digits or separators that end here
	var prev, prev2 uint8 // the classes of the two bytes before
	for k, c := range w {
		cl := byteClass[c]
		switch {
		case cl&clDigit != 0:
			// A digit: not after a digit and a separator ("1.2",
			// "12:30"), nor sixth in a row.
			if prev&clSep != 0 && prev2&clDigit != 0 || digits == 5 {
				return 0, 0, 0, false
			}
			digits++
			hexes++
			dm |= 1 << (uint(k) & 63)
		case cl&(clHex|clLetter) != 0:
			// A letter: not after a digit ("3rd", "5ms", a hex id),
			// and no upper case in a long token (a generated id).
			if prev&clDigit != 0 || upper && c <= 'Z' {
				return 0, 0, 0, false
			}
			digits = 0
			if cl&clHex != 0 {
				hexes++
			} else {
				hexes = 0
			}
		case cl&clSep != 0:
			digits = 0
			hexes++
		default:
			digits, hexes = 0, 0
		}
		if hexes == 8 {
			// Eight hex digits or separators in a row: a hex id.
			return 0, 0, 0, false
		}
		prev2, prev = prev, cl
	}
	shape, nums = shapeHash(w, dm)
	return tokHash(w), shape, nums, true
}

// lowBytes[m] keeps the m low bytes of a word.
var lowBytes = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, ^uint64(0)}

// digitsValue is the value of a run of at most five digits.
func digitsValue(b []byte) int64 {
	v := int64(0)
	for _, c := range b {
		v = v*10 + int64(c-'0')
	}
	return v
}

// shapeHash returns tokHash of w with each run of digits (the bits of dm,
// bit k for byte k) written as one '#', and the sum of those runs'
// values. The shape's bytes are gathered in a register, eight bytes read
// at once, and hashed a word at a time as tokHash reads them: a buffer
// written piece by piece and read eight bytes at a time stalls.
func shapeHash(w []byte, dm uint64) (uint64, int64) {
	n := len(w)
	size := n - bits.OnesCount64(dm) + bits.OnesCount64(dm&^(dm<<1))
	h := uint64(size) * 0x9e3779b97f4a7c15
	x0 := load8(w)       // the token when it is shorter than a word
	var acc, prev uint64 // the bytes gathered (fill of them), the last word hashed
	var nums int64
	fill, k := 0, 0
	for {
		j, e := n, n
		if dm != 0 {
			j = bits.TrailingZeros64(dm)
			e = j + bits.TrailingZeros64(^(dm >> (uint(j) & 63)))
		}
		for k < j { // the bytes up to the run, as they are
			m := min(8-fill, j-k)
			var x uint64
			switch {
			case k+8 <= n:
				x = binary.LittleEndian.Uint64(w[k:])
			case n >= 8:
				x = binary.LittleEndian.Uint64(w[n-8:]) >> (8 * uint(k+8-n) & 63)
			default:
				x = x0 >> (8 * uint(k) & 63)
			}
			acc |= x & lowBytes[m] << (8 * uint(fill) & 63)
			fill, k = fill+m, k+m
			if fill == 8 {
				h = bits.RotateLeft64((h^acc)*0xbf58476d1ce4e5b9, 29)
				prev, acc, fill = acc, 0, 0
			}
		}
		if dm == 0 {
			break
		}
		acc |= '#' << (8 * uint(fill) & 63) // the run
		if fill++; fill == 8 {
			h = bits.RotateLeft64((h^acc)*0xbf58476d1ce4e5b9, 29)
			prev, acc, fill = acc, 0, 0
		}
		nums += digitsValue(w[j:e])
		dm &^= (1<<(uint(e-j)&63) - 1) << (uint(j) & 63)
		k = e
	}
	switch {
	case size < 8:
		return acc | uint64(size)<<56, nums
	case fill == 0:
		return h, nums
	}
	// The last word overlaps the one before, as tokHash reads it.
	last := prev>>(8*uint(fill)&63) | acc<<(8*uint(8-fill)&63)
	return bits.RotateLeft64((h^last)*0x94d049bb133111eb, 29), nums
}

// plainWord4 is plainToken4 for a token of at most eight bytes, read as
// one word and masked in registers: the shape is built as a word, not
// written to a buffer (the commonest token with a digit is a short
// number: "9,", "10", "43)", "#3:").
func plainWord4(w []byte) (h, shape uint64, nums int64, ok bool) {
	n := len(w)
	x := load8(w)
	d := digitLanes(x)
	dm := (d >> 7) * 0x0102040810204080 >> 56 // bit k: byte k is a digit
	if r := bits.TrailingZeros64(^dm); n < 8 && r >= 1 && r <= 5 && dm>>(uint(r)&63) == 0 && (r == n || byteClass[w[r]]&(clHex|clLetter) == 0) {
		// The commonest: a number, then no digit ("9,", "10", "43)").
		// Nothing is masked, and with a single run of digits and fewer
		// than eight bytes none of the rules below can apply.
		for _, c := range w[:r] {
			nums = nums*10 + int64(c-'0')
		}
		return x | uint64(n)<<56, '#' | x>>(8*uint(r)&63)<<8 | uint64(n-r+1)<<56, nums, true
	}
	s := sepLanes(x)
	hs := hexLanes(x) | s
	d2 := d & (d << 8)
	d6 := d2 & (d2 << 16) & (d2 << 32)
	h2 := hs & (hs << 8)
	h4 := h2 & (h2 << 16)
	if letterLanes(x)&(d<<8) != 0 || d&(s<<8)&(d<<16) != 0 || d6|h4&(h4<<32) != 0 {
		return 0, 0, 0, false
	}
	shape, nums = shapeHash(w, dm)
	return wordTokHash(x, n), shape, nums, true
}

// wordTokHash is tokHash of the n bytes (at most eight) of the word x,
// the bytes past them zero.
func wordTokHash(x uint64, n int) uint64 {
	if n < 8 {
		return x | uint64(n)<<56
	}
	return bits.RotateLeft64((uint64(n)*0x9e3779b97f4a7c15^x)*0xbf58476d1ce4e5b9, 29)
}

// sepLanes flags the bytes of x that join a word's parts: '-', '.', ':'
// and '_'.
func sepLanes(x uint64) uint64 {
	return eqLanes(x, '-') | eqLanes(x, '.') | eqLanes(x, ':') | eqLanes(x, '_')
}

// eqLanes flags the bytes of x equal to c, exactly per byte.
func eqLanes(x uint64, c byte) uint64 {
	y := x ^ uint64(c)*lanes1
	return ^((y&lanes7 + lanes7) | y) & lanesTop
}

// letterLanes flags the ASCII letters of x.
func letterLanes(x uint64) uint64 {
	l := x&lanes7 | 0x20*lanes1 // folded to lower case
	return (l + (0x80-'a')*lanes1) &^ (l + (0x7f-'z')*lanes1) &^ x & lanesTop
}

// callKey: an object key whose value measures the call or counts the
// runtime's own events, not the world: token usage and its
// price (a provider's "usage" block, "prompt_tokens", "outputTokens",
// "accumulated_token_usage", "total_cost", "accumulated_cost"), an event
// stream's "cause", event and command ids and sequence numbers, and
// Cline's "task_progress" checklist, which the agent rewrites each turn.
// An "id" alone is not one: it may name another entity (an order); the
// clock rule reads it by how it moves.
func callKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	// Every key is read: its last byte rules most out at once.
	switch k[len(k)-1] | 0x20 {
	case 's', 'e', 't', 'd', 'r', 'q':
	default:
		return false
	}
	switch string(k) {
	case "usage", "cause", "seq", "task_progress", "token_count", "tokenCount":
		return true
	}
	for _, sfx := range [...]string{"tokens", "_usage", "cost", "event_id", "eventid", "command_id", "commandid", "sequence_number"} {
		if suffixFold(k, sfx) {
			return true
		}
	}
	return false
}

// ErrorHash is the hash the detectors compare errors by, 0 never: the
// kind and the message read as result text is read (text4: the same tokens, the same
// masking), every number masked (the shape: an error's numbers rarely
// tell one failure from another, as ErrorHash has it), at most
// maxErrorHashLen bytes of the message.
func ErrorHash(kind, message string) uint64 {
	if len(message) > maxErrorHashLen {
		message = message[:maxErrorHashLen]
	}
	var s4 scratch4
	_, ks, _, _, _ := text4([]byte(kind), false, false, &s4)
	_, ms, _, _, _ := text4([]byte(message), false, false, &s4)
	return nonZero(mix64(ks*0x9e3779b97f4a7c15 ^ ms))
}
