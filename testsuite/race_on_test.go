//go:build race

package testsuite_test

// raceEnabled is true when the tests run under the race detector, which
// changes what allocates.
const raceEnabled = true
