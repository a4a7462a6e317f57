package devserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
)

// ErrDataDirInUse is matched (errors.Is) by Start's error when another server,
// in this process or another, is using Options.DataDir.
var ErrDataDirInUse = errors.New("another server is using this data directory")

// Server is a running Temporal dev server: frontend, history, matching and
// worker services, plus the Web UI unless disabled, in this process.
type Server struct {
	opts         Options
	frontendAddr string
	httpAddr     string
	uiURL        string

	server temporal.Server
	ui     *uiserver.Server
	uiDone chan error  // receives ui.Start's result; nil without a UI
	lock   *os.File    // DataDir lock; nil when Ephemeral
	quiet  atomic.Bool // silences the server's logger during Stop

	stopOnce sync.Once
	stopErr  error
}

// Start starts a Temporal server with SQLite persistence in this process,
// creates Options.Namespace if missing, registers Options.SearchAttributes,
// starts the Web UI, and returns once the frontend answers. ctx bounds the
// start only (together with Options.StartTimeout); the server runs until
// Stop.
//
// Invalid options give an *OptionError naming the field; a port that is
// already bound gives a *PortError (errors.Is ErrPortInUse); a data directory
// in use gives an error matching ErrDataDirInUse.
func Start(ctx context.Context, opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()

	s := &Server{opts: o}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()

	ports, err := s.resolvePorts()
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	o = s.opts // with the chosen ports
	s.frontendAddr = hostPort(o.IP, o.FrontendPort)
	s.httpAddr = hostPort(o.IP, o.HTTPPort)

	sqlCfg, err := s.prepareDatabase()
	if err != nil {
		return nil, fmt.Errorf("devserver: prepare database: %w", err)
	}

	if err := s.startServer(sqlCfg, ports); err != nil {
		return nil, fmt.Errorf("devserver: start temporal server: %w", err)
	}
	if err := s.waitFrontend(ctx); err != nil {
		return nil, fmt.Errorf("devserver: wait for frontend %s: %w", s.frontendAddr, err)
	}
	if !o.UIDisabled {
		if err := s.startUI(ctx); err != nil {
			var pe *PortError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("devserver: %w", err)
			}
			return nil, fmt.Errorf("devserver: start web UI: %w", err)
		}
	}
	ok = true
	o.Logger.Info("temporal dev server started",
		zap.String("frontend", s.frontendAddr),
		zap.String("ui", s.uiURL),
		zap.String("namespace", o.Namespace),
		zap.String("dataDir", o.DataDir),
		zap.Bool("ephemeral", o.Ephemeral))
	return s, nil
}

// FrontendHostPort returns the frontend's gRPC address, e.g. "127.0.0.1:7233".
func (s *Server) FrontendHostPort() string { return s.frontendAddr }

// HTTPHostPort returns the address of the frontend's HTTP API,
// e.g. "127.0.0.1:7243".
func (s *Server) HTTPHostPort() string { return s.httpAddr }

// UIURL returns the Web UI's base URL, e.g. "http://127.0.0.1:8233", or ""
// when the UI is disabled.
func (s *Server) UIURL() string { return s.uiURL }

// Namespace returns the namespace Start created or found.
func (s *Server) Namespace() string { return s.opts.Namespace }

// NewClient dials the server. HostPort is always set to FrontendHostPort;
// Namespace defaults to the server's namespace. Close the client before
// Stop.
func (s *Server) NewClient(opts client.Options) (client.Client, error) {
	opts.HostPort = s.frontendAddr
	if opts.Namespace == "" {
		opts.Namespace = s.opts.Namespace
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("devserver: dial %s: %w", s.frontendAddr, err)
	}
	return c, nil
}

// Stop stops the UI and the server and releases the data directory. It is
// safe to call more than once; later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.ui != nil {
			s.ui.Stop()
			select {
			case err := <-s.uiDone:
				if err != nil {
					errs = append(errs, fmt.Errorf("stop web UI: %w", err))
				}
			case <-time.After(5 * time.Second):
				errs = append(errs, errors.New("stop web UI: timed out"))
			}
		}
		if s.server != nil {
			s.quiet.Store(true)
			if err := safeCall(s.server.Stop); err != nil {
				errs = append(errs, fmt.Errorf("stop temporal server: %w", err))
			}
		}
		if s.lock != nil {
			_ = s.lock.Close()
		}
		s.stopErr = errors.Join(errs...)
		if s.stopErr != nil {
			s.stopErr = fmt.Errorf("devserver: %w", s.stopErr)
		}
	})
	return s.stopErr
}

// servicePorts are the gRPC ports of the server's services.
type servicePorts struct {
	frontend, history, matching, worker int
}

// resolvePorts checks the configured ports and picks the free ones.
func (s *Server) resolvePorts() (servicePorts, error) {
	o := &s.opts
	pick := func(field string, p *int) error {
		if *p != 0 {
			return checkPortFree(field, o.IP, *p)
		}
		var err error
		*p, err = freePort(o.IP)
		return err
	}
	if err := pick("FrontendPort", &o.FrontendPort); err != nil {
		return servicePorts{}, err
	}
	if err := pick("HTTPPort", &o.HTTPPort); err != nil {
		return servicePorts{}, err
	}
	if !o.UIDisabled {
		if err := pick("UIPort", &o.UIPort); err != nil {
			return servicePorts{}, err
		}
	}
	ports := servicePorts{frontend: o.FrontendPort}
	for _, p := range []*int{&ports.history, &ports.matching, &ports.worker} {
		if err := pick("", p); err != nil {
			return servicePorts{}, err
		}
	}
	return ports, nil
}

// prepareDatabase locks DataDir, creates the schema on first use and the
// namespace if missing, and returns the SQLite config.
func (s *Server) prepareDatabase() (*config.SQL, error) {
	o := s.opts
	cfg := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.Ephemeral {
		// A shared in-memory database lives while a connection is open; the
		// random name keeps servers in one process apart.
		cfg.DatabaseName = "loopguard-" + strconv.FormatUint(rand.Uint64(), 36)
		cfg.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
	} else {
		if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
			return nil, err
		}
		lock, err := lockDir(filepath.Join(o.DataDir, "LOCK"))
		if err != nil {
			return nil, err
		}
		s.lock = lock
		cfg.DatabaseName = filepath.Join(o.DataDir, DatabaseFile)
		cfg.ConnectAttributes = map[string]string{"mode": "rwc"}
		if err := createSchemaOnce(cfg); err != nil {
			return nil, err
		}
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("namespace %q: %w", o.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(cfg, ns); err != nil {
		return nil, err
	}
	return cfg, nil
}

// createSchemaOnce creates the database file with the server's schema unless
// it exists. The schema is written to a temporary file that is renamed into
// place, so an interrupted first start leaves no half-initialised database.
func createSchemaOnce(cfg *config.SQL) error {
	path := cfg.DatabaseName
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp := path + ".init"
	_ = os.Remove(tmp)
	tmpCfg := *cfg
	tmpCfg.DatabaseName = tmp
	if err := sqliteschema.SetupSchema(&tmpCfg); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("create schema: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

const clusterName = "active"

// startServer builds and starts the Temporal server.
func (s *Server) startServer(sqlCfg *config.SQL, ports servicePorts) error {
	o := s.opts
	level, _ := parseLevel(o.ServerLogLevel) // validated
	logger := newServerLogger(o.Logger.Named("temporal"), level, &s.quiet)

	svc := func(port, httpPort int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: o.IP, HTTPPort: httpPort}}
	}
	cfg := &config.Config{}
	cfg.Global.Membership = config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: o.IP}
	cfg.Persistence = config.Persistence{
		DefaultStore:     "sqlite",
		VisibilityStore:  "sqlite",
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{"sqlite": {SQL: sqlCfg}},
	}
	info := cluster.ClusterInformation{
		Enabled:                true,
		InitialFailoverVersion: 1,
		RPCAddress:             s.frontendAddr,
		HTTPAddress:            s.httpAddr,
	}
	cfg.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation:       map[string]cluster.ClusterInformation{clusterName: info},
	}
	cfg.DCRedirectionPolicy.Policy = "noop"
	cfg.Services = map[string]config.Service{
		string(primitives.FrontendService): svc(ports.frontend, o.HTTPPort),
		string(primitives.HistoryService):  svc(ports.history, 0),
		string(primitives.MatchingService): svc(ports.matching, 0),
		string(primitives.WorkerService):   svc(ports.worker, 0),
	}
	cfg.Archival.History.State = "disabled"
	cfg.Archival.Visibility.State = "disabled"
	cfg.NamespaceDefaults.Archival.History.State = "disabled"
	cfg.NamespaceDefaults.Archival.Visibility.State = "disabled"
	cfg.PublicClient.HostPort = s.frontendAddr

	hosts := map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(s.frontendAddr),
		primitives.HistoryService:  static.SingleLocalHost(hostPort(o.IP, ports.history)),
		primitives.MatchingService: static.SingleLocalHost(hostPort(o.IP, ports.matching)),
		primitives.WorkerService:   static.SingleLocalHost(hostPort(o.IP, ports.worker)),
	}

	dc := dynamicconfig.StaticClient{
		// Search attributes are usable as soon as they are registered,
		// instead of after the cache refresh (the official dev server does
		// the same); the higher persistence rates compensate for the
		// cache misses.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		dynamicconfig.FrontendPersistenceMaxQPS.Key():               10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():                45000,
		// The UI lists workflows often.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// Workflow Pause (pre-release, off by default in the server) is on,
		// so that `worker watch` pauses what it halts on the demo's server
		// (docs/watch.md); DynamicConfig turns it off.
		dynamicconfig.WorkflowPauseEnabled.Key(): true,
	}
	for k, v := range o.DynamicConfig {
		dc[dynamicconfig.MakeKey(k)] = v
	}

	return safeCall(func() error {
		srv, err := temporal.NewServer(
			temporal.WithConfig(cfg),
			temporal.ForServices(temporal.DefaultServices),
			temporal.WithStaticHosts(hosts),
			temporal.WithLogger(logger),
			temporal.WithAuthorizer(authorization.NewNoopAuthorizer()),
			temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper {
				return authorization.NewNoopClaimMapper()
			}),
			temporal.WithDynamicConfigClient(dc),
		)
		if err != nil {
			return err
		}
		s.server = srv
		return srv.Start()
	})
}

// waitFrontend waits until the frontend serves the namespace, then registers
// the search attributes.
func (s *Server) waitFrontend(ctx context.Context) error {
	var (
		c       client.Client
		lastErr error
	)
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		if c == nil {
			c, lastErr = client.DialContext(ctx, client.Options{
				HostPort:  s.frontendAddr,
				Namespace: s.opts.Namespace,
				Logger:    newSDKLogger(s.opts.Logger.Named("client")),
			})
		}
		if c != nil {
			_, lastErr = c.WorkflowService().DescribeNamespace(ctx,
				&workflowservice.DescribeNamespaceRequest{Namespace: s.opts.Namespace})
			if lastErr == nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(delay):
		}
	}
	if err := s.registerSearchAttributes(ctx, c); err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	return nil
}

// registerSearchAttributes adds the attributes the namespace lacks and checks
// the types of those it has.
func (s *Server) registerSearchAttributes(ctx context.Context, c client.Client) error {
	want := s.opts.SearchAttributes
	if len(want) == 0 {
		return nil
	}
	resp, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: s.opts.Namespace})
	if err != nil {
		return err
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		have, ok := resp.GetCustomAttributes()[name]
		if !ok {
			if _, system := resp.GetSystemAttributes()[name]; system {
				return fmt.Errorf("%q is a system search attribute", name)
			}
			missing[name] = typ
		} else if have != typ {
			return fmt.Errorf("%q is already registered as %s, not %s", name, have, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        s.opts.Namespace,
		SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

// startUI starts the Web UI and waits until it answers its health check.
func (s *Server) startUI(ctx context.Context) error {
	o := s.opts
	addr := hostPort(o.IP, o.UIPort)
	err := safeCall(func() error {
		s.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
			Host:                o.IP,
			Port:                o.UIPort,
			TemporalGRPCAddress: s.frontendAddr,
			EnableUI:            true,
			DefaultNamespace:    o.Namespace,
			// Plain HTTP on loopback: the CSRF cookie must not require TLS.
			CORS:     uiconfig.CORS{CookieInsecure: true},
			HideLogs: true,
		}))
		return nil
	})
	if err != nil {
		s.ui = nil
		return err
	}
	// ui.Start blocks until Stop. If it cannot listen, the UI server calls
	// os.Exit through its logger: check the port again right before.
	if err := checkPortFree("UIPort", o.IP, o.UIPort); err != nil {
		s.ui = nil
		return err
	}
	s.uiDone = make(chan error, 1)
	go func() { s.uiDone <- s.ui.Start() }()

	s.uiURL = "http://" + addr
	hc := &http.Client{Timeout: time.Second}
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.uiURL+"/healthz", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case err := <-s.uiDone:
			s.uiDone <- err // for Stop
			return fmt.Errorf("UI server exited: %v", err)
		case <-time.After(delay):
		}
	}
}

// safeCall runs f, turning a panic (such as serverLogger.Fatal's) into an
// error.
func safeCall(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("panic: %v", r)
			}
		}
	}()
	return f()
}

func hostPort(ip string, port int) string {
	return net.JoinHostPort(ip, strconv.Itoa(port))
}
