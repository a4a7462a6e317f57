package interceptor

// A resume payload is written by people, like a policy file, and read by
// the same strict decoder: unknown fields are rejected with their path, and
// the durations of "extend" are duration strings in the policy file's form,
// {"extend":{"maxNodeRuntime":"10m"}}. A bare number is refused rather than
// taken as nanoseconds.
