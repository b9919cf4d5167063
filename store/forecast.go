package store

import "path/filepath"

// ForecastCache is integration_worktrees/<id>/forecast.json: the conflict
// forecast of the worktree's pending invocations, cached by the object ids
// it was computed from. It is a cache: a missing or unreadable file is an
// empty one, and readers rewrite it without the lock (atomically).
//
// What an invocation would land (Work) does not depend on the integration
// branch and is kept when the branch moves; only the merges against the
// new tip (Invocations, Pairs) are computed again.
type ForecastCache struct {
	SchemaVersion string `json:"schema_version"`
	// Head is the integration branch's tip Invocations and Pairs were
	// computed on.
	Head string `json:"head"`
	// HeadTree is Head's tree ("" until a read looked it up).
	HeadTree string `json:"head_tree,omitempty"`
	// InHead says, for the first parents of the invocations' commits,
	// whether each is an ancestor of Head (absent: not asked yet).
	InHead map[string]bool `json:"in_head,omitempty"`
	// Work is what each invocation would land, whatever the tip.
	Work        map[string]ForecastWork  `json:"work"`
	Invocations map[string]ForecastEntry `json:"invocations"`
	// Pairs are keyed "<a>><b>": b landed after a.
	Pairs map[string]ForecastPair `json:"pairs"`
}

// ForecastWork is what landing one invocation would replay, as land
// --apply would build it: its commits and a commit of its uncommitted work.
type ForecastWork struct {
	// Key: the sandbox tip and the fingerprint of its uncommitted work.
	Key string `json:"key"`
	// Nothing: there is nothing to land (or it cannot be landed).
	Nothing bool `json:"nothing,omitempty"`
	// Refused: the error code land refuses it with (E_DENYLISTED, …).
	Refused string           `json:"refused,omitempty"`
	Commits []ForecastCommit `json:"commits,omitempty"`
	Paths   []string         `json:"paths,omitempty"` // every path it changes
	// Display is what ls and watch show instead of "ready to land" when
	// land would not take it as it is ("nothing to land", …), "" when not.
	Display string `json:"display,omitempty"`
}

// ForecastCommit is a commit to replay: its id and tree, and its first
// parent with that parent's tree.
type ForecastCommit struct {
	ID         string `json:"id"`
	Tree       string `json:"tree"`
	Parent     string `json:"parent,omitempty"`
	ParentTree string `json:"parent_tree,omitempty"`
}

// ForecastEntry is one invocation landed alone on Head.
type ForecastEntry struct {
	// Key is the ForecastWork key it was computed from.
	Key   string   `json:"key"`
	Clean bool     `json:"clean"`
	Tree  string   `json:"tree,omitempty"`  // the replayed tree when clean
	Files []string `json:"files,omitempty"` // conflicted files when not
	// Result is a commit of Tree on Head, written only when a pair needs
	// to replay another invocation onto it.
	Result string `json:"result,omitempty"`
}

// ForecastPair is one invocation landed after another.
type ForecastPair struct {
	Key      string   `json:"key"`
	Conflict bool     `json:"conflict"`
	Files    []string `json:"files,omitempty"`
}

// forecastPath is a worktree's forecast cache file.
func (s *Store) forecastPath(wt string) string {
	return filepath.Join(s.IntegrationWorktreeDir(wt), "forecast.json")
}

// ReadForecast reads a worktree's forecast cache; missing or unreadable is
// empty.
func (s *Store) ReadForecast(wt string) *ForecastCache {
	var c ForecastCache
	if err := ReadJSON(s.forecastPath(wt), &c); err != nil {
		c = ForecastCache{}
	}
	if c.Invocations == nil {
		c.Invocations = map[string]ForecastEntry{}
	}
	if c.Work == nil {
		c.Work = map[string]ForecastWork{}
	}
	if c.Pairs == nil {
		c.Pairs = map[string]ForecastPair{}
	}

	return &c
}

// WriteForecast writes a worktree's forecast cache atomically, without
// fsync (WriteJSONCache): reads write it, and one lost in a crash is
// computed again.
func (s *Store) WriteForecast(wt string, c *ForecastCache) error {
	c.SchemaVersion = SchemaVersion
	return WriteJSONCache(s.forecastPath(wt), c)
}
