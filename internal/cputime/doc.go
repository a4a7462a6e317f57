// Package cputime reads the process's CPU time, for benchmarks that report
// CPU time next to wall time: on a shared, loaded machine the wall time also
// counts the time a benchmark waited for a core.
package cputime
