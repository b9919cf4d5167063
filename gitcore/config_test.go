package gitcore

import "testing"

func TestConfigBool(t *testing.T) {
	cfg := NewConfig([]ConfigEntry{{Key: "agency.queue", Value: "Yes"}, {Key: "agency.off", Value: "0"}, {Key: "agency.bad", Value: "maybe"}})
	for _, c := range []struct {
		key      string
		def      bool
		want, ok bool
	}{
		{"agency.queue", false, true, true},
		{"agency.off", true, false, true},
		{"agency.unset", true, true, true},
		{"agency.bad", false, false, false},
	} {
		got, ok := cfg.Bool(c.key, c.def)
		if got != c.want || ok != c.ok {
			t.Errorf("Bool(%s) = %v, %v; want %v, %v", c.key, got, ok, c.want, c.ok)
		}
	}
}
