package store

import "path/filepath"

// ForecastCache is integration_worktrees/<id>/forecast.json: the conflict
// forecast of the worktree's pending invocations, cached by the object ids
// it was computed from. It is a cache: a missing or unreadable file is an
// empty one, and readers rewrite it without the lock (atomically).
type ForecastCache struct {
	SchemaVersion string `json:"schema_version"`
	// Head is the integration branch's tip everything was computed on.
	Head        string                   `json:"head"`
	Invocations map[string]ForecastEntry `json:"invocations"`
	// Pairs are keyed "<a>><b>": b landed after a.
	Pairs map[string]ForecastPair `json:"pairs"`
}

// ForecastEntry is one invocation landed alone on Head.
type ForecastEntry struct {
	// Key: the sandbox tip and the fingerprint of its uncommitted work.
	Key string `json:"key"`
	// Nothing: there is nothing to land (or it cannot be landed).
	Nothing bool `json:"nothing,omitempty"`
	// Refused: the error code land refuses it with (E_DENYLISTED, …).
	Refused string   `json:"refused,omitempty"`
	Clean   bool     `json:"clean"`
	Result  string   `json:"result,omitempty"` // the replayed tip when clean
	Files   []string `json:"files,omitempty"`  // conflicted files when not
	Paths   []string `json:"paths,omitempty"`  // every path it changes
	// Display is what ls and watch show instead of "ready to land" when
	// land would not take it as it is ("nothing to land", …), "" when not.
	Display string `json:"display,omitempty"`
}

// ForecastPair is one invocation landed after another.
type ForecastPair struct {
	Key      string   `json:"key"`
	Conflict bool     `json:"conflict"`
	Files    []string `json:"files,omitempty"`
}

// ForecastPath is a worktree's forecast cache file.
func (s *Store) ForecastPath(wt string) string {
	return filepath.Join(s.IntegrationWorktreeDir(wt), "forecast.json")
}

// ReadForecast reads a worktree's forecast cache; missing or unreadable is
// empty.
func (s *Store) ReadForecast(wt string) *ForecastCache {
	var c ForecastCache
	if err := ReadJSON(s.ForecastPath(wt), &c); err != nil {
		c = ForecastCache{}
	}
	if c.Invocations == nil {
		c.Invocations = map[string]ForecastEntry{}
	}
	if c.Pairs == nil {
		c.Pairs = map[string]ForecastPair{}
	}
	return &c
}

// WriteForecast writes a worktree's forecast cache atomically.
func (s *Store) WriteForecast(wt string, c *ForecastCache) error {
	c.SchemaVersion = SchemaVersion
	return WriteJSONAtomic(s.ForecastPath(wt), c)
}
