package detect

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSigLen bounds an error signature.
const maxSigLen = 160

// ErrorSignature normalises an error into a signature that is equal for
// the "same" error: the lowercased kind ("error" if empty), ":", and the
// message with digit runs and hex or UUID-like tokens replaced by "#",
// whitespace collapsed and trimmed, at most 160 bytes. So "timeout after 31s
// (attempt 2)" and "timeout after 45s (attempt 3)" match.
func ErrorSignature(kind, message string) string {
	return truncate(normaliseError(kind, message, maxSigLen), maxSigLen)
}

// maxErrorHashLen bounds the normalised error ErrorHash reads.
const maxErrorHashLen = 16 << 10

// normaliseError writes the kind, ":" and the message with ids masked and
// whitespace collapsed, stopping once limit bytes are written.
func normaliseError(kind, message string, limit int) string {
	kind = strings.ToLower(strings.Join(strings.Fields(kind), " "))
	if kind == "" {
		kind = "error"
	}
	var b strings.Builder
	b.Grow(min(len(kind)+1+len(message), limit+8))
	b.WriteString(kind)
	b.WriteByte(':')
	start := b.Len()
	space := false
	for i := 0; i < len(message) && b.Len() <= limit; {
		c := message[i]
		if isWordByte(c) {
			j := i
			for j < len(message) && isWordByte(message[j]) {
				j++
			}
			if space && b.Len() > start {
				b.WriteByte(' ')
			}
			space = false
			writeToken(&b, message[i:j])
			i = j
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(message[i:])
		}
		if unicode.IsSpace(r) {
			space = true
		} else {
			if space && b.Len() > start {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(message[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isWordByte: ASCII letters, digits and '-' form tokens (UUIDs keep their
// dashes).
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-'
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// writeToken writes a token with ids replaced by "#": a hex or UUID-like
// token (hex digits and dashes, at least 6 hex digits, one of them a
// decimal digit) or a 0x literal becomes "#"; otherwise each digit run does.
func writeToken(b *strings.Builder, tok string) {
	hexDigits, digit, hexOnly := 0, false, true
	for k := 0; k < len(tok); k++ {
		c := tok[k]
		switch {
		case c == '-':
		case isHexByte(c):
			hexDigits++
			digit = digit || c <= '9'
		default:
			hexOnly = false
		}
	}
	if hexOnly && digit && hexDigits >= 6 {
		b.WriteByte('#')
		return
	}
	if len(tok) > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X') {
		allHex := true
		for k := 2; k < len(tok); k++ {
			allHex = allHex && isHexByte(tok[k])
		}
		if allHex {
			b.WriteByte('#')
			return
		}
	}
	for k := 0; k < len(tok); {
		if tok[k] >= '0' && tok[k] <= '9' {
			for k < len(tok) && tok[k] >= '0' && tok[k] <= '9' {
				k++
			}
			b.WriteByte('#')
			continue
		}
		b.WriteByte(tok[k])
		k++
	}
}

// ExtractError reads a call's error into an Observation of a failed call:
// the signature a person reads, and the hash the detectors compare
// (ErrorHash). p is the policy the result would be read under; errors
// have no rules of their own yet.
func ExtractError(p Policy, kind, message string) Observation {
	return Observation{Failed: true, ErrorSig: ErrorSignature(kind, message), ErrorHash: ErrorHash(kind, message)}
}
