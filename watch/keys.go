package watch

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key of the watch view; which act depends on the
// selected row (a worktree or an invocation).
type KeyMap struct {
	Up, Down, Top, Bottom key.Binding
	Attach, Diff, Logs    key.Binding
	VerifyLog             key.Binding
	Land, Apply, Discard  key.Binding
	Stop, Kill            key.Binding
	Open, Shell           key.Binding
	Help, Back, Quit      key.Binding
	Yes, No               key.Binding
}

// DefaultKeys is the key map. `k` is kill (as docs/watch.md lists it), so it is
// not also "up" (arrows, ctrl+p/ctrl+n and j move); kill asks y/n first, so a
// stray k never kills anything.
func DefaultKeys() KeyMap {
	b := func(keys []string, k, help string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, help))
	}
	return KeyMap{
		Up:        b([]string{"up", "ctrl+p"}, "↑", "up"),
		Down:      b([]string{"down", "j", "ctrl+n"}, "↓/j", "down"),
		Top:       b([]string{"home", "g"}, "g", "top"),
		Bottom:    b([]string{"end", "G"}, "G", "bottom"),
		Attach:    b([]string{"enter"}, "enter", "attach"),
		Diff:      b([]string{"d"}, "d", "diff"),
		Logs:      b([]string{"l"}, "l", "logs"),
		VerifyLog: b([]string{"v"}, "v", "verify log"),
		Land:      b([]string{"L"}, "L", "land"),
		Apply:     b([]string{"A"}, "A", "land --apply"),
		Discard:   b([]string{"D"}, "D", "discard"),
		Stop:      b([]string{"s"}, "s", "stop"),
		Kill:      b([]string{"k"}, "k", "kill"),
		Open:      b([]string{"o"}, "o", "open"),
		Shell:     b([]string{"S"}, "S", "shell"),
		Help:      b([]string{"?"}, "?", "help"),
		Back:      b([]string{"esc"}, "esc", "back"),
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
		Yes:       b([]string{"y", "Y"}, "y", "yes"),
		No:        b([]string{"n", "N", "esc"}, "n", "no"),
	}
}

type keyBinding = key.Binding
