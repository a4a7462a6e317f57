package devserver_test

import (
	"context"
	"errors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap/zaptest"

	"github.com/loopguard/loopguard/worker/devserver"
)

const stateAttr = "LoopGuardState"

var stateKey = temporal.NewSearchAttributeKeyKeyword(stateAttr)

func greet(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

// greetWorkflow runs one activity and marks itself in the guard's search
// attribute.
func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	if err := workflow.ExecuteActivity(ctx, greet, name).Get(ctx, &out); err != nil {
		return "", err
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, stateKey.ValueSet("done")); err != nil {
		return "", err
	}
	return out, nil
}

// waitWorkflow runs one activity, then waits for the "go" signal and returns
// its payload prefixed with the activity's result.
func waitWorkflow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var first string
	if err := workflow.ExecuteActivity(ctx, greet, "before").Get(ctx, &first); err != nil {
		return "", err
	}
	var sig string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &sig)
	return first + ", " + sig, nil
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func start(t *testing.T, ctx context.Context, opts devserver.Options) *devserver.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	began := time.Now()
	s, err := devserver.Start(ctx, opts)
	require.NoError(t, err)
	t.Logf("started in %v: frontend %s, UI %q", time.Since(began).Round(time.Millisecond), s.FrontendHostPort(), s.UIURL())
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// newClient dials s; close is idempotent and also runs at cleanup.
func newClient(t *testing.T, s *devserver.Server) (client.Client, func()) {
	t.Helper()
	c, err := s.NewClient(client.Options{Logger: testSDKLogger(t)})
	require.NoError(t, err)
	closeClient := sync.OnceFunc(c.Close)
	t.Cleanup(closeClient)
	return c, closeClient
}

// testSDKLogger sends the SDK's warnings and errors to the test log.
func testSDKLogger(t *testing.T) log.Logger {
	h := slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})
	return log.NewStructuredLogger(slog.New(h))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// startWorker runs the test workflows and activity on queue; stop is
// idempotent and also runs at cleanup.
func startWorker(t *testing.T, c client.Client, queue string) (stop func()) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterWorkflow(waitWorkflow)
	w.RegisterActivity(greet)
	require.NoError(t, w.Start())
	stop = sync.OnceFunc(w.Stop)
	t.Cleanup(stop)
	return stop
}

func httpGet(t *testing.T, ctx context.Context, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestEphemeralWorkflowUIAndSearchAttribute(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	s := start(t, ctx, devserver.Options{
		Ephemeral:        true,
		FreePorts:        true,
		SearchAttributes: map[string]enumspb.IndexedValueType{stateAttr: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	require.Equal(t, "default", s.Namespace())
	require.True(t, strings.HasPrefix(s.UIURL(), "http://127.0.0.1:"), s.UIURL())
	require.True(t, strings.HasPrefix(s.FrontendHostPort(), "127.0.0.1:"), s.FrontendHostPort())

	c, closeClient := newClient(t, s)

	// The search attribute is registered.
	sa, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: s.Namespace()})
	require.NoError(t, err)
	require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sa.GetCustomAttributes()[stateAttr])

	// A workflow and its activity run to completion through a real worker.
	stopWorker := startWorker(t, c, "devserver-test")
	began := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "greet-ephemeral", TaskQueue: "devserver-test",
	}, greetWorkflow, "loopguard")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "hello loopguard", out)
	t.Logf("first workflow completed in %v", time.Since(began).Round(time.Millisecond))

	// The search attribute value set by the workflow is queryable.
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: stateAttr + ` = "done"`,
		})
		return err == nil && len(resp.GetExecutions()) == 1 &&
			resp.GetExecutions()[0].GetExecution().GetWorkflowId() == "greet-ephemeral"
	}, 10*time.Second, 50*time.Millisecond)

	// Workflow Pause is on by default (for `worker watch`): a pause of the
	// completed workflow is refused as such, not as Unimplemented.
	_, err = c.WorkflowService().PauseWorkflowExecution(ctx, &workflowservice.PauseWorkflowExecutionRequest{
		Namespace: s.Namespace(), WorkflowId: "greet-ephemeral", RequestId: "devserver-test",
	})
	require.Error(t, err)
	require.NotEqual(t, codes.Unimplemented, status.Code(err), "Workflow Pause is off: %v", err)

	// The UI serves its app and lists the workflow through its API.
	code, body := httpGet(t, ctx, s.UIURL()+"/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, strings.ToLower(body), "<html")
	code, body = httpGet(t, ctx, s.UIURL()+"/api/v1/namespaces/"+s.Namespace()+"/workflows")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"greet-ephemeral"`)

	stopWorker()
	closeClient()
	require.NoError(t, s.Stop())
	require.NoError(t, s.Stop(), "second Stop")
}

func TestFilePersistenceAcrossRestart(t *testing.T) {
	ctx := testContext(t, 40*time.Second)
	dir := t.TempDir()
	opts := devserver.Options{
		DataDir:          dir,
		FreePorts:        true,
		UIDisabled:       true,
		SearchAttributes: map[string]enumspb.IndexedValueType{stateAttr: enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	}

	// First life: the workflow runs its activity and waits for the signal.
	s1, err := devserver.Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s1.Stop() })
	require.Empty(t, s1.UIURL())
	c1, closeC1 := newClient(t, s1)
	stopW1 := startWorker(t, c1, "devserver-restart")
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "wait-restart", TaskQueue: "devserver-restart",
	}, waitWorkflow)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		hist := c1.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for hist.HasNext() {
			ev, err := hist.Next()
			if err != nil {
				return false
			}
			if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond, "activity completes before the restart")
	stopW1()
	closeC1()
	require.NoError(t, s1.Stop())

	// Second life on the same directory: the workflow is still running and
	// completes after the signal.
	opts.SearchAttributes = map[string]enumspb.IndexedValueType{
		stateAttr:        enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"LoopGuardHalts": enumspb.INDEXED_VALUE_TYPE_INT,
	}
	s2 := start(t, ctx, opts)
	c2, closeC2 := newClient(t, s2)
	desc, err := c2.DescribeWorkflowExecution(ctx, "wait-restart", "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
	stopW2 := startWorker(t, c2, "devserver-restart")
	require.NoError(t, c2.SignalWorkflow(ctx, "wait-restart", "", "go", "after"))
	var out string
	require.NoError(t, c2.GetWorkflow(ctx, "wait-restart", "").Get(ctx, &out))
	require.Equal(t, "hello before, after", out)

	// The attribute registered in the first life is still there, and the one
	// added for the second life was registered too.
	sa, err := c2.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: s2.Namespace()})
	require.NoError(t, err)
	require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sa.GetCustomAttributes()[stateAttr])
	require.Equal(t, enumspb.INDEXED_VALUE_TYPE_INT, sa.GetCustomAttributes()["LoopGuardHalts"])
	stopW2()
	closeC2()
	require.NoError(t, s2.Stop())

	// Third start: asking for an existing attribute with another type fails.
	opts.SearchAttributes = map[string]enumspb.IndexedValueType{stateAttr: enumspb.INDEXED_VALUE_TYPE_TEXT}
	_, err = devserver.Start(ctx, opts)
	require.ErrorContains(t, err, `"LoopGuardState" is already registered as Keyword`)
}

func TestDataDirInUse(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	dir := t.TempDir()
	start(t, ctx, devserver.Options{DataDir: dir, FreePorts: true, UIDisabled: true})
	_, err := devserver.Start(ctx, devserver.Options{DataDir: dir, FreePorts: true, UIDisabled: true})
	require.ErrorIs(t, err, devserver.ErrDataDirInUse)
	require.ErrorContains(t, err, "another server is using this data directory")
}

func TestInvalidOptions(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	for _, tc := range []struct {
		field string
		opts  devserver.Options
	}{
		{"DataDir", devserver.Options{Ephemeral: true, DataDir: "x"}},
		{"IP", devserver.Options{Ephemeral: true, IP: "not-an-ip"}},
		{"IP", devserver.Options{Ephemeral: true, IP: "0.0.0.0"}},
		{"FrontendPort", devserver.Options{Ephemeral: true, FrontendPort: -1}},
		{"FrontendPort", devserver.Options{Ephemeral: true, FrontendPort: 70000}},
		{"HTTPPort", devserver.Options{Ephemeral: true, HTTPPort: -2}},
		{"HTTPPort", devserver.Options{Ephemeral: true, HTTPPort: 7233}},
		{"UIPort", devserver.Options{Ephemeral: true, UIPort: 7233}},
		{"Namespace", devserver.Options{Ephemeral: true, Namespace: "has space"}},
		{"SearchAttributes", devserver.Options{Ephemeral: true, SearchAttributes: map[string]enumspb.IndexedValueType{"": enumspb.INDEXED_VALUE_TYPE_KEYWORD}}},
		{"SearchAttributes", devserver.Options{Ephemeral: true, SearchAttributes: map[string]enumspb.IndexedValueType{"X": enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED}}},
		{"ServerLogLevel", devserver.Options{Ephemeral: true, ServerLogLevel: "loud"}},
		{"StartTimeout", devserver.Options{Ephemeral: true, StartTimeout: -time.Second}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			s, err := devserver.Start(ctx, tc.opts)
			require.Nil(t, s)
			require.Error(t, err)
			var oe *devserver.OptionError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, tc.field, oe.Field)
			require.Contains(t, err.Error(), "Options."+tc.field)
		})
	}
}

func TestPortInUse(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	for _, tc := range []struct {
		field string
		opts  devserver.Options
	}{
		{"FrontendPort", devserver.Options{Ephemeral: true, FreePorts: true, FrontendPort: busy}},
		{"UIPort", devserver.Options{Ephemeral: true, FreePorts: true, UIPort: busy}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			s, err := devserver.Start(ctx, tc.opts)
			require.Nil(t, s)
			require.ErrorIs(t, err, devserver.ErrPortInUse)
			var pe *devserver.PortError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.field, pe.Field)
			require.Equal(t, "127.0.0.1:"+strconv.Itoa(busy), pe.Addr)
			require.ErrorIs(t, err, syscall.EADDRINUSE)
			require.Equal(t, "devserver: "+tc.field+" 127.0.0.1:"+strconv.Itoa(busy)+": port already in use: "+pe.Err.Error(), err.Error())
			require.False(t, errors.Is(err, context.DeadlineExceeded))
			t.Log(err)
		})
	}
}

// TestZeroOptions starts the zero value: default ports and ./loopguard-data.
// It is skipped when 7233 or 8233 is taken (e.g. by a running dev server).
func TestZeroOptions(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	t.Chdir(t.TempDir())
	s, err := devserver.Start(ctx, devserver.Options{})
	if errors.Is(err, devserver.ErrPortInUse) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	require.Equal(t, "127.0.0.1:7233", s.FrontendHostPort())
	require.Equal(t, "http://127.0.0.1:8233", s.UIURL())
	require.Equal(t, "default", s.Namespace())
	require.FileExists(t, filepath.Join("loopguard-data", devserver.DatabaseFile))

	code, _ := httpGet(t, ctx, s.UIURL()+"/api/v1/namespaces/default")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, s.Stop())
}
