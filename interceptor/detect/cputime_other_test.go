//go:build !unix

package detect

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
