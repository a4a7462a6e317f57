package detect

import "github.com/loopguard/loopguard/internal/cputime"

// cpuTime is the process's CPU time, for benchmarks that report it next to
// wall time.
var cpuTime = cputime.Process
