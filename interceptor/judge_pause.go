package interceptor

import "slices"

// Judged returns the warnings and halts so far without forgetting them
// (Verdicts forgets): a reader that follows a growing history shows them
// while later decisions may still be noted on them.
func (j *Judge) Judged() []Verdict { return slices.Clone(j.verdicts) }
