package testsuite

import "github.com/loopguard/loopguard/interceptor/history"

// Label is a run's label in a corpus: see history.Label.
type Label = history.Label

// Labels are a corpus's labels by workflow ID: see history.Labels.
type Labels = history.Labels

// Score is how an options' first halts meet a corpus's labels: see
// history.Score.
type Score = history.Score

// ReadLabels is history.ReadLabels.
func ReadLabels(path string) (Labels, error) { return history.ReadLabels(path) }
