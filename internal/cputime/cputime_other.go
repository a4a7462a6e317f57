//go:build !unix

package cputime

import "time"

// Process is the process's user and system CPU time so far; ok is false
// where the platform cannot tell.
func Process() (d time.Duration, ok bool) { return 0, false }
