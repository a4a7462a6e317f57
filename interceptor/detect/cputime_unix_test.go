//go:build unix

package detect

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time, for benchmarks that
// report CPU time per operation next to wall time: on a shared, loaded
// machine the wall time also counts the time the benchmark waited for a
// core.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
