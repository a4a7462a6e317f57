package detect

// FNV-64a, inlined so that hashing allocates nothing.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvByte(h uint64, c byte) uint64 {
	h ^= uint64(c)
	return h * fnvPrime
}

// hex16 formats a hash as 16 lowercase hex digits.
func hex16(h uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}

// ActionKey names an action, a node called with arguments (each one's
// encoding), by its FNV-64a hash: equal actions have equal keys. Each
// argument is length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
func ActionKey(node string, args [][]byte) uint64 {
	h := fnvString(fnvOffset, node)
	for _, a := range args {
		n := uint64(len(a))
		for range 8 {
			h = fnvByte(h, byte(n))
			n >>= 8
		}
		h = fnvBytes(h, a)
	}
	return h
}
