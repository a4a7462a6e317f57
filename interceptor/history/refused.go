package history

import (
	"errors"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/loopguard/loopguard/interceptor"
)

// The guard refuses a resume, escalate or halt signal it cannot take (a
// halt already in force, a signed answer outside its window, another
// execution's) and lists it in loop.status; the Judge says so through
// OnRefused, and the record of the signal carries the reason.

// refusedAnswer notes on the recorded answer whose payload is p why the
// guard refused it (Judge.OnRefused).
func (r *runReader) refusedAnswer(name string, p *commonpb.Payload, err error) {
	reason := err.Error()
	var ie *interceptor.InputError
	if errors.As(err, &ie) {
		reason = ie.Reason
	}
	ans := r.ex.Recorded.Answers
	for i := len(ans) - 1; i >= 0; i-- {
		if ans[i].payload == p && ans[i].Name == name && ans[i].Refused == "" {
			ans[i].Refused = reason
			return
		}
	}
}
