package interceptor

import (
	"math"
	"strings"
)

// sparkBars are the eight heights of a sparkline, lowest first.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values as one bar each, so a trend reads at a glance in
// plain text: `failing 7 → 4 → 4 → 4  █▅▅▅`. Bars are scaled from zero (or
// from the lowest value, when one is negative) to the highest, because the
// trends the guard shows are counts and scores where zero is the goal: four
// failing tests stuck at four stay high, they do not flatten to the floor.
// A value that is not a finite number draws as a space.
func Sparkline(values []float64) string {
	lo, hi := 0.0, math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			b.WriteRune(' ')
		case hi <= lo:
			b.WriteRune(sparkBars[0])
		default:
			b.WriteRune(sparkBars[int(math.Round((v-lo)/(hi-lo)*float64(len(sparkBars)-1)))])
		}
	}
	return b.String()
}
