package interceptor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRepeatsCount: an action is its node and its arguments; arguments
// that do not encode are not counted; once maxActions actions are known,
// new ones are not counted, and known ones still are.
func TestRepeatsCount(t *testing.T) {
	type call struct {
		node string
		args []any
	}
	full := make([]call, 0, maxActions)
	for i := range maxActions {
		full = append(full, call{"Search", []any{fmt.Sprint(i)}})
	}
	tests := []struct {
		name  string
		first []call // made before, answers not checked
		give  []call
		want  []int
	}{
		{"same node, same args", nil, []call{{"Search", []any{"a"}}, {"Search", []any{"a"}}, {"Search", []any{"a"}}}, []int{0, 1, 2}},
		{"other args", nil, []call{{"Search", []any{"a"}}, {"Search", []any{"b"}}, {"Search", []any{"a"}}}, []int{0, 0, 1}},
		{"other node", nil, []call{{"Search", []any{"a"}}, {"Fetch", []any{"a"}}}, []int{0, 0}},
		{"argument boundaries", nil, []call{{"Search", []any{"ab", "c"}}, {"Search", []any{"a", "bc"}}}, []int{0, 0}},
		{"no args", nil, []call{{"Plan", nil}, {"Plan", nil}}, []int{0, 1}},
		{"args that do not encode", nil, []call{{"Search", []any{make(chan int)}}, {"Search", []any{make(chan int)}}}, []int{0, 0}},
		{"table full", full, []call{{"Search", []any{"new"}}, {"Search", []any{"new"}}, {"Search", []any{"7"}}}, []int{0, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r repeats
			for _, c := range tt.first {
				r.count(c.node, c.args)
			}
			var got []int
			for _, c := range tt.give {
				got = append(got, r.count(c.node, c.args))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
