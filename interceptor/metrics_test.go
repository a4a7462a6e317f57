package interceptor_test

import (
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	sdkinterceptor "go.temporal.io/sdk/interceptor"

	"github.com/loopguard/loopguard/interceptor"
)

// countingHandler records counter increments by name and tags.
type countingHandler struct {
	mu     *sync.Mutex
	counts map[string]int64
	tags   map[string]string
}

func newCountingHandler() *countingHandler {
	return &countingHandler{mu: &sync.Mutex{}, counts: map[string]int64{}}
}

func (h *countingHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := map[string]string{}
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &countingHandler{mu: h.mu, counts: h.counts, tags: merged}
}

func (h *countingHandler) key(name string) string {
	var parts []string
	for k, v := range h.tags {
		if strings.HasPrefix(k, "loop") || k == "reason" || k == "on_halt" {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

func (h *countingHandler) Counter(name string) client.MetricsCounter {
	return counterFunc(func(d int64) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.counts[h.key(name)] += d
	})
}
func (h *countingHandler) Gauge(string) client.MetricsGauge {
	return client.MetricsNopHandler.Gauge("")
}
func (h *countingHandler) Timer(string) client.MetricsTimer {
	return client.MetricsNopHandler.Timer("")
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

func TestMetricsCountHaltsResumesEscalations(t *testing.T) {
	h := newCountingHandler()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	s.SetMetricsHandler(h)
	env := s.NewTestWorkflowEnvironment()
	g, err := interceptor.New(interceptor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env.SetWorkerOptions(worker.Options{Interceptors: []sdkinterceptor.WorkerInterceptor{g}})
	registerScript(env)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("resume", nil) }, decideAfter)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow("escalate", nil) }, 2*decideAfter)
	// Stalls after 3 identical outputs, resumed; stalls again 3 later, escalated.
	env.ExecuteWorkflow(scriptLoop, repeat(9, "Code", "same"))
	res := result(t, env)
	assert.True(t, res.Escalated)
	assert.Equal(t, int64(2), h.counts["loopguard_halts{on_halt=pause,reason=stalled}"], "%v", h.counts)
	assert.Equal(t, int64(1), h.counts["loopguard_resumes{}"], "%v", h.counts)
	assert.Equal(t, int64(1), h.counts["loopguard_escalations{}"], "%v", h.counts)
}
