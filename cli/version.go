package cli

import "runtime/debug"

// version is the program's version: the one make stamped into Version, else
// what the Go toolchain recorded in the binary (`go install …@v1.2.3` gives
// the module version; a build in a git checkout gives the commit), else
// "dev".
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return buildVersion(bi)
}

// buildVersion reads a version from build info: the main module's version
// when it is a real one, else the vcs revision (12 digits, "-dirty" for a
// modified tree).
func buildVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
