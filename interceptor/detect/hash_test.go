package detect

import "testing"

// TestActionKey: equal actions have equal keys; another node, another
// argument, or the same bytes split differently is another action.
func TestActionKey(t *testing.T) {
	base := ActionKey("Search", [][]byte{[]byte(`"ab"`), []byte(`"c"`)})
	tests := []struct {
		name string
		node string
		args [][]byte
		same bool
	}{
		{"the same", "Search", [][]byte{[]byte(`"ab"`), []byte(`"c"`)}, true},
		{"another node", "Fetch", [][]byte{[]byte(`"ab"`), []byte(`"c"`)}, false},
		{"another argument", "Search", [][]byte{[]byte(`"ab"`), []byte(`"d"`)}, false},
		{"split differently", "Search", [][]byte{[]byte(`"a`), []byte(`b""c"`)}, false},
		{"one argument fewer", "Search", [][]byte{[]byte(`"ab"`)}, false},
	}
	for _, tt := range tests {
		if got := ActionKey(tt.node, tt.args) == base; got != tt.same {
			t.Errorf("%s: same key = %v, want %v", tt.name, got, tt.same)
		}
	}
}
