// Package devserver runs a complete Temporal server and its Web UI inside the
// current process, for local development and tests of loopguard workers.
//
// Start brings up the frontend, history, matching and worker services of
// go.temporal.io/server with SQLite persistence, creates the namespace,
// registers custom search attributes (such as the guard's Keyword attribute
// "LoopGuardState"), starts the Web UI from github.com/temporalio/ui-server,
// and returns once the frontend answers:
//
//	srv, err := devserver.Start(ctx, devserver.Options{
//		SearchAttributes: map[string]enums.IndexedValueType{
//			"LoopGuardState": enums.INDEXED_VALUE_TYPE_KEYWORD,
//		},
//	})
//	if err != nil {
//		return err
//	}
//	defer srv.Stop()
//	c, err := srv.NewClient(client.Options{})
//
// With the zero Options the state lives in ./loopguard-data/temporal.db, so
// workflows survive a restart of the process; the frontend listens on
// 127.0.0.1:7233 and the UI on http://127.0.0.1:8233. Set Ephemeral for an
// in-memory database and FreePorts to let tests run servers side by side.
//
// Everything listens on loopback only: there is no TLS and no authentication.
// For anything shared, run a real Temporal cluster (see docker-compose.yml at
// the repository root) and point the worker at it.
//
// Things to know:
//
//   - The server's logs go to Options.Logger, filtered by
//     Options.ServerLogLevel (default "warn"; the server is very noisy at
//     info). Logging stops when Stop begins, to hide the shutdown chatter.
//   - Start checks every configured port before binding it and fails with a
//     *PortError (errors.Is ErrPortInUse) naming the field and address. The
//     Web UI server calls os.Exit if its port is taken in the instant between
//     that check and its own bind; the Temporal server's own fatal errors
//     panic instead (this package never lets them call os.Exit).
//   - One data directory serves one server at a time (an advisory lock file,
//     LOCK, guards it; a second Start fails with ErrDataDirInUse). The SQLite schema is created on first use and is not
//     migrated: a data directory written by another server version may need
//     to be deleted.
//   - The namespace is created with NamespaceRetention (24h); closed
//     workflows disappear after that.
//   - Search attributes are visible to workflows as soon as Start returns
//     (the server is configured to refresh its search attribute cache on
//     read, as the official CLI dev server does).
//   - Stop takes about a second.
package devserver
