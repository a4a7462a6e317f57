package interceptor

import (
	"context"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// PluginName is the name of the guard's worker plugin.
const PluginName = "loopguard"

// New returns the loop guard as a worker interceptor, for
// worker.Options{Interceptors: ...}. It validates opts and returns an
// *OptionError naming the first invalid field.
func New(opts Options) (sdkinterceptor.WorkerInterceptor, error) {
	cfg, h, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	return &root{cfg: cfg, hooks: h}, nil
}

// NewPlugin returns the loop guard as a worker plugin, for workers (and
// replayers) built with worker.Options{Plugins: ...}.
func NewPlugin(opts Options) (*temporal.SimplePlugin, error) {
	i, err := New(opts)
	if err != nil {
		return nil, err
	}
	return temporal.NewSimplePlugin(temporal.SimplePluginOptions{
		Name:               PluginName,
		WorkerInterceptors: []sdkinterceptor.WorkerInterceptor{i},
	})
}

// root is the worker interceptor: it gives each workflow execution its own
// guard. The guard watches calls from the workflow side, where its state is
// deterministic; on the activity side it only hands each activity its
// notice (NoticeFrom).
type root struct {
	sdkinterceptor.WorkerInterceptorBase
	cfg   config
	hooks hooks
}

var _ sdkinterceptor.WorkerInterceptor = (*root)(nil)

// InterceptActivity gives activities their notice.
func (r *root) InterceptActivity(ctx context.Context, next sdkinterceptor.ActivityInboundInterceptor) sdkinterceptor.ActivityInboundInterceptor {
	a := &activityInbound{}
	a.Next = next
	return a
}

// InterceptWorkflow runs once per workflow context, including every replay
// from scratch, so the guard's state is rebuilt from history each time.
func (r *root) InterceptWorkflow(
	ctx workflow.Context,
	next sdkinterceptor.WorkflowInboundInterceptor,
) sdkinterceptor.WorkflowInboundInterceptor {
	g := &guard{core: core{cfg: r.cfg.clone(), hooks: r.hooks}}
	in := &inbound{g: g}
	in.Next = next
	return in
}
