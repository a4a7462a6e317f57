// Package blocks is an append-only list kept in fixed blocks, for what a
// watcher keeps per halt and per pause of a run it follows for days: it
// grows a block at a time and never copies, so the run holds its
// elements and at most one block's room, not the half of a slice that
// append doubled. A copy of a List is a view: the list only writes past
// it, so the view reads the same elements from another goroutine while
// the list grows.
package blocks

const (
	firstLen = 4
	// Len is the length of every block after the first.
	Len = 16
)

// List is the list; its zero value is empty.
type List[T any] struct {
	b [][]T
	n int
}

// Add appends v. A block is made whole (its len its cap) and its slice
// header never changes after, so a view reads it while the list writes
// past the view's end.
func (l *List[T]) Add(v T) {
	if l.n == l.Room() {
		size := Len
		if len(l.b) == 0 {
			size = firstLen
		}
		l.b = append(l.b, make([]T, size))
	}
	*l.At(l.n) = v
	l.n++
}

// Len is the number of elements.
func (l List[T]) Len() int { return l.n }

// Room is the elements the blocks hold.
func (l List[T]) Room() int {
	if len(l.b) == 0 {
		return 0
	}
	return firstLen + (len(l.b)-1)*Len
}

// At is element i, to read or change; only the list's owner changes one.
func (l List[T]) At(i int) *T {
	if i < firstLen {
		return &l.b[0][i]
	}
	i -= firstLen
	return &l.b[1+i/Len][i%Len]
}
