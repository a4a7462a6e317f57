package protocol

import (
	"github.com/loopguard/loopguard/interceptor/detect"
)

// Warning is a detector's trip that did not pause (interceptor.Options.Warnings): the
// loop's calls carry it in their Notice, and a halt that follows lists it.
type Warning struct {
	Detector detect.Detector `json:"detector"`
	Reason   HaltReason      `json:"reason"`
	Message  string          `json:"message"`
	// Directive is a sentence the agent can put into its prompt.
	Directive string `json:"directive"`
	// N is this warning's number for the loop; Of is how many it gets
	// before it halts.
	N  int `json:"n"`
	Of int `json:"of"`
	// Node is the node that tripped; Nodes are the loop's nodes (the
	// cycle's members, or the node), whose calls carry the warning.
	Node    string   `json:"node"`
	Nodes   []string `json:"nodes"`
	CycleID string   `json:"cycleId,omitempty"`
	// Loop is the loop's identity (HaltEvent.Loop).
	Loop string `json:"loop,omitempty"`
}
