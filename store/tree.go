package store

import "path/filepath"

// AgencyDir is the in-tree state directory of every integration and sandbox
// tree: invisible to git (it holds its own .gitignore), never snapshotted,
// never cleaned, never watched.
const AgencyDir = ".agency"

// MarkerFile, inside AgencyDir, marks an integration tree: runners refuse to
// run where it is.
const MarkerFile = "INTEGRATION_MARKER"

// MarkerPath returns the integration marker's path inside tree.
func MarkerPath(tree string) string { return filepath.Join(tree, AgencyDir, MarkerFile) }
