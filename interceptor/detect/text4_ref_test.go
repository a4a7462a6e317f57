package detect

// This file is a frozen copy of the string reading (text4.go) as of
// 2371beb, with the provider id rule added after (providerID, marked
// below): the reference the optimised reading must match bit for bit
// (TestText4MatchesReference, FuzzText4MatchesReference). Do not edit it:
// recorded histories replay against these values. Helpers that text4.go
// shares with generation 3 (canon.go: maskToken, numberWord, unitWord,
// counterWord, ...) are frozen by generation 3's own fixtures and are called
// as they are.

import (
	"encoding/binary"
	"math/bits"
)

// ref4Scratch and ref4MaskBufs are scratch4 and maskBufs as of 2371beb.
type ref4Scratch struct {
	tok  [64]byte
	bufs ref4MaskBufs
}

type ref4MaskBufs struct{ m, s [64]byte }

// text4 hashes the text s, with esc as written in JSON (escapes
// undecoded), up to its closing quote when quoted (a string inside the
// payload: end is the quote's index) or to its end: whitespace runs collapsed, tokens masked.
// It returns the hash, the shape (every number masked too) and the sum of
// the integers kept; ok is false on an unterminated string or a bad
// escape.
func ref4Text4(s []byte, quoted, esc bool, sc *ref4Scratch) (h, shape uint64, nums int64, end int, ok bool) {
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
				if n := ref4EscapedSpace4(s[i:]); n > 0 {
					i += n
					continue
				}
				break
			}
			last := i >= len(s) || quoted && s[i] == '"'
			if nl || last {
				if meter {
					h, shape, nums = (lineH^ref4MeterHash)*fnvPrime, (lineS^ref4MeterHash)*fnvPrime, lineN
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
				digits |= digitLanes(x) & (1<<(8*uint(k)) - 1)
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
			if e := s[i+1]; e == 'n' || e == 'r' || ref4EscapedSpace4(s[i:]) > 0 {
				break
			}
			n := ref4EscapeLen(s[i:])
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
		var th, ts uint64
		var n int64
		digit := digits != 0
		if len(w) >= minProviderID {
			// Generation 5's one addition (responses.go): a provider's
			// generated id, with a digit or without.
			if pth, ok := providerID(w); ok {
				h, shape = (h^pth)*fnvPrime, (shape^pth)*fnvPrime
				afterNum, afterCount, afterStep, stepState = false, false, false, 0
				continue
			}
		}
		if !digit {
			th = ref4TokHash(w)
			ts = th
			if !meter && (afterNum || w[0] == '-') && ref4MeterWord(w, afterNum) {
				meter = true
			}
		} else {
			th, ts, n = ref4MaskToken4(w, bufs)
			if !meter && (w[len(w)-1] == 's' || w[len(w)-1] == ']') && ref4RateToken(w) {
				meter = true
			}
		}
		switch {
		case afterCount && digit && countToken(w):
			// "retry 4", "attempt #3:": the number counts attempts.
			th = fnvBytes(fnvByte(fnvOffset, '#'), w[countDigits(w):])
			ts, n = th, 0
		case afterStep && digit && ref4FractionToken(w):
			// "step 3/5": a plan's counter.
			th, ts, n = ref4StepHash, ref4StepHash, 0
		case afterStep && digit && countToken(w):
			stepH, stepS, stepN, stepState = h, shape, nums, 1
		case stepState == 1 && !digit && len(w) == 2 && w[0]|0x20 == 'o' && w[1]|0x20 == 'f':
			stepState = 2
		case stepState == 2 && digit && countToken(w):
			// "step 3 of 5": the whole counter is masked.
			h, shape, nums = stepH, stepS, stepN
			th, ts, n = ref4StepHash, ref4StepHash, 0
			stepState = 0
		default:
			stepState = 0
		}
		afterCount, afterStep = false, false
		if c0 := w[0] | 0x20; !digit && (c0 == 't' || c0 == 'r' || c0 == 'a' || c0 == 'i') {
			afterCount = counterWord(w)
		} else if !digit && c0 == 's' {
			afterStep = ref4StepWord(w)
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

// tokHash hashes a token: one of up to seven bytes is its bytes and its
// length as they are (the chain that joins a string's tokens multiplies
// them in, one bijection per token, and the leaf mixes the result); a
// longer one folds its eight-byte words with a multiplication and a
// rotation each, its last word read overlapping the one before.
func ref4TokHash(b []byte) uint64 {
	n := len(b)
	if n < 8 {
		return ref4Load8(b) | uint64(n)<<56
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
func ref4Load8(b []byte) uint64 {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*uint(n-4))
	case n >= 2:
		return uint64(binary.LittleEndian.Uint16(b)) | uint64(binary.LittleEndian.Uint16(b[n-2:]))<<(8*uint(n-2))
	case n == 1:
		return uint64(b[0])
	}
	return 0
}

// maskToken4 hashes a token that holds a digit: its words (alphanumeric
// runs with inner '-', '.', ':', '_') are written to a buffer, masked by
// the third generation's rules (see maskToken), the buffer is hashed
// eight bytes at a time. shape masks every number; nums sums the integers
// kept. A token longer than the buffer is hashed by maskToken.
func ref4MaskToken4(w []byte, bufs *ref4MaskBufs) (h, shape uint64, nums int64) {
	if len(w) > len(bufs.m) {
		return maskToken(w)
	}
	if h, shape, nums, ok := ref4PlainToken4(w, &bufs.s); ok {
		return h, shape, nums
	}
	return ref4MaskToken4Slow(w, bufs)
}

// maskToken4Slow is maskToken4 word by word.
func ref4MaskToken4Slow(w []byte, bufs *ref4MaskBufs) (h, shape uint64, nums int64) {
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
			m = ref4Put(mb, m, word)
			o = ref4Put(sb, o, word)
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
						m = ref4Put(mb, m, word[e:e+u])
						o = ref4Put(sb, o, word[e:e+u])
						j = e + u
						continue
					}
				}
				if n >= maskIDDigits {
					mb[m] = '#'
					m++
				} else {
					m = ref4Put(mb, m, word[j:e])
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
				m = ref4Put(mb, m, word[j:e])
				o = ref4Put(sb, o, word[j:e])
				j = e
			}
		}
	}
	return ref4TokHash(mb[:m]), ref4TokHash(sb[:o]), nums
}

// put writes b into buf at k and returns the new end; b fits.
func ref4Put(buf *[64]byte, k int, b []byte) int {
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
// maskToken4 could mask, eight bytes at a time: it gives up (ok false)
// at a letter right after a digit (a unit, a hex id), a digit, a
// separator and a digit (a time, a date, a decimal, a version), six
// digits in a row, eight hex digits or separators in a row (a hex id, a
// UUID), or an upper-case letter in a token of 18 bytes or more (a
// generated id). Otherwise nothing is masked: h is the token's hash,
// shape the hash of the token with each number written '#', nums the
// sum of its numbers, all as maskToken4 would give them.
func ref4PlainToken4(w []byte, sb *[64]byte) (h, shape uint64, nums int64, ok bool) {
	n := len(w)
	var dm uint64 // bit k: byte k is a digit
	// The previous word's lanes, and its runs of two and four digits and
	// of two and four hex digits or separators: runs cross words.
	var pd, ps, phs, pd2, ph2, ph4 uint64
	for i := 0; i < n; i += 8 {
		x := ref4Load8(w[i:])
		d := digitLanes(x)
		s := ref4SepLanes(x)
		hs := hexLanes(x) | s
		if ref4LetterLanes(x)&(d<<8|pd>>56) != 0 || d&(s<<8|ps>>56)&(d<<16|pd>>48) != 0 {
			return 0, 0, 0, false
		}
		// A lane is flagged in dK when it ends a run of K or more.
		d2 := d & (d<<8 | pd>>56)
		d4 := d2 & (d2<<16 | pd2>>48)
		d6 := d4 & (d2<<32 | pd2>>32)
		h2 := hs & (hs<<8 | phs>>56)
		h4 := h2 & (h2<<16 | ph2>>48)
		h8 := h4 & (h4<<32 | ph4>>32)
		if d6|h8 != 0 || n >= 18 && ref4UpperLanes(x) != 0 {
			return 0, 0, 0, false
		}
		dm |= ((d >> 7) * 0x0102040810204080 >> 56) << uint(i)
		pd, ps, phs, pd2, ph2, ph4 = d, s, hs, d2, h2, h4
	}
	// The shape: the token with each run of digits as one '#'.
	o, k := 0, 0
	for dm != 0 {
		j := bits.TrailingZeros64(dm)
		o = ref4Put(sb, o, w[k:j])
		sb[o] = '#'
		o++
		e := j + bits.TrailingZeros64(^(dm >> uint(j)))
		v := int64(0)
		for _, c := range w[j:e] {
			v = v*10 + int64(c-'0')
		}
		nums += v
		dm &^= (1<<uint(e-j) - 1) << uint(j)
		k = e
	}
	o = ref4Put(sb, o, w[k:])
	return ref4TokHash(w), ref4TokHash(sb[:o]), nums, true
}

// sepLanes flags the bytes of x that join a word's parts: '-', '.', ':'
// and '_'.
func ref4SepLanes(x uint64) uint64 {
	return ref4EqLanes(x, '-') | ref4EqLanes(x, '.') | ref4EqLanes(x, ':') | ref4EqLanes(x, '_')
}

// eqLanes flags the bytes of x equal to c, exactly per byte.
func ref4EqLanes(x uint64, c byte) uint64 {
	y := x ^ uint64(c)*lanes1
	return ^((y&lanes7 + lanes7) | y) & lanesTop
}

// letterLanes flags the ASCII letters of x, upperLanes the upper-case ones.
func ref4LetterLanes(x uint64) uint64 {
	l := x&lanes7 | 0x20*lanes1 // folded to lower case
	return (l + (0x80-'a')*lanes1) &^ (l + (0x7f-'z')*lanes1) &^ x & lanesTop
}

func ref4UpperLanes(x uint64) uint64 {
	m := x & lanes7
	return (m + (0x80-'A')*lanes1) &^ (m + (0x7f-'Z')*lanes1) &^ x & lanesTop
}

// escapedSpace4 is escapedSpace for an escape that may be cut short.
func ref4EscapedSpace4(raw []byte) int {
	if raw[1] == 'u' && len(raw) < 6 {
		return 0
	}
	return escapedSpace(raw)
}

// escapeLen returns the length of the escape at the start of raw (a
// backslash and at least one byte), or 0 when it is malformed: a \u not
// followed by four hex digits.
func ref4EscapeLen(raw []byte) int {
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
func ref4StepWord(w []byte) bool {
	if len(w) == 5 && w[4] == ':' {
		w = w[:4]
	}
	return len(w) == 4 && w[0]|0x20 == 's' && w[1]|0x20 == 't' && w[2]|0x20 == 'e' && w[3]|0x20 == 'p'
}

// fractionToken: digits '/' digits, then only punctuation ("3/5", "3/5:").
func ref4FractionToken(w []byte) bool {
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
func ref4MeterWord(w []byte, afterNum bool) bool {
	if len(w) >= 8 && string(w[:8]) == "--:--:--" {
		return true
	}
	return afterNum && len(w) >= 3 && len(w) <= 8 && ref4RateToken(w)
}

// rateToken: a token that ends (before punctuation) with "/s" after a
// letter or a digit: a transfer rate ("5.1it/s]", "12.3MB/s", "MiB/s").
func ref4RateToken(w []byte) bool {
	j := len(w)
	for j > 0 && !isAlnum(w[j-1]) {
		j--
	}
	return j >= 3 && w[j-1] == 's' && w[j-2] == '/' && isAlnum(w[j-3])
}

// The hashes of the masked stretches, as of 2371beb.
var (
	ref4MeterHash = ref4TokHash([]byte("#meter"))
	ref4StepHash  = ref4TokHash([]byte("#step"))
)
