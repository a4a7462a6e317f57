package detect

import "bytes"

// The reading of model responses, small steps on canonScan's one pass. Agent frameworks run the model call as
// one generic activity whose result is a provider's response envelope:
// OpenAI Responses items, Chat Completions choices, Anthropic content
// blocks, the Vercel AI SDK's content parts, Gemini parts, LangChain
// messages. A person reading two such responses asks whether the model
// asked for the same thing, so:
//
//   - a response that calls tools is its tool calls: the text beside
//     them ("text", or a "content" string) is talk, as a thought is, and
//     is set aside when the payload holds a tool call (a "tool_calls",
//     "toolCalls", "function_call" or "functionCall" that is not empty, or
//     a part typed "function_call", "tool_use", "tool-call", "tool_call"
//     or "custom_tool_call"); a response without one is its text;
//   - a reasoning part (typed "reasoning", "thinking" or
//     "redacted_thinking", or a Gemini part marked "thought": true) is
//     commentary whole, wherever its type stands among its keys;
//   - what the provider says about the call is no news: usage blocks
//     under any of their names, provider metadata, the response's own id,
//     opaque signatures handed back on the next call (metaKey); in a
//     response (a payload that calls a tool or states a finish reason),
//     the request it echoes ("request": the AI SDK returns the request
//     body, the whole conversation) and transport "headers" too;
//   - a provider's generated id is masked with or without a digit
//     (providerID);
//   - inside an array, what the reader sets aside in an element is set
//     aside as it is in an object (array5): an array's elements are
//     hashed in order, and what is subtracted at the top must match what
//     the element contributed.

// keyRole is what an object key's value is to a response.
type keyRole uint8

const (
	roleNone keyRole = iota
	roleTalk         // the model's words: talk when the payload calls a tool
	roleEcho         // the request echoed, transport headers: noise in a response
)

// response5 is what an object that may be a response part must restore
// when it turns out to be commentary: the reader's sums at its start.
type response5 struct {
	commentary          bool
	comm0, talk0, echo0 uint64
	nums0               int64
	nf0                 int
}

func (sc *canonScan) openPart() response5 {
	return response5{comm0: sc.comm, talk0: sc.talk, echo0: sc.echo, nums0: sc.nums, nf0: sc.nf}
}

// closeCommentary sets the whole object (its contribution v) aside as
// commentary: nothing in it is talk, a number to sum or a volatile field.
func (sc *canonScan) closeCommentary(r *response5, v uint64) {
	sc.comm, sc.talk, sc.echo, sc.nums, sc.nf = r.comm0+v, r.talk0, r.echo0, r.nums0, r.nf0
}

// stripped is what the action hash leaves out: commentary; the talk when
// the payload calls a tool; the echo when it is a response.
func (sc *canonScan) stripped() uint64 {
	x := sc.comm
	if sc.calls > 0 {
		x += sc.talk
	}
	if sc.calls > 0 || sc.finished {
		x += sc.echo
	}
	return x
}

// readKey reads what key says about the response, peeking at its value
// (sc.i is past the colon): a tool call or a reasoning part counted, the
// model's words named.
func (sc *canonScan) readKey(key []byte, r *response5) keyRole {
	if len(key) < 4 || len(key) > 13 {
		return roleNone
	}
	switch string(key) {
	case "request", "headers":
		return roleEcho
	case "finishReason", "finish_reason", "stop_reason", "stopReason":
		sc.finished = true
	case "text", "content":
		if sc.skipSpace(); sc.i < len(sc.b) && sc.b[sc.i] == '"' {
			return roleTalk
		}
	case "type":
		switch partType(sc.peekString()) {
		case partCall:
			sc.calls++
		case partReasoning:
			r.commentary = true
		}
	case "thought":
		if sc.skipSpace(); bytes.HasPrefix(sc.b[sc.i:], []byte("true")) {
			r.commentary = true
		}
	case "tool_calls", "toolCalls", "function_call", "functionCall":
		if sc.nonEmpty() {
			sc.calls++
		}
	}
	return roleNone
}

// peekString returns the string value at sc.i, as written, when it is
// short and has no escape; nil otherwise. sc.i stays.
func (sc *canonScan) peekString() []byte {
	if sc.skipSpace(); sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
		return nil
	}
	rest := sc.b[sc.i+1:]
	if len(rest) > 24 {
		rest = rest[:24]
	}
	if q := bytes.IndexByte(rest, '"'); q > 0 && bytes.IndexByte(rest[:q], '\\') < 0 {
		return rest[:q]
	}
	return nil
}

// nonEmpty reports whether the value at sc.i is an object or a non-empty
// array. sc.i stays.
func (sc *canonScan) nonEmpty() bool {
	sc.skipSpace()
	if sc.i >= len(sc.b) {
		return false
	}
	switch sc.b[sc.i] {
	case '{':
		return true
	case '[':
		for j := sc.i + 1; j < len(sc.b); j++ {
			if !isSpaceByte(sc.b[j]) {
				return sc.b[j] != ']'
			}
		}
	}
	return false
}

// Kinds of response part, by their "type".
const (
	partOther = iota
	partCall
	partReasoning
)

func partType(t []byte) int {
	switch string(t) {
	case "function_call", "tool_use", "tool-call", "tool_call", "custom_tool_call":
		return partCall
	case "reasoning", "thinking", "redacted_thinking":
		return partReasoning
	}
	return partOther
}

// metaKey: an object key whose value the provider writes about the call,
// not what the model answered: usage blocks under the names callKey does
// not know (LangChain's "usage_metadata", Gemini's "usageMetadata"),
// provider and response metadata, the response's own id (every response
// has a fresh one), and opaque signatures and encrypted reasoning that
// the provider asks to be sent back.
func metaKey(k []byte) bool {
	if len(k) < 9 {
		return false
	}
	switch string(k) {
	case "usage_metadata", "usageMetadata", "response_metadata", "responseMetadata",
		"providerMetadata", "provider_metadata", "providerData", "provider_data",
		"responseId", "response_id", "system_fingerprint", "signature",
		"thoughtSignature", "thought_signature", "encrypted_content", "encryptedContent":
		return true
	}
	return false
}

// minProviderID is the shortest token providerID reads: a one-letter
// prefix, a separator and 16 characters.
const minProviderID = 18

// providerID finds a provider's generated id at the end of the token w
// (up to three bytes of punctuation may follow it: a quote, a comma, a
// bracket): a lower-case prefix of at most 12 letters that starts a word,
// '_' or '-', then a run of 16 or more letters and digits that reads as
// random (idRun). It returns the token's hash with the run written '#'.
// The run needs no digit: one id in 60 or so of OpenAI's 24-character
// tool-call ids has none, and one such id kept a loop from repeating. Read from the end, most long tokens (paths, test ids) are
// turned away within a few bytes.
func providerID(w []byte) (uint64, bool) {
	j := len(w)
	for k := 0; k < 3 && j > 0 && byteClass[w[j-1]]&clAlnum == 0; k++ {
		j--
	}
	i := j
	for i > 0 && byteClass[w[i-1]]&clAlnum != 0 {
		i--
	}
	if j-i < 16 || i < 2 || w[i-1] != '_' && w[i-1] != '-' {
		return 0, false
	}
	p := i - 1
	for p > 0 && w[p-1] >= 'a' && w[p-1] <= 'z' {
		p--
	}
	if n := i - 1 - p; n < 1 || n > 12 || p > 0 && byteClass[w[p-1]]&clAlnum != 0 || !idRun(w[i:j]) {
		return 0, false
	}
	h := fnvByte(fnvBytes(fnvOffset^kindString, w[:i]), '#')
	return fnvBytes(h, w[j:]), true
}

// idRun reports whether a run of letters and digits reads as generated:
// it mixes at least two of lower case, upper case and digits, and changes
// between them at least once every four characters. A random run of
// letters and digits changes at about six places in ten; a CamelCase name
// ("userAccountInformation", two changes in 22) at word boundaries only.
func idRun(r []byte) bool {
	class := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 0
		case c >= 'A' && c <= 'Z':
			return 1
		}
		return 2
	}
	changes, seen, prev := 0, 0, class(r[0])
	seen |= 1 << prev
	for _, c := range r[1:] {
		k := class(c)
		if k != prev {
			changes++
		}
		seen |= 1 << k
		prev = k
	}
	return seen&(seen-1) != 0 && changes*4 >= len(r)
}

// array5 carries the commentary and the talk through an array whose
// elements are hashed in order: what an element sets aside is taken out
// of that element before it is mixed with its position, so that the
// action hash of an array is the array of its elements' actions.
type array5 struct {
	comm0, talk0 uint64 // the reader's sums when the array opened
	echo0        uint64
	c, t         uint64 // and when the current element began
	a1, a2       uint64 // the sequence without commentary; without talk too
}

func (a *array5) open(sc *canonScan) { a.comm0, a.talk0, a.echo0 = sc.comm, sc.talk, sc.echo }

func (a *array5) elemStart(sc *canonScan) { a.c, a.t = sc.comm, sc.talk }

// elemEnd adds the element v at position n to both sequences.
func (a *array5) elemEnd(sc *canonScan, v, n uint64) {
	dc, dt := sc.comm-a.c, sc.talk-a.t
	m := mix64(v + n*0x9e3779b97f4a7c15)
	x1 := m
	if dc != 0 {
		x1 = mix64(v - dc + n*0x9e3779b97f4a7c15)
	}
	a.a1 += x1
	if dt != 0 {
		x1 = mix64(v - dc - dt + n*0x9e3779b97f4a7c15)
	}
	a.a2 += x1
}

// close leaves the reader's sums as they would be had the array been an
// object: seq is the array's sequence hash. An echoed request inside an
// element (none of the envelopes has one) stays in it: it is not carried
// through the mixing.
func (a *array5) close(sc *canonScan, seq uint64) {
	sc.comm, sc.talk, sc.echo = a.comm0+(seq-a.a1), a.talk0+(a.a1-a.a2), a.echo0
}
