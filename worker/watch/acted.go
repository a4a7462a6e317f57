package watch

import "github.com/loopguard/loopguard/internal/blocks"

// actedHalts is what a follower did for each halt of its run (the
// action Status lists) and whose pause lag it recorded: 8 bytes a halt,
// in the order the halts came, looked up by seq from the newest (a
// follower asks of its newest halts).
type actedHalts struct{ l blocks.List[actedHalt] }

type actedHalt struct {
	seq    int32
	action uint8 // in actions
	lagged bool
}

// at is the entry of halt seq, added if new.
func (a *actedHalts) at(seq int) *actedHalt {
	for i := a.l.Len() - 1; i >= 0; i-- {
		if e := a.l.At(i); int(e.seq) == seq {
			return e
		}
	}
	a.l.Add(actedHalt{seq: int32(seq)})
	return a.l.At(a.l.Len() - 1)
}

// action is what the follower did for halt seq ("": nothing yet).
func (a *actedHalts) action(seq int) string {
	for i := a.l.Len() - 1; i >= 0; i-- {
		if e := a.l.At(i); int(e.seq) == seq {
			return actions[e.action]
		}
	}
	return ""
}

// set notes action for halt seq.
func (a *actedHalts) set(seq int, action string) { a.at(seq).action = actionCode(action) }

// lag reports whether halt seq's pause lag is not recorded yet, and
// notes it recorded.
func (a *actedHalts) lag(seq int) bool {
	e := a.at(seq)
	first := !e.lagged
	e.lagged = true
	return first
}
