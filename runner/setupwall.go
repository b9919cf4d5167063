package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/git-agency/git-agency/errs"
	"github.com/git-agency/git-agency/store"
)

// A setup inside the wall sees the host read-only outside its sandbox (and
// a few writable caches), a private /tmp, and not the paths
// agency.isolate.hide names. A setup that writes or reads outside its
// sandbox then fails with EROFS ("Read-only file system") or ENOENT ("No
// such file or directory") on a path that exists, writable, on the host.
// wallSetupHint reads what the setup printed and names the wall and the
// setting to change.

// setupLogTail bounds what is read of a failed setup's output.
const setupLogTail = 64 << 10

var absPath = regexp.MustCompile(`(?:^|[\s'"‘“:=(])(/[^\s'"’”:,;()]+)`)

// wallSetupHint is what to do about a walled setup that failed on a path
// outside sandbox, from the output it wrote to logPath after offset ("" if
// its output names no such path).
func wallSetupHint(logPath string, offset int64, sandbox string) string {
	f, err := store.ReadLog(logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}

	offset = max(offset, fi.Size()-setupLogTail)
	if offset < 0 || offset >= fi.Size() {
		return ""
	}

	buf := make([]byte, fi.Size()-offset)
	n, _ := f.ReadAt(buf, offset)
	lines := strings.Split(string(buf[:n]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if h := lineHint(lines[i], sandbox); h != "" {
			return h
		}
	}

	return ""
}

// lineHint is wallSetupHint for one line of output.
func lineHint(l, sandbox string) string {
	rofs := strings.Contains(l, "Read-only file system") || strings.Contains(l, "EROFS")
	noent := strings.Contains(l, "No such file or directory") || strings.Contains(l, "ENOENT")
	if !rofs && !noent {
		return ""
	}

	for _, m := range absPath.FindAllStringSubmatch(l, -1) {
		p := filepath.Clean(m[1])
		if !outsideOf(sandbox, p) || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/") {
			continue
		}
		if rofs {
			return errs.SetupWallReadOnly(p, grantDir(p))
		}
		if _, err := os.Stat(p); err == nil {
			// There on the host, not inside the wall.
			return errs.SetupWallHidden(p)
		}
	}

	return ""
}

// outsideOf reports whether p lies outside dir.
func outsideOf(dir, p string) bool {
	return p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator))
}

// grantDir is the directory to make writable for a write to p: p when it
// is a directory on the host, else the nearest existing directory above.
func grantDir(p string) string {
	for d := p; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return filepath.Dir(p)
}
