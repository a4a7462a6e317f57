package interceptor

import (
	"strconv"
	"strings"
)

// GuardVersion is the guard version new executions record in their version
// marker (change id "loopguard"): every version from 1 to GuardVersion
// replays as it was recorded.
const GuardVersion = int(guardedVersion)

// RunningGuardedQuery returns the visibility query that lists the open
// executions carrying the guard's version marker, of any guard version this
// release knows. The SDK records a marker in the TemporalChangeVersion search
// attribute as "loopguard-<version>"; an execution recorded by any version
// must be drained before the guard is removed from a worker (see
// docs/rollback.md). The list is built from the versions, so it cannot fall
// behind a new one.
func RunningGuardedQuery() string {
	var b strings.Builder
	b.WriteString("TemporalChangeVersion IN (")
	for v := int(versionFirst); v <= GuardVersion; v++ {
		if v > int(versionFirst) {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(versionChangeID + "-" + strconv.Itoa(v)))
	}
	b.WriteString(`) AND ExecutionStatus = "Running"`)
	return b.String()
}
