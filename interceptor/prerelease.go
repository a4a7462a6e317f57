package interceptor

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// prereleaseError is why a workflow task of a run recorded by a
// pre-release loopguard build fails: this release replays only the guard
// version it records (guardVersion). Replaying an older history with the
// current code would issue other commands (a nondeterminism failure at
// some later event, far from its cause) or, worse, decide differently
// without one. Failing the task at the marker says why at once; the SDK
// retries the task, so the run waits, intact, for its remedy.
type prereleaseError struct {
	Version workflow.Version
}

func (e prereleaseError) Error() string {
	return fmt.Sprintf("loopguard: this run was recorded by a pre-release loopguard build (guard version %d); "+
		"this release replays only guard version %d: finish or drain such runs on the build that started them "+
		"(Options.Retire stops it guarding new ones), or reset them to before their first guarded call",
		e.Version, guardVersion)
}

// refusePrerelease fails the workflow task (a panic in workflow code does,
// and the task is retried) when the history's guard version is not the
// one this release runs.
func refusePrerelease(v workflow.Version) {
	if v != guardVersion {
		panic(prereleaseError{Version: v})
	}
}
