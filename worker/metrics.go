package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.uber.org/zap"

	"github.com/loopguard/loopguard/interceptor"
)

// pauseWaitBuckets are the histogram buckets, in seconds, of every timer:
// the SDK's latencies (milliseconds to seconds) and the guard's pause wait
// (minutes to days) share them, so they span both.
var pauseWaitBuckets = []float64{
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
	60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800,
}

// metricsReportInterval is how often tally hands counters to the Prometheus
// registry: a scrape sees an increment at most this late.
const metricsReportInterval = time.Second

// metricsServer serves /metrics: the SDK's metrics and the guard's, which
// both go through the client's metrics handler, and the worker's gauges.
type metricsServer struct {
	handler client.MetricsHandler
	addr    string // the address listened on, with the port chosen if 0
	scope   interface{ Close() error }
	srv     *http.Server
	done    chan struct{}
}

// startMetrics listens on addr and serves the Prometheus exposition at
// /metrics. The names follow OpenMetrics conventions (the SDK's
// Prometheus naming scope): counters end in _total, timers are histograms
// in seconds.
func startMetrics(addr string, logger *zap.Logger) (*metricsServer, error) {
	registry := prom.NewRegistry()
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              registry,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: pauseWaitBuckets,
		OnRegisterError: func(err error) {
			logger.Warn("metrics: cannot register a series", zap.Error(err))
		},
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:         reporter,
		Separator:              tallyprom.DefaultSeparator,
		SanitizeOptions:        &sdktally.PrometheusSanitizeOptions,
		OmitCardinalityMetrics: true,
	}, metricsReportInterval)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = closer.Close()
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", reporter.HTTPHandler())
	m := &metricsServer{
		handler: sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)),
		addr:    ln.Addr().String(),
		scope:   closer,
		srv:     &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done:    make(chan struct{}),
	}
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics: server stopped", zap.Error(err))
		}
	}()
	return m, nil
}

// close stops serving and the tally scope.
func (m *metricsServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	<-m.done
	_ = m.scope.Close()
}

// pausedPollInterval is how often the worker counts paused workflows (a
// variable for the tests).
var pausedPollInterval = 15 * time.Second

// pausedListLimit bounds the workflows the worker watches for the oldest
// pause: the first page of the visibility listing.
const pausedListLimit = 1000

// pausedWatcher sets the paused-workflows gauges from visibility. Workflow
// code cannot count what other executions do, and a gauge set from inside
// workflows would be wrong after any restart; visibility knows.
type pausedWatcher struct {
	client    client.Client
	namespace string
	query     string
	paused    client.MetricsGauge
	oldest    client.MetricsGauge
	logger    *zap.Logger
	now       func() time.Time

	// since is when this worker first saw each paused execution.
	since map[string]time.Time
}

func newPausedWatcher(c client.Client, namespace, searchAttribute string, h client.MetricsHandler, logger *zap.Logger) *pausedWatcher {
	h = h.WithTags(map[string]string{"namespace": namespace})
	return &pausedWatcher{
		client:    c,
		namespace: namespace,
		query:     interceptor.PausedQuery(searchAttribute),
		paused:    h.Gauge(interceptor.MetricPausedWorkflows),
		oldest:    h.Gauge(interceptor.MetricOldestPause),
		logger:    logger,
		now:       time.Now,
		since:     map[string]time.Time{},
	}
}

// run polls every interval until ctx is done.
func (p *pausedWatcher) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, interval)
		if err := p.poll(pctx); err != nil && ctx.Err() == nil {
			p.logger.Warn("metrics: cannot count paused workflows", zap.String("query", p.query), zap.Error(err))
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll counts the paused workflows and updates the oldest pause.
func (p *pausedWatcher) poll(ctx context.Context) error {
	count, err := p.client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: p.namespace, Query: p.query})
	if err != nil {
		return err
	}
	p.paused.Update(float64(count.GetCount()))

	list, err := p.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: p.namespace, Query: p.query, PageSize: pausedListLimit,
	})
	if err != nil {
		return err
	}
	now := p.now()
	seen := make(map[string]time.Time, len(list.GetExecutions()))
	var oldest time.Duration
	for _, e := range list.GetExecutions() {
		key := e.GetExecution().GetWorkflowId() + "/" + e.GetExecution().GetRunId()
		first, ok := p.since[key]
		if !ok {
			first = now
		}
		seen[key] = first
		oldest = max(oldest, now.Sub(first))
	}
	p.since = seen
	p.oldest.Update(oldest.Seconds())
	return nil
}
