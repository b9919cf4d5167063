package errs

// Ready sandboxes: environments copied into a new tree that still point
// at the tree they were made in (docs/ready-sandboxes.md).

// CopiedVenv: dir (relative to its tree) is a virtualenv whose scripts,
// configuration or editable install name origin, a path outside the tree.
func CopiedVenv(dir, origin string) string {
	return dir + ": a virtualenv that points outside this tree (" + origin + "): its scripts and editable installs would run that checkout's code, not this tree's, in tests and in verify; do not copy it with .worktreeinclude, make one per tree in agency.setup, e.g. git config agency.setup 'python3 -m venv " + dir + " && " + dir + "/bin/pip install -e .' (docs/ready-sandboxes.md)"
}

// LinkedNodeModules: dir (relative to its tree) holds a package that is a
// link to target, outside the tree (a file: dependency, npm link).
func LinkedNodeModules(dir, target string) string {
	return dir + ": a package in it links outside this tree (" + target + "): code here would run that copy; do not copy node_modules with .worktreeinclude, install in agency.setup, e.g. git config agency.setup 'npm ci' (docs/ready-sandboxes.md)"
}
