package testsuite_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	sdkinterceptor "go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/loopguard/loopguard/internal/fixtures"
	"github.com/loopguard/loopguard/testsuite"
)

const historiesDir = "testdata/histories"

func manifest(t testing.TB) fixtures.Manifest {
	t.Helper()
	m, err := fixtures.ReadManifest(filepath.Join(historiesDir, fixtures.ManifestFile))
	require.NoError(t, err)
	require.NotEmpty(t, m.Fixtures)
	return m
}

func replayOpts(t testing.TB, f fixtures.Fixture, guard interceptor.Options) testsuite.ReplayOptions {
	t.Helper()
	reg, ok := fixtures.WorkflowRegistries(f.Registry)
	require.True(t, ok, "unknown registry %q", f.Registry)
	return testsuite.ReplayOptions{Guard: guard, Register: reg}
}

// TestFixtureManifest checks that the manifest and the files agree, and
// that the fixture set covers what it must: every halt reason, resume and
// escalate by signal and by update, continue-as-new, unguarded histories
// and the benchmark pair.
func TestFixtureManifest(t *testing.T) {
	m := manifest(t)
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	require.NoError(t, err)
	var onDisk, listed []string
	for _, f := range files {
		if b := filepath.Base(f); b != fixtures.ManifestFile {
			onDisk = append(onDisk, b)
		}
	}
	reasons := map[string]bool{}
	answers := map[string]bool{}
	var unguarded, continued, bench int
	byFile := map[string]fixtures.Fixture{}
	for _, f := range m.Fixtures {
		byFile[f.File] = f
		listed = append(listed, f.File)
		for _, h := range f.ExpectedHalts {
			reasons[h.Reason] = true
		}
		for _, a := range f.Answers {
			answers[strings.Join(strings.Fields(a)[:min(2, len(strings.Fields(a)))], " ")] = true
		}
		if f.Guard == "" {
			unguarded++
		} else {
			_, ok := fixtures.GuardOptions(f.Guard)
			assert.True(t, ok, "%s: unknown guard options %q", f.File, f.Guard)
		}
		if f.Outcome == "continued_as_new" {
			continued++
		}
		if f.Benchmark {
			bench++
		}
	}
	sort.Strings(listed)
	assert.Equal(t, onDisk, listed, "every history file is in the manifest and every manifest entry has a file")
	for _, r := range []protocol.HaltReason{protocol.ReasonBudgetExceeded, protocol.ReasonStalled, protocol.ReasonOscillating, protocol.ReasonRepeatedError, protocol.ReasonUserStop} {
		assert.True(t, reasons[string(r)], "no fixture halts with %s", r)
	}
	for _, a := range []string{"signal resume", "signal escalate", "update resume", "update escalate"} {
		assert.True(t, answers[a], "no fixture answers a halt with %s", a)
	}
	assert.GreaterOrEqual(t, unguarded, 4)
	assert.GreaterOrEqual(t, continued, 2)
	assert.Equal(t, 4, bench, "two benchmark pairs: uniform and rich results")
	for _, f := range m.Fixtures {
		if f.Guard != "" {
			assert.Equal(t, interceptor.GuardVersion, f.GuardVersion, "%s: recorded at the one guard version", f.File)
		}
	}
	// A human's halt under observe, and parallel branches sharing one
	// halt, have histories of their own.
	for _, file := range []string{"observe-user-stop.json", "parallel-branches.json"} {
		f, ok := byFile[file]
		if assert.True(t, ok, "%s is in the manifest", file) {
			assert.Len(t, f.ExpectedHalts, 1, "%s: one halt", file)
			assert.Equal(t, "completed", f.Outcome, file)
		}
	}
}

// TestFixturesReplay replays every recorded history with the guard: with
// the options it was recorded with, with the defaults, and with drifted
// options (config drift: tighter thresholds, OnHalt fail, renamed protocol).
// The histories recorded without the guard replay with it installed too
// (adoption: the guard leaves executions without its marker alone).
func TestFixturesReplay(t *testing.T) {
	for _, f := range manifest(t).Fixtures {
		t.Run(strings.TrimSuffix(f.File, ".json"), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(historiesDir, f.File)
			h, err := testsuite.ReadHistoryFile(path)
			require.NoError(t, err)

			info := testsuite.Inspect(h)
			assert.Equal(t, f.WorkflowType, info.WorkflowType)
			assert.Equal(t, f.WorkflowID, info.WorkflowID)
			assert.Equal(t, f.Events, info.Events)
			assert.Equal(t, f.Guard != "", info.Guarded, "guard marker")
			assert.Equal(t, f.GuardVersion, info.GuardVersion, "guard version marker")
			assert.Equal(t, f.WorkflowTaskFailures, info.WorkflowTaskFailures, "workflow task failures")
			assert.Equal(t, f.ExpectedHalts, haltsIn(t, h), "loop.halted signals in the history")

			recorded := interceptor.Options{}
			if f.Guard != "" {
				recorded, _ = fixtures.GuardOptions(f.Guard)
			}
			for name, g := range map[string]interceptor.Options{
				"recorded options": recorded,
				"default options":  {},
				"drifted options":  fixtures.DriftedOptions(),
			} {
				assert.NoError(t, testsuite.ReplayHistory(h, replayOpts(t, f, g)), "replay with the guard and %s", name)
			}
		})
	}
}

// TestFixturesReplayWithoutGuard shows what happens to each history on a
// replayer without the guard: the unguarded ones replay; a history where
// the guard halted the workflow does not, and the error says why.
func TestFixturesReplayWithoutGuard(t *testing.T) {
	for _, f := range manifest(t).Fixtures {
		if f.Benchmark && f.Guard != "" {
			continue // covered by the benchmark
		}
		t.Run(strings.TrimSuffix(f.File, ".json"), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(historiesDir, f.File)
			opts := replayOpts(t, f, interceptor.Options{})
			opts.Unguarded = true
			err := testsuite.ReplayFile(path, opts)
			if f.Guard == "" {
				assert.NoError(t, err)
				return
			}
			// Even without halts the guard's version marker and pinned
			// options (a side effect) are commands the code no longer makes.
			require.Error(t, err, "a guarded history needs the guard to replay")
			var re *testsuite.ReplayError
			require.True(t, errors.As(err, &re), "%T", err)
			assert.True(t, re.Nondeterministic)
			assert.True(t, re.Guarded)
			assert.False(t, re.ReplayedWithGuard)
			assert.Equal(t, f.WorkflowType, re.WorkflowType)
			msg := err.Error()
			assert.Contains(t, msg, path)
			assert.Contains(t, msg, f.WorkflowType)
			assert.Contains(t, msg, "this history was recorded with loopguard; install the guard (or its retire mode) on the replayer")
		})
	}
}

// TestReplayUsesRecordedWorkflowID: the SDK's own file replayer runs every
// history as workflow "ReplayId", so a workflow that derives ids from its
// own (the samples' ChildIterationLoop names its children after itself)
// fails to replay there; ReplayFile replays under the recorded id.
func TestReplayUsesRecordedWorkflowID(t *testing.T) {
	path := filepath.Join(historiesDir, "child-stalled-escalate.json")
	g, err := interceptor.New(fixtures.DriftedOptions())
	require.NoError(t, err)
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []sdkinterceptor.WorkerInterceptor{g}, DisableDeadlockDetection: true})
	require.NoError(t, err)
	reg, _ := fixtures.WorkflowRegistries("samples")
	reg(r)
	err = r.ReplayWorkflowHistoryFromJSONFile(log.NewStructuredLogger(slog.New(slog.DiscardHandler)), path)
	require.Error(t, err, "the SDK's replayer runs the history as workflow ReplayId")
	assert.Contains(t, err.Error(), "TMPRL1100")

	testsuite.RequireReplayFile(t, path, testsuite.ReplayOptions{Register: reg})
}

func TestReplayErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		err := testsuite.ReplayFile(filepath.Join(t.TempDir(), "nope.json"), testsuite.ReplayOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "nope.json")
	})
	t.Run("not a history", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bad.json")
		require.NoError(t, os.WriteFile(p, []byte(`{"events": 3}`), 0o644))
		err := testsuite.ReplayFile(p, testsuite.ReplayOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "bad.json is JSON but not a workflow history")
	})
	t.Run("workflow not registered", func(t *testing.T) {
		err := testsuite.ReplayFile(filepath.Join(historiesDir, "converging-guarded.json"), testsuite.ReplayOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CoderVerifierLoop")
		assert.Contains(t, err.Error(), "register the workflow")
	})
	t.Run("invalid guard options", func(t *testing.T) {
		err := testsuite.ReplayFile(filepath.Join(historiesDir, "converging-guarded.json"), testsuite.ReplayOptions{Guard: interceptor.Options{Window: 1}})
		require.Error(t, err)
		var oe *interceptor.OptionError
		assert.True(t, errors.As(err, &oe))
	})
}

// TestRequireReplayDir replays a directory the way a user's CI would.
func TestRequireReplayDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"user-stop-resume.json", "continue-as-new-run2.json", "unguarded-scripted-stall.json"} {
		data, err := os.ReadFile(filepath.Join(historiesDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	testsuite.RequireReplayDir(t, dir, testsuite.ReplayOptions{Register: fixtures.RegisterWorkflows})
}

// TestHistoryRoundTrip: a history read and written again is the same.
func TestHistoryRoundTrip(t *testing.T) {
	h, err := testsuite.ReadHistoryFile(filepath.Join(historiesDir, "user-stop-resume.json"))
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "h.json")
	require.NoError(t, testsuite.WriteHistoryFile(p, h))
	h2, err := testsuite.ReadHistoryFile(p)
	require.NoError(t, err)
	assert.Equal(t, len(h.Events), len(h2.Events))
	a, _ := testsuite.MarshalHistory(h)
	b, _ := testsuite.MarshalHistory(h2)
	assert.Equal(t, string(a), string(b))
}

// haltsIn decodes the loop.halted signals of a history.
func haltsIn(t testing.TB, h *historypb.History) []fixtures.Halt {
	out := []fixtures.Halt{}
	for _, e := range h.GetEvents() {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a == nil || a.GetSignalName() != protocol.DefaultHaltedSignal {
			continue
		}
		var ev protocol.HaltEvent
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(a.GetInput().GetPayloads()[0], &ev))
		out = append(out, fixtures.Halt{Seq: ev.Seq, Reason: string(ev.HaltReason), Detector: string(ev.Detector), Node: ev.Node, Iteration: ev.Iteration, Observed: ev.Observed})
	}
	return out
}
