// Package configfile reads git's configuration files as git does, for the
// commands that would otherwise start a `git config` process: where the
// files are (system, global, the repository's, the worktree's) and the
// parser of one file. It leaves to git (ok false) anything it does not
// follow exactly; FuzzConfigFile compares the parser with
// `git config -l -z --file` on every file both accept, and checks that it
// never reads a file git refuses.
package configfile

import (
	"os"
	"path/filepath"
	"strings"
)

// Reading the configuration from its files spares every command a `git
// config` process. It gives git's answer only where git's rules are plain,
// so anything unusual is left to git (ok false):
//   - configuration from the command line or the environment
//     (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT: `git -c k=v agency`);
//   - an include (include.path, includeIf.*): its conditions are git's;
//   - a system file whose place is not known: git looks at
//     $(prefix)/etc/gitconfig, which is /etc/gitconfig only for the git
//     installed under /usr (GIT_CONFIG_SYSTEM or GIT_CONFIG_NOSYSTEM say
//     it otherwise);
//   - a file that cannot be read, or that git would refuse to parse.

// Files is the configuration of the repository whose git directory
// is gitDir and common directory common: every entry of every file git
// reads, in git's order (system, global, the repository's, the
// worktree's when extensions.worktreeConfig is on).
func Files(gitDir, common string) ([]Entry, bool) {
	all, ok := User()
	if !ok {
		return nil, false
	}

	repo, ok := RepoFiles(gitDir, common)
	if !ok || includes(repo) {
		return nil, false
	}

	return append(all, repo...), true
}

// User is the configuration outside any repository (the system and global
// files, as `git config` reads it from a directory outside every
// repository), and false when git must be asked: the environment adds to
// it, or a file includes another.
func User() ([]Entry, bool) {
	for _, k := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if _, set := os.LookupEnv(k); set {
			return nil, false
		}
	}

	files, ok := userConfigFiles()
	if !ok {
		return nil, false
	}

	var all []Entry
	for _, f := range files {
		entries, ok := read(f)
		if !ok {
			return nil, false
		}
		all = append(all, entries...)
	}

	if includes(all) {
		return nil, false
	}

	return all, true
}

// includes reports whether entries include another file.
func includes(entries []Entry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.Key, "include.") || strings.HasPrefix(e.Key, "includeif.") {
			return true
		}
	}
	return false
}

// Last is the value of the last entry of key (as git names it), and
// whether there is one.
func Last(entries []Entry, key string) (string, bool) { return last(entries, key) }

// RepoFiles is the repository's own configuration: its config file,
// then its worktree's config.worktree when extensions.worktreeConfig is on.
func RepoFiles(gitDir, common string) ([]Entry, bool) {
	local, ok := read(filepath.Join(common, "config"))
	if !ok {
		return nil, false
	}

	wc, set := last(local, "extensions.worktreeconfig")
	if !set {
		return local, true
	}

	// "" is also a variable without a value (true): ask git.
	on, ok := Bool(wc)
	if !ok || wc == "" {
		return nil, false
	}
	if !on {
		return local, true
	}

	wt, ok := read(filepath.Join(gitDir, "config.worktree"))
	return append(local, wt...), ok
}

// userConfigFiles are the system and global files git reads, in order.
func userConfigFiles() ([]string, bool) {
	// A relative path is git's from the directory git runs in, which is
	// not always this process's: ask git.
	for _, k := range []string{"GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL", "HOME", "XDG_CONFIG_HOME"} {
		if p := os.Getenv(k); p != "" && !filepath.IsAbs(p) {
			return nil, false
		}
	}

	files, ok := systemConfigFile()
	if !ok {
		return nil, false
	}

	global, ok := globalConfigFiles()
	return append(files, global...), ok
}

// systemConfigFile is the system file git reads (none, or one).
func systemConfigFile() ([]string, bool) {
	// GIT_CONFIG_NOSYSTEM wins over GIT_CONFIG_SYSTEM: it says whether a
	// system file is read at all, the other only which.
	no, ok := Bool(os.Getenv("GIT_CONFIG_NOSYSTEM"))
	switch p, set := os.LookupEnv("GIT_CONFIG_SYSTEM"); {
	case !ok:
		return nil, false
	case no:
		return nil, true
	case set && p == "":
		return nil, false
	case set:
		return []string{p}, true
	case !GitUnderUsr():
		return nil, false
	}

	return []string{"/etc/gitconfig"}, true
}

// globalConfigFiles are the global files git reads, in order.
func globalConfigFiles() ([]string, bool) {
	if p, set := os.LookupEnv("GIT_CONFIG_GLOBAL"); set {
		return []string{p}, p != ""
	}

	// An empty HOME is taken by git as the root ("/.gitconfig"): ask git.
	home, set := os.LookupEnv("HOME")
	if set && home == "" {
		return nil, false
	}

	var files []string
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}

	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}

	return files, true
}

// GitUnderUsr reports whether the git found first on PATH (the one every
// call runs) is the one installed under /usr, whose system file is
// /etc/gitconfig.
func GitUnderUsr() bool {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			return false // git would look in the current directory
		}

		p := filepath.Join(dir, "git")
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}

		real, err := filepath.EvalSymlinks(p)
		return err == nil && (real == "/usr/bin/git" || real == "/usr/lib/git-core/git")
	}

	return false
}

// read is Parse of the file at path; a file that does
// not exist holds nothing.
func read(path string) ([]Entry, bool) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	return Parse(b)
}

// Bool is git's boolean of a config value or environment variable
// ("" is false here, as for GIT_CONFIG_NOSYSTEM unset); ok is false for
// what git would reject or read as a number.
func Bool(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// Entry is one key and value, the key as git names it (section and
// variable lower case, a subsection as written).
type Entry struct {
	Key   string
	Value string
}

// last is the value of the last entry of key (a canonical key), and
// whether there is one.
func last(entries []Entry, key string) (string, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Key == key {
			return entries[i].Value, true
		}
	}
	return "", false
}
