package detect

// Generation selects the rules the detectors apply. It is part of the
// pinned Policy, so an execution keeps the rules it started with: histories
// recorded by guard versions 1 to 3 decode without the field and replay
// with DetectionLegacy, bit for bit.
type Generation int

// The detection generations.
const (
	// DetectionLegacy (the zero value) is the rule set of guard versions 1
	// to 3: exact output hashes, per-node stall windows.
	DetectionLegacy Generation = 0
	// DetectionV2 judges an iteration of the loop rather than one node,
	// compares results as a person would (canonical JSON, masked volatile
	// tokens, learnt volatile fields, near-duplicate text) and tells waiting
	// (one node polled with a durable timer between polls) from looping.
	DetectionV2 Generation = 2
	// DetectionV3 judges the sequence of the execution's calls: a loop is
	// a stretch of calls that repeats, call for call and result for
	// result, with a period of up to MaxLoopPeriod calls. Outside input (a
	// signal, an update, a resume) breaks a repetition. Results are read
	// as DetectionV2 reads them, except that only noise is masked: numbers
	// that name an entity or move (counts, scores) are information, and
	// nothing is merged as "nearly the same" (see docs/detection.md).
	// Guard versions 6 to 9 pin it for new executions.
	DetectionV3 Generation = 3
	// DetectionV4 judges the sequence as DetectionV3 does, and reads
	// results in one pass, token by token as the bytes are read, with
	// clocks told from progress: numbers that measure the call (token
	// usage), count the runtime's events or meter a transfer are noise;
	// a number that rises by the same stride at every step of an
	// otherwise repeating period is a clock; a rising number excuses a
	// period as a restart only when nothing else in it moved; errors
	// are masked as results are; a result that is a JSON string holding
	// JSON is read as that JSON (docs/detection.md, "Generation 4").
	DetectionV4 Generation = 4
	// DetectionV5 is DetectionV4 with model responses read as a person
	// reads them (responses.go): a response that calls tools is its tool
	// calls, the words and reasoning beside them are commentary; provider
	// ids are masked with or without a digit; usage and provider metadata
	// are measurements; the reader's rules apply inside arrays as inside
	// objects (docs/detection.md, "Generation 5"). Guard version 13 pins
	// it for new executions.
	DetectionV5 Generation = 5
)

// Valid reports whether g is a known generation.
func (g Generation) Valid() bool {
	return g == DetectionLegacy || g == DetectionV2 || g == DetectionV3 || g == DetectionV4 || g == DetectionV5
}

// v2 reports whether the policy selects the second generation's rules or
// the third, which keeps the second's reading of results, its waiting
// rule and its learning state. Unknown generations get the legacy rules
// (a loader should reject them with Valid first).
func (p *Policy) v2() bool {
	return p.Detection == DetectionV2 || p.Detection == DetectionV3 || p.v4()
}

// v3 reports whether the policy selects the third generation's sequence
// rule: the third generation or a later one, which adds to it.
func (p *Policy) v3() bool {
	return p.Detection == DetectionV3 || p.v4()
}

// v4 reports whether the policy selects the fourth generation's reading
// and clock rules: the fourth generation or the fifth, which reads
// responses on top of them.
func (p *Policy) v4() bool {
	return p.Detection == DetectionV4 || p.Detection == DetectionV5
}

// oneLoop reports whether the policy selects guard version 9's one loop
// (Policy.OneLoop).
func (p *Policy) oneLoop() bool {
	return p.OneLoop
}
