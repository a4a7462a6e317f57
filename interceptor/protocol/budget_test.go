package protocol_test

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"

	"github.com/stretchr/testify/assert"
)

func TestBudgetLeft(t *testing.T) {
	tests := []struct {
		name     string
		give     protocol.Budget
		wantLeft int
		wantOK   bool
		wantText string
	}{
		{"no limit", protocol.Budget{Node: "Chat", Steps: 3}, 0, false, ""},
		{"the cycle is nearest", protocol.Budget{Node: "Code", Steps: 7, MaxSteps: 10, Iteration: 6, MaxIterations: 8, TotalCalls: 21, MaxTotalCalls: 1000},
			2, true, "Loop 6/8, Code 7/10 steps, 21/1000 calls"},
		{"the node is nearest", protocol.Budget{Node: "Code", Steps: 9, MaxSteps: 10, TotalCalls: 9, MaxTotalCalls: 1000}, 1, true, "Code 9/10 steps, 9/1000 calls"},
		{"over after an extension ran out", protocol.Budget{Node: "Code", Steps: 12, MaxSteps: 10}, 0, true, "Code 12/10 steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left, ok := tt.give.Left()
			assert.Equal(t, tt.wantLeft, left)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantText, tt.give.String())
		})
	}
}
