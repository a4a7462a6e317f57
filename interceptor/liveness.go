package interceptor

import (
	"fmt"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// HaltBound is the guard's liveness promise in numbers (guard version 12):
// under opts, a loop that keeps repeating the same round of callsPerRound
// guarded calls (its calls of one node in parallel or not, their results
// in any order) is halted at most HaltBound guarded calls after its onset,
// the call at which a detector first trips it. With Warnings 0 the onset
// is the halt. Each of the Warnings warnings starts the loop over, and the
// loop trips again within detect.RetripRounds rounds of it and the round
// in flight, so
//
//	B = (Warnings × (RetripRounds + 1) + 1) × callsPerRound
//
// docs/protocol.md states the bound with the shapes the guard does not
// halt; the property test in liveness_test.go checks it.
func HaltBound(opts Options, callsPerRound int) (int, error) {
	if callsPerRound < 1 {
		return 0, fmt.Errorf("callsPerRound must be at least 1, got %d", callsPerRound)
	}
	cfg, _, err := buildConfig(opts)
	if err != nil {
		return 0, err
	}
	return haltBound(cfg, callsPerRound), nil
}

// haltBound is HaltBound for a built config.
func haltBound(cfg config, callsPerRound int) int {
	rounds := detect.RetripRounds(cfg.Policy)
	return (cfg.Warnings*(rounds+1) + 1) * callsPerRound
}
