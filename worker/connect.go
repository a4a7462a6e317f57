package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loopguard/loopguard/worker/devserver"
)

// backend is the Temporal server the worker talks to: the embedded dev
// server, or an external one.
type backend struct {
	client    client.Client
	server    *devserver.Server // nil for an external server
	address   string            // frontend host:port
	httpAddr  string            // the embedded server's HTTP API host:port, "" for an external server
	namespace string
	uiURL     string // base URL of the Web UI, "" if unknown
	// searchAttribute is the guard's Keyword search attribute, "" for none.
	searchAttribute string
	// pausedSince is the guard's Datetime search attribute, "" for none.
	pausedSince string
}

// close closes the client, then stops the embedded server.
func (b *backend) close() error {
	b.client.Close()
	if b.server != nil {
		return b.server.Stop()
	}
	return nil
}

// connect starts the embedded server or dials the external one.
// metrics, if not nil, is the client's metrics handler.
func connect(ctx context.Context, cfg config, metrics client.MetricsHandler, logger *zap.Logger) (*backend, error) {
	if cfg.remote {
		return dialExternal(ctx, cfg, metrics, logger)
	}
	srv, err := startEmbedded(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	c, err := srv.NewClient(client.Options{Logger: newSDKLogger(logger.Named("sdk")), MetricsHandler: metrics})
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	b := &backend{
		client:          c,
		server:          srv,
		address:         srv.FrontendHostPort(),
		httpAddr:        srv.HTTPHostPort(),
		namespace:       srv.Namespace(),
		uiURL:           srv.UIURL(),
		searchAttribute: embeddedSearchAttribute(cfg),
	}
	if b.searchAttribute != "" {
		b.pausedSince = defaultPausedSinceAttribute
	}
	if cfg.uiURL != "" {
		b.uiURL = cfg.uiURL
	}
	return b, nil
}

func embeddedSearchAttribute(cfg config) string {
	switch cfg.searchAttribute {
	case "":
		return defaultSearchAttribute
	case searchAttributeNone:
		return ""
	}
	return cfg.searchAttribute
}

// startEmbedded starts the embedded Temporal server and Web UI on
// 127.0.0.1 as the worker does: ports from the flags (0 picks a free one),
// the guard's search attribute registered as a Keyword.
func startEmbedded(ctx context.Context, cfg config, logger *zap.Logger) (*devserver.Server, error) {
	opts := devserver.Options{
		DataDir:        cfg.dataDir,
		Ephemeral:      cfg.ephemeral,
		IP:             devserver.DefaultIP,
		FrontendPort:   cfg.port,
		HTTPPort:       cfg.httpPort,
		UIPort:         cfg.uiPort,
		UIDisabled:     cfg.noUI,
		FreePorts:      true, // ports left at 0 are chosen free
		Namespace:      cfg.namespace,
		Logger:         logger.Named("server"),
		ServerLogLevel: cfg.serverLogLevel,
	}
	if sa := embeddedSearchAttribute(cfg); sa != "" {
		opts.SearchAttributes = map[string]enumspb.IndexedValueType{
			sa:                          enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			defaultPausedSinceAttribute: enumspb.INDEXED_VALUE_TYPE_DATETIME,
		}
	}
	srv, err := devserver.Start(ctx, opts)
	if err != nil {
		var pe *devserver.PortError
		var oe *devserver.OptionError
		switch {
		case errors.As(err, &pe):
			return nil, fmt.Errorf("start the embedded Temporal server: %s is already in use (another Temporal server running? choose free ports with --port 0 --ui-port 0, or point TEMPORAL_ADDRESS at the running server)", portFlag(pe))
		case errors.Is(err, devserver.ErrDataDirInUse):
			return nil, fmt.Errorf("start the embedded Temporal server: another worker is using %s (stop it, or use --data-dir or --ephemeral)", cfg.dataDir)
		case errors.As(err, &oe):
			return nil, &usageError{err: fmt.Errorf("embedded Temporal server: %s", strings.TrimPrefix(oe.Error(), "devserver: "))}
		}
		return nil, fmt.Errorf("start the embedded Temporal server: %s", strings.TrimPrefix(err.Error(), "devserver: "))
	}
	return srv, nil
}

// portFlag names a busy port by its flag: "127.0.0.1:7233 (--port)".
func portFlag(pe *devserver.PortError) string {
	flags := map[string]string{"FrontendPort": "--port", "UIPort": "--ui-port", "HTTPPort": "--http-port"}
	if flag, ok := flags[pe.Field]; ok {
		return pe.Addr + " (" + flag + ")"
	}
	return pe.Addr
}

// dialExternal dials the server named by --address or the environment
// (TEMPORAL_ADDRESS, TLS, API key, profile: the SDK's envconfig, as the
// temporal CLI reads them) and checks that it answers and has the
// namespace, within --connect-timeout.
func dialExternal(ctx context.Context, cfg config, metrics client.MetricsHandler, logger *zap.Logger) (*backend, error) {
	opts, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("temporal client configuration: %v", err)}
	}
	if cfg.address != "" {
		opts.HostPort = cfg.address
	}
	if opts.HostPort == "" {
		opts.HostPort = client.DefaultHostPort
	}
	if cfg.namespace != "" {
		opts.Namespace = cfg.namespace
	}
	if opts.Namespace == "" {
		opts.Namespace = client.DefaultNamespace
	}
	opts.Logger = newSDKLogger(logger.Named("sdk"))
	opts.MetricsHandler = metrics

	dctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("dial temporal at %s: %s", opts.HostPort, dialErrorText(dctx, err, cfg))
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	_, err = c.WorkflowService().DescribeNamespace(dctx, &workflowservice.DescribeNamespaceRequest{Namespace: opts.Namespace})
	var notFound *serviceerror.NamespaceNotFound
	switch {
	case err == nil:
	case errors.As(err, &notFound) || status.Code(err) == codes.NotFound:
		return nil, fmt.Errorf("temporal at %s has no namespace %q (create it, or choose another with --namespace or TEMPORAL_NAMESPACE)", opts.HostPort, opts.Namespace)
	case status.Code(err) == codes.PermissionDenied:
		logger.Warn("cannot describe the namespace; going on", zap.String("namespace", opts.Namespace), zap.Error(err))
	default:
		return nil, fmt.Errorf("describe namespace %q at %s: %s", opts.Namespace, opts.HostPort, dialErrorText(dctx, err, cfg))
	}

	sa, since, err := externalSearchAttribute(dctx, c, opts.Namespace, cfg, logger)
	if err != nil {
		return nil, err
	}
	ok = true
	return &backend{
		client:          c,
		address:         opts.HostPort,
		namespace:       opts.Namespace,
		uiURL:           cfg.uiURL,
		searchAttribute: sa,
		pausedSince:     since,
	}, nil
}

// externalSearchAttribute decides the guard's search attributes on an
// external server: the Keyword state and the Datetime pause start. The
// guard must never set an attribute the namespace lacks (the workflow task
// would fail again and again), so a named one must be registered as a
// Keyword, and by default LoopGuardState is used only when it is
// registered; LoopGuardPausedSince only when it is registered as a
// Datetime. Without the Keyword nothing paused can be counted: that is
// said loudly, once here and for good in the
// loopguard_search_attribute_enabled gauge.
func externalSearchAttribute(ctx context.Context, c client.Client, namespace string, cfg config, logger *zap.Logger) (attr, since string, err error) {
	if cfg.searchAttribute == searchAttributeNone {
		return "", "", nil
	}
	name := cfg.searchAttribute
	if name == "" {
		name = defaultSearchAttribute
	}
	resp, err := listSearchAttributes(ctx, c, namespace)
	if err != nil {
		if cfg.searchAttribute != "" {
			logger.Warn("cannot list the namespace's search attributes; using the one given, which must be a registered Keyword",
				zap.String("searchAttribute", name), zap.Error(err))
			return name, "", nil
		}
		logger.Warn("cannot list the namespace's search attributes; the guard sets none, and paused workflows cannot be counted or alerted on", zap.Error(err))
		return "", "", nil
	}
	attrs := resp.GetCustomAttributes()
	typ, ok := attrs[name]
	switch {
	case ok && typ == enumspb.INDEXED_VALUE_TYPE_KEYWORD:
	case ok:
		return "", "", &usageError{err: fmt.Errorf("search attribute %q is registered on namespace %q as %s, not Keyword", name, namespace, typ)}
	case cfg.searchAttribute != "":
		return "", "", &usageError{err: fmt.Errorf("search attribute %q is not registered on namespace %q (temporal operator search-attribute create --namespace %s --name %s --type Keyword)", name, namespace, namespace, name)}
	default:
		logger.Warn("search attribute not registered: the guard sets none, paused workflows cannot be listed, counted or alerted on (loopguard_search_attribute_enabled 0); register it and restart the worker",
			zap.String("searchAttribute", name), zap.String("namespace", namespace),
			zap.String("fix", fmt.Sprintf("temporal operator search-attribute create --namespace %s --name %s --type Keyword --name %s --type Datetime", namespace, name, defaultPausedSinceAttribute)))
		return "", "", nil
	}
	if attrs[defaultPausedSinceAttribute] == enumspb.INDEXED_VALUE_TYPE_DATETIME {
		return name, defaultPausedSinceAttribute, nil
	}
	logger.Warn("Datetime search attribute not registered: paused workflows are counted, but how long they have waited is not (no loopguard_oldest_pause_seconds)",
		zap.String("searchAttribute", defaultPausedSinceAttribute), zap.String("namespace", namespace),
		zap.String("fix", fmt.Sprintf("temporal operator search-attribute create --namespace %s --name %s --type Datetime", namespace, defaultPausedSinceAttribute)))
	return name, "", nil
}

// dialErrorText shortens the gRPC error of a failed dial (within ctx) to
// its cause.
func dialErrorText(ctx context.Context, err error, cfg config) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return "connection refused"
	case strings.Contains(msg, "no such host"):
		return "no such host"
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		status.Code(err) == codes.DeadlineExceeded || strings.Contains(msg, "deadline exceeded"):
		return fmt.Sprintf("no answer within %s (--connect-timeout)", cfg.connectTimeout)
	case status.Code(err) == codes.Unauthenticated || status.Code(err) == codes.PermissionDenied:
		return "not authorized: " + status.Convert(unwrapAll(err)).Message() + " (check TEMPORAL_API_KEY or the TLS client certificate)"
	}
	if s, ok := status.FromError(unwrapAll(err)); ok && s.Message() != "" {
		return s.Message()
	}
	return msg
}

func unwrapAll(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// listSearchAttributes lists the namespace's search attributes, trying
// again for a few seconds when the call fails: a worker that starts while
// its server is busy or coming back must not run for good without the
// attribute (and its paused gauge and alerts) because of one transient
// error. The production recipe saw a restarted worker report
// loopguard_search_attribute_enabled 0 on a loaded machine.
func listSearchAttributes(ctx context.Context, c client.Client, namespace string) (*operatorservice.ListSearchAttributesResponse, error) {
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if err == nil || try == 5 || ctx.Err() != nil {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}
