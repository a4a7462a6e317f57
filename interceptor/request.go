package interceptor

import (
	"encoding/json"
	"reflect"

	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
)

// A resume payload is written by people, like a policy file, and read by
// the same strict decoder: unknown fields are rejected with their path, and
// the durations of "extend" are duration strings in the policy file's form,
// {"extend":{"maxNodeRuntime":"10m"}}. A bare number is refused rather than
// taken as nanoseconds.

// UnmarshalJSON decodes a resume, escalate or halt payload strictly.
func (r *ResumeRequest) UnmarshalJSON(data []byte) error {
	type plain ResumeRequest // the same fields, without this method
	p := plain(*r)
	if err := strictjson.Decode("", data, reflect.ValueOf(&p).Elem()); err != nil {
		return err
	}
	*r = ResumeRequest(p)
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads: a Go client that sends
// a ResumeRequest with an Extend duration sends "10m0s", not nanoseconds.
func (r ResumeRequest) MarshalJSON() ([]byte, error) {
	type plain ResumeRequest
	return json.Marshal(strictjson.Encode(reflect.ValueOf(plain(r))))
}
