package watch

// actedHalts is what a follower did for each halt of its run (the
// action Status lists) and whose pause lag it recorded: 8 bytes a halt,
// in the order the halts came, looked up by seq from the newest (a
// follower asks of its newest halts).
type actedHalts []actedHalt

type actedHalt struct {
	seq    int32
	action uint8 // in actions
	lagged bool
}

// at is the entry of halt seq, added if new.
func (a *actedHalts) at(seq int) *actedHalt {
	for i := len(*a) - 1; i >= 0; i-- {
		if int((*a)[i].seq) == seq {
			return &(*a)[i]
		}
	}
	*a = append(*a, actedHalt{seq: int32(seq)})
	return &(*a)[len(*a)-1]
}

// action is what the follower did for halt seq ("": nothing yet).
func (a actedHalts) action(seq int) string {
	for i := len(a) - 1; i >= 0; i-- {
		if int(a[i].seq) == seq {
			return actions[a[i].action]
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
