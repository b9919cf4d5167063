package cli

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// BuildDate is the date the man pages carry, in Unix seconds: make stamps
// it with -ldflags "-X …/cli.BuildDate=…" from SOURCE_DATE_EPOCH, else the
// commit's date (git log -1 --format=%ct).
var BuildDate string

// manDate is the date of the man pages (YYYY-MM-DD, UTC): SOURCE_DATE_EPOCH
// when set, else BuildDate, else the commit date the Go toolchain recorded
// (vcs.time), else none. Never the time the page is printed: two builds of
// one commit write the same pages.
func manDate() string {
	bi, _ := debug.ReadBuildInfo()
	return pageDate(os.Getenv("SOURCE_DATE_EPOCH"), BuildDate, bi)
}

// pageDate is manDate's choice, from its sources.
func pageDate(sourceDateEpoch, buildDate string, bi *debug.BuildInfo) string {
	for _, s := range []string{sourceDateEpoch, buildDate} {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return time.Unix(n, 0).UTC().Format("2006-01-02")
		}
	}

	if bi == nil {
		return ""
	}

	for _, s := range bi.Settings {
		if s.Key != "vcs.time" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
			return t.UTC().Format("2006-01-02")
		}
	}

	return ""
}

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
