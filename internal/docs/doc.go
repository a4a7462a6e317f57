// Package docs holds the tests that keep the repository's documentation
// true to the code: every version, default, metric name, command and link
// a doc states either comes from the code or is checked here (issue 24).
// The per-call figures are checked by the tests that measure them
// (testsuite's TestGuardReplayCostPerCall and TestNoticeReplayCost), the
// go doc defaults of Options by interceptor's
// TestOptionsDocStatesTheDefaults, and the rollback query by interceptor's
// TestDocsQuoteTheRollbackQuery.
package docs
