package interceptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/loopguard/loopguard/interceptor/internal/strictjson"
)

// A policy file is the JSON form of Options, so that thresholds can be
// tuned without a code change and the same file serves every worker:
//
//	{
//	  "workflows": ["AgentLoop"],
//	  "onHalt": "observe",
//	  "maxCycleIterations": 6,
//	  "maxNodeRuntime": "10m",
//	  "ignoreFields": ["generatedAt"],
//	  "nodes": {"Verify": {"maxCalls": 12, "metricField": "failing"}, "Search": {"exempt": true}},
//	  "graph": [{"from": "Code", "to": "Verify"}]
//	}
//
// Each key is an Options field with a lower-case first letter ("nodes" holds
// NodeOptions keyed by node name, "graph" holds Edges with "from" and "to").
// Durations are Go duration strings ("90s", "10m", "1h30m"), never numbers.
// Every key is optional; absent keys keep their default. Unknown keys are
// rejected. The func fields (NodeName, ResultHook, GuardWorkflow) are code
// and have no JSON form.

// PolicyError is an invalid policy file.
type PolicyError struct {
	// Field is the JSON path of the offending field, e.g.
	// "nodes.Verify.maxRuntime" or "ignoreFields[2]"; "" for the whole file.
	Field  string
	Reason string
}

func (e *PolicyError) Error() string {
	if e.Field == "" {
		return "loopguard policy: " + e.Reason
	}
	return "loopguard policy: " + e.Field + ": " + e.Reason
}

// ParsePolicy reads a policy file and validates the Options it describes as
// New would. Errors are *PolicyError.
func ParsePolicy(data []byte) (Options, error) {
	var o Options
	if err := o.ApplyPolicy(data); err != nil {
		return Options{}, err
	}
	if _, _, err := buildConfig(o); err != nil {
		var oe *OptionError
		if errors.As(err, &oe) {
			return Options{}, &PolicyError{Field: oe.JSONPath(), Reason: oe.Reason}
		}
		return Options{}, err
	}
	return o, nil
}

// ApplyPolicy overlays a policy file onto o: the fields the file has replace
// o's, a node in "nodes" is merged field by field into o's options for that
// node, and lists replace o's lists. It checks the file's syntax, keys and
// types but not the resulting Options (New does, or ParsePolicy), so that a
// program can overlay its own settings (say, flags) first. Errors are
// *PolicyError; on error o is unchanged.
func (o *Options) ApplyPolicy(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return &PolicyError{Reason: "empty, want a JSON object"}
	}
	if err := strictjson.SyntaxProblem(data); err != nil {
		return &PolicyError{Reason: err.Error()}
	}
	next := *o
	if err := strictjson.Decode("", data, reflect.ValueOf(&next).Elem()); err != nil {
		var fe *strictjson.FieldError
		if errors.As(err, &fe) {
			return &PolicyError{Field: fe.Path, Reason: fe.Msg}
		}
		return &PolicyError{Reason: err.Error()}
	}
	*o = next
	return nil
}

// PolicyJSON writes o as a policy file that ParsePolicy reads back: zero
// fields left out, durations as strings, the func fields dropped. Use it to
// log or save the policy a worker runs with.
func PolicyJSON(o Options) ([]byte, error) {
	return json.MarshalIndent(strictjson.Encode(reflect.ValueOf(o)), "", "  ")
}

// JSONPath returns Field as a policy file names it: "Nodes[Verify].MaxCalls"
// is "nodes.Verify.maxCalls", "IgnoreFields[0]" is "ignoreFields[0]".
func (e *OptionError) JSONPath() string {
	return optionJSONPath(e.Field)
}

func optionJSONPath(field string) string {
	if rest, ok := strings.CutPrefix(field, "Nodes["); ok {
		if i := strings.Index(rest, "]"); i >= 0 {
			node, tail := rest[:i], strings.TrimPrefix(rest[i+1:], ".")
			if tail == "" {
				return "nodes." + node
			}
			return "nodes." + node + "." + optionJSONPath(tail)
		}
	}
	return strictjson.LowerFirst(field)
}
