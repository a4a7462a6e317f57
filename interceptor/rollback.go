package interceptor

import "strconv"

// GuardVersion is the guard version executions record in their version
// marker (change id "loopguard"); it is the only one this release replays.
const GuardVersion = int(guardVersion)

// RunningGuardedQuery returns the visibility query that lists the open
// executions carrying the guard's version marker. The SDK records the
// marker in the TemporalChangeVersion search attribute as
// "loopguard-<version>"; every such execution must be drained before the
// guard is removed from a worker (see docs/rollback.md).
func RunningGuardedQuery() string {
	return "TemporalChangeVersion = " + strconv.Quote(versionChangeID+"-"+strconv.Itoa(GuardVersion)) +
		` AND ExecutionStatus = "Running"`
}
