// Package protocol is the guard's wire protocol: the names, payloads and
// limits of the signals, updates and query that loopguard's interceptor
// listens to and raises, and of the notice header
// its calls carry.
//
// It is for the code around a guarded workflow: operators' tools that
// answer a halt (resume, escalate, halt), halt handlers and supervisors
// that read a HaltEvent, activities that read a Notice, and clients in
// other SDKs, which send and read the same JSON (every field has its JSON
// tag). The rules, with examples, are in the repository's docs/protocol.md.
package protocol
