package blocks

import (
	"fmt"
	"testing"
)

// TestList: a List keeps what it is given, in order, across blocks, a
// copy taken before reads the same while it grows, and its room is less
// than a block.
func TestList(t *testing.T) {
	tests := []struct {
		give, view int
	}{{0, 0}, {1, 0}, {firstLen, 2}, {firstLen + 1, firstLen}, {firstLen + 3*Len + 5, 9}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.give), func(t *testing.T) {
			var l, v List[int]
			for i := range tt.give {
				if i == tt.view {
					v = l
				}
				l.Add(i * 3)
			}
			if l.Len() != tt.give {
				t.Fatalf("len %d, want %d", l.Len(), tt.give)
			}
			for i := range tt.give {
				if *l.At(i) != i*3 {
					t.Errorf("At(%d) = %d, want %d", i, *l.At(i), i*3)
				}
			}
			for i := range v.Len() {
				if *v.At(i) != i*3 {
					t.Errorf("the view's At(%d) = %d, want %d", i, *v.At(i), i*3)
				}
			}
			if room := l.Room() - l.Len(); room >= Len {
				t.Errorf("%d elements of room, want less than a block", room)
			}
		})
	}
}

// TestListViewRace: a view read on another goroutine while the list
// grows (go test -race).
func TestListViewRace(t *testing.T) {
	var l List[int]
	for i := range 10 {
		l.Add(i)
	}
	v := l
	done := make(chan int)
	go func() {
		sum := 0
		for range 100 {
			for i := range v.Len() {
				sum += *v.At(i)
			}
		}
		done <- sum
	}()
	for i := range 1000 {
		l.Add(i)
	}
	if got := <-done; got != 100*45 {
		t.Errorf("the view summed %d, want %d", got, 100*45)
	}
}
