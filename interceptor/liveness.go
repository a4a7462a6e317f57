package interceptor

import (
	"fmt"
	"math"

	"github.com/loopguard/loopguard/interceptor/detect"
)

// HaltBound is the guard's liveness promise in numbers:
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

// haltBound is HaltBound for a built config. It saturates at math.MaxInt:
// New accepts any Warnings and budgets from 0 up, and the bound of huge
// ones must not wrap round to a small number.
func haltBound(cfg config, callsPerRound int) int {
	rounds := detect.RetripRounds(cfg.Policy)
	return satMul(satAdd(satMul(cfg.Warnings, satAdd(rounds, 1)), 1), callsPerRound)
}

// satAdd and satMul are + and × of non-negative ints, saturating at
// math.MaxInt.
func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func satMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}
