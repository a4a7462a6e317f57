package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"
)

// The watcher learns where Workflow Pause works before the first halt:
// the namespace says whether it offers pause (DescribeNamespace,
// capabilities.workflow_pause: the flag frontend.WorkflowPauseEnabled on
// a self-hosted server, an invitation on Temporal Cloud), and the
// server's version says whether its pause has the known race. The
// fallback is chosen then, and said in one line.

// pauseSupport is what the start-up check found.
type pauseSupport struct {
	// Pause is set when halts will pause; Known when the check read the
	// namespace (else the first pause finds out, as before the check).
	Pause, Known bool
	// Race is set for a server whose pause has the known race: its
	// fallback is never retried with pause.
	Race   bool
	Reason string
}

// judgePause decides from the namespace's capability (capKnown: the
// server reports capabilities), the server version and the namespace's
// name.
func judgePause(capKnown, capPause bool, version, namespace string) pauseSupport {
	major, minor, ok := parseVersion(version)
	switch {
	case ok && major == 1 && minor < 30:
		return pauseSupport{Known: true, Reason: "server " + version + " has no Workflow Pause (v1.30 or later)"}
	case ok && major == 1 && minor == 31:
		return pauseSupport{Known: true, Race: true, Reason: "server " + version + " has the known Workflow Pause race, fixed in v1.32: upgrade"}
	case !capKnown:
		return pauseSupport{Pause: true, Reason: "the server reports no capabilities (version " + version + "): the first halt finds out"}
	case !capPause && isCloudNamespace(namespace):
		return pauseSupport{Known: true, Reason: "Temporal Cloud namespace without Workflow Pause (offered by invitation): ask Temporal for it"}
	case !capPause:
		return pauseSupport{Known: true, Reason: "the namespace does not offer Workflow Pause: turn on the dynamic config frontend.WorkflowPauseEnabled for it"}
	}
	return pauseSupport{Pause: true, Known: true, Reason: "the namespace offers Workflow Pause (server " + version + ")"}
}

// isCloudNamespace reports whether namespace is named as Temporal
// Cloud's are: <name>.<account id>.
func isCloudNamespace(namespace string) bool {
	_, account, ok := strings.Cut(namespace, ".")
	return ok && account != ""
}

// parseVersion reads major and minor of "1.32.1" or "v1.31.0-rc".
func parseVersion(v string) (major, minor int, ok bool) {
	_, err := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d", &major, &minor)
	return major, minor, err == nil
}

// checkPause reads the namespace's capabilities and the server's version,
// logs whether halts will pause or fall back and why, and chooses the
// fallback now when they will not. A check that cannot read them leaves
// it to the first halt.
func (w *Watcher) checkPause(ctx context.Context) {
	o := &w.opts
	var version string
	if si, err := o.Service.GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{}); err == nil {
		version = si.GetServerVersion()
	}
	ns, err := o.Service.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: o.Namespace})
	if err != nil {
		o.Logger.Warn("watch: the namespace cannot be described; whether halts pause is found out at the first halt",
			zap.String("namespace", o.Namespace), zap.Error(err))
		return
	}
	caps := ns.GetNamespaceInfo().GetCapabilities()
	ps := judgePause(caps != nil, caps.GetWorkflowPause(), version, o.Namespace)
	fields := []zap.Field{zap.String("namespace", o.Namespace), zap.String("serverVersion", version), zap.String("why", ps.Reason)}
	if ps.Pause {
		o.Logger.Info("watch: halts will pause", fields...)
		return
	}
	fb := o.OnPauseRefused.String()
	o.Logger.Warn("watch: halts will fall back to "+fb+", not pause", fields...)
	o.Metrics.Counter(MetricPauseRefused).Inc(1)
	w.mu.Lock()
	w.refusal = &Refusal{Error: ps.Reason, Time: time.Now(), Fallback: fb, Permanent: ps.Race}
	w.mu.Unlock()
}
