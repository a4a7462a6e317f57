package scripted

import "fmt"

// Repeat returns n turns of node with the same output.
func Repeat(n int, node, output string) []Turn {
	ts := make([]Turn, n)
	for i := range ts {
		ts[i] = Turn{Node: node, Output: output}
	}
	return ts
}

// CodeVerify returns a coder ↔ verifier script: patches[i], then a verdict
// with failing[i] failing tests.
func CodeVerify(patches []string, failing []int) []Turn {
	var ts []Turn
	for i := range patches {
		ts = append(ts, Turn{Node: "Code", Output: patches[i]}, Turn{Node: "Verify", Output: fmt.Sprintf("run %d: failing=%d", i, failing[i]), Failing: failing[i]})
	}
	return ts
}
