// Package activities holds the simulated AI agents of loopguard's sample
// loops: a coder, a verifier, a planner, a researcher, a job poller and a
// summariser, all methods of [Agents].
//
// Register them with
//
//	w.RegisterActivity(&activities.Agents{})
//
// so that the activity type names (and so the guard's node names) are the
// method names: Code, Verify, Plan, Research, CheckStatus and Summarize.
//
// No agent calls a network or a model. Each one follows a script chosen by
// the scenario name in its request (see the Scenario constants) and the turn,
// step or poll number: a pure function of the request, so the same request
// always gives the same result and every sample run is repeatable. The
// scripts reproduce the ways real agent loops go wrong: a coder re-proposing
// the same patch, tests that stay red whatever the patch, a coder flipping
// between two patches, a verifier whose sandbox is broken, slow progress
// that never converges, and a planner and a researcher talking past each
// other.
//
// Every result carries a GeneratedAt field, a simulated timestamp that
// changes on every call, as real agent outputs do (timestamps, run ids).
// Detectors that compare outputs must ignore it: the sample guard options
// (workflows.GuardOptions) list it in IgnoreFields. Results that cost model
// tokens report them in Cost, and the verifier reports the failing test count
// in Failing, the metric the guard watches for improvement.
package activities
