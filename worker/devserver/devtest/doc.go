// Package devtest starts the embedded Temporal server of package devserver
// for integration tests: in memory, on free ports, stopped when the test
// ends.
//
//	srv := devtest.StartServer(t, devserver.Options{UIDisabled: true})
//	c := devtest.NewClient(t, srv)
//	testsuite.StartWorker(t, c, "agents", testsuite.WorkerOptions{...})
//
// It links the Temporal server, so it lives in the worker module: a test
// that only needs the guard's helpers imports package testsuite, which
// does not.
package devtest
