// Package scripted holds the scripted agent loop that loopguard's own tests
// run: a workflow that makes the guarded calls a script lists, and one
// activity that answers each call as the script says. The guard's unit
// tests (TestWorkflowEnvironment) and its real-server tests (in the worker
// module) run the same scripts, so a scenario reads the same at both
// levels.
//
// It is internal: users never import it, and it imports only the SDK.
package scripted
