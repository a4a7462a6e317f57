// Package layout holds the test that keeps the library module free of the
// Temporal server: a user who imports interceptor or testsuite must never
// download or compile it (issue 8).
package layout
