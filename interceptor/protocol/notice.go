package protocol

// NoticeHeader is the header that carries a Notice to a guarded call, as
// sdk-go's tracing interceptor carries its span context: a JSON payload of
// the default data converter (payload codecs do not see headers, so do not
// put secrets in guidance).
const NoticeHeader = "loopguard-notice"

// MaxGuidanceBytes bounds a resume's guidance, in bytes of UTF-8: half of
// MaxNoticeBytes. Its JSON writes <, >, &, U+2028, U+2029 and control
// characters as 6-byte escapes, so the header cuts what does not fit
// (encodeNotice).
const MaxGuidanceBytes = 512

// MaxNoticeBytes bounds the notice header: the payload
// as history stores it, its JSON and its encoding metadata. The header
// goes with every call of the loop, into history and to the worker, and an
// agent puts it in its prompt.
const MaxNoticeBytes = 1024

// Notice is what the guard has to tell a guarded call: the warning in
// force, the human's guidance from the last resume, for the calls of the
// loop that halted, and how often the call was made before. A call with
// nothing to be told carries no header.
type Notice struct {
	// Warning is the warning in force for the loop the call belongs to
	// (interceptor.Options.Warnings).
	Warning *Warning `json:"warning,omitempty"`
	// Guidance is the text of the resume that answered the loop's last
	// halt, and who sent it.
	Guidance string `json:"guidance,omitempty"`
	By       string `json:"by,omitempty"`
	// HaltSeq is the halt the guidance answered.
	HaltSeq int `json:"haltSeq,omitempty"`
	// Repeats is how many guarded calls of this run before this one had
	// the same node and the same arguments (interceptor.Options.CountRepeats), so that
	// a tool can answer "no new information" rather than run again. It
	// counts within one run: continue-as-new starts it over. Arguments are
	// compared by their encoding with the default data converter (a 64-bit
	// hash of it); arguments that do not encode, and new actions once a run
	// has seen 1024 distinct ones, count 0. The halt handler's calls are
	// not guarded and not counted.
	Repeats int `json:"repeats,omitempty"`
	// Budget is what is left of the budgets of the call's node and loop.
	// Only interceptor.NoticeFor, in workflow code, fills it: the header does not
	// carry it (that would change the guard's commands).
	Budget *Budget `json:"budget,omitempty"`
}

// Guidance is the guidance in force, as Status shows it.
type Guidance struct {
	Text    string `json:"text"`
	By      string `json:"by,omitempty"`
	HaltSeq int    `json:"haltSeq"`
	// Nodes are the nodes whose calls carry it: the halted cycle's
	// members, or the halted node.
	Nodes []string `json:"nodes"`
}
