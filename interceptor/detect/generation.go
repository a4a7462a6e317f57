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
	// DefaultPolicy selects it.
	DetectionV2 Generation = 2
)

// Valid reports whether g is a known generation.
func (g Generation) Valid() bool {
	return g == DetectionLegacy || g == DetectionV2
}

// v2 reports whether the policy selects the second generation's rules.
// Unknown generations get the legacy rules (a loader should reject them
// with Valid first).
func (p *Policy) v2() bool {
	return p.Detection == DetectionV2
}
