package view

import "testing"

// Two sets of changed paths overlap on a common path, or a file and a
// directory holding it.
func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		xs, ys []string
		want   bool
	}{
		{[]string{"a.txt"}, []string{"b.txt"}, false},
		{[]string{"a.txt"}, []string{"b.txt", "a.txt"}, true},
		{[]string{"dir/x"}, []string{"dir"}, true},    // a file where a directory was
		{[]string{"dir"}, []string{"dir/y/z"}, true},  // the other way round
		{[]string{"dir/x"}, []string{"dir/y"}, false}, // siblings
		{[]string{"dirx"}, []string{"dir/y"}, false},  // a prefix that is no directory
		{nil, []string{"a"}, false},
	} {
		if got := overlaps(c.xs, c.ys); got != c.want {
			t.Errorf("overlaps(%v, %v) = %v, want %v", c.xs, c.ys, got, c.want)
		}
	}
}
