// Package uitest answers a loop halt from a real browser: Debian's
// chromium, driven by chromedp, against the embedded Temporal server and
// Web UI (worker/devserver) and a worker running the guard. It is the test
// behind "humans answer halts in the Temporal UI": the halted workflow is
// found with the LoopGuardState filter, its current details show the halt,
// and the UI's own signal form sends resume.
//
// The test skips, saying so, only when no chromium is installed
// (apt-get install chromium). LOOPGUARD_UI_SCREENSHOT=path saves the
// screenshot of the halted workflow there (docs/halted-workflow.png is
// made that way).
package uitest
