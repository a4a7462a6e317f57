package e2e_test

import "github.com/loopguard/loopguard/internal/scripted"

// The scripted loop of the guard's unit tests, run here on a real server.
type (
	turn       = scripted.Turn
	loopResult = scripted.LoopResult
)

var (
	scriptLoop     = scripted.ScriptLoop
	continuingLoop = scripted.ContinuingLoop
	nodes          = scripted.Nodes
	repeat         = scripted.Repeat
	codeVerify     = scripted.CodeVerify
	registerScript = scripted.Register
)

// historiesDir holds the recorded fixtures of package testsuite.
const historiesDir = "../../testsuite/testdata/histories"
