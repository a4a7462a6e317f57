package protocol

// Default names of the guard's signals, query and updates. Each can be
// renamed in Options; the names in force are pinned per execution.
const (
	// DefaultResumeSignal lets a paused call proceed. Payload: ResumeRequest.
	DefaultResumeSignal = "resume"
	// DefaultEscalateSignal makes a paused call return a LoopEscalated
	// error. Payload: EscalateRequest.
	DefaultEscalateSignal = "escalate"
	// DefaultHaltSignal asks a running workflow to stop at its next guarded
	// call with reason user_stop. Payload: HaltRequest.
	DefaultHaltSignal = "halt"
	// DefaultHaltedSignal is the guard's own signal, raised to the halted
	// workflow (so it shows in its history) and to the supervisor, if any.
	// Payload: HaltEvent.
	DefaultHaltedSignal = "loop.halted"
	// DefaultStatusQuery answers a Status.
	DefaultStatusQuery = "loop.status"
	// DefaultResumeUpdate and DefaultEscalateUpdate are the synchronous
	// forms of the resume and escalate signals: their validators reject a
	// request when nothing is halted or the payload is malformed.
	DefaultResumeUpdate   = "resume"
	DefaultEscalateUpdate = "escalate"
)

// AnswerNames are the names a guard takes answers under.
type AnswerNames struct {
	ResumeSignal   string `json:"resumeSignal"`
	EscalateSignal string `json:"escalateSignal"`
	HaltSignal     string `json:"haltSignal"`
	ResumeUpdate   string `json:"resumeUpdate"`
	EscalateUpdate string `json:"escalateUpdate"`
}

// For is the signal (signal set) or update that carries action a ("" for
// none: halt is a signal only).
func (n AnswerNames) For(a Action, signal bool) string {
	names := map[Action][2]string{
		ActionResume:   {n.ResumeUpdate, n.ResumeSignal},
		ActionEscalate: {n.EscalateUpdate, n.EscalateSignal},
		ActionHalt:     {"", n.HaltSignal},
	}[a]
	if signal {
		return names[1]
	}
	return names[0]
}
