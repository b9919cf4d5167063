package store

import (
	"os"
	"path/filepath"
	"testing"
)

// The forecast cache round-trips, and one a crash left empty or cut short
// (it is written without fsync) reads as empty: computed again, never a
// failure.
func TestForecastCacheUnreadableIsEmpty(t *testing.T) {
	s := &Store{DataDir: t.TempDir(), RepoID: "r"}
	if err := os.MkdirAll(s.IntegrationWorktreeDir("w"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := s.ReadForecast("w")
	c.Head, c.HeadTree = "h", "t"
	c.Work["i"] = ForecastWork{Key: "k"}
	if err := s.WriteForecast("w", c); err != nil {
		t.Fatal(err)
	}
	if got := s.ReadForecast("w"); got.Head != "h" || got.HeadTree != "t" || got.Work["i"].Key != "k" {
		t.Fatalf("read back %+v", got)
	}
	data, _ := os.ReadFile(s.forecastPath("w"))
	for _, broken := range [][]byte{nil, data[:len(data)/2]} {
		if err := os.WriteFile(s.forecastPath("w"), broken, 0o600); err != nil {
			t.Fatal(err)
		}
		got := s.ReadForecast("w")
		if got.Head != "" || len(got.Work) != 0 || got.Invocations == nil || got.Pairs == nil {
			t.Errorf("%d bytes: read %+v, want an empty cache", len(broken), got)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(s.IntegrationWorktreeDir("w"), ".forecast*")); len(m) != 0 {
		t.Errorf("temp files left: %v", m)
	}
}
