package testsuite_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/workflow"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/workflows"
)

// failures is a testing.TB that records how Run fails a test.
type failures struct {
	testing.TB
	mu  sync.Mutex
	got []string
}

func (f *failures) Helper()             {}
func (f *failures) Log(...any)          {}
func (f *failures) Logf(string, ...any) {}
func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fmt.Sprintf(format, args...))
}

func (f *failures) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// run calls Run with a recording TB, on a goroutine of its own since
// Fatalf ends it, and returns the failures.
func (f *failures) run(opts testsuite.RunOptions, wf any, args ...any) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		testsuite.Run(f, opts, wf, args...)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

// TestRunFailsWhenNotGuarded: a test whose workflow the guard leaves out
// fails, naming the workflow type, instead of passing without the guard
// (issue 24: a case typo in Options.Workflows turned the guard off, and a
// test of it still passed).
func TestRunFailsWhenNotGuarded(t *testing.T) {
	sc := workflows.Scenarios()[0]
	tests := []struct {
		name  string
		guard interceptor.Options
		want  []string // substrings of the one failure; nil: none
	}{
		{"named", interceptor.Options{Workflows: []string{"CoderVerifierLoop"}}, nil},
		{"case typo", interceptor.Options{Workflows: []string{"coderVerifierLoop"}}, []string{"workflow CoderVerifierLoop is not guarded", `"coderVerifierLoop"`}},
		{"left out by GuardWorkflow", interceptor.Options{GuardWorkflow: func(*workflow.Info) bool { return false }}, []string{"workflow CoderVerifierLoop ran unguarded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &failures{TB: t}
			got := f.run(testsuite.RunOptions{Guard: tt.guard, Register: workflows.Register}, sc.Workflow, sc.Input)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			if assert.Len(t, got, 1) {
				for _, w := range tt.want {
					assert.Contains(t, got[0], w)
				}
			}
		})
	}
}
