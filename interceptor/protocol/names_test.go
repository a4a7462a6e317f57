package protocol_test

import (
	"testing"

	"github.com/loopguard/loopguard/interceptor/protocol"
	"github.com/stretchr/testify/assert"
)

func TestAnswerNamesFor(t *testing.T) {
	n := protocol.AnswerNames{ResumeSignal: "rs", EscalateSignal: "es", HaltSignal: "hs", ResumeUpdate: "ru", EscalateUpdate: "eu"}
	tests := []struct {
		give   protocol.Action
		signal bool
		want   string
	}{
		{protocol.ActionResume, true, "rs"},
		{protocol.ActionResume, false, "ru"},
		{protocol.ActionEscalate, true, "es"},
		{protocol.ActionEscalate, false, "eu"},
		{protocol.ActionHalt, true, "hs"},
		{protocol.ActionHalt, false, ""},
		{protocol.ActionCancel, true, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, n.For(tt.give, tt.signal), "%s signal=%v", tt.give, tt.signal)
	}
}
