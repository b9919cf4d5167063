package wall

import (
	"os"
	"path/filepath"
	"strings"
)

// A build cache is code the user's next build runs: a module an agent
// edited in GOMODCACHE, a GOCACHE entry pointing at an archive it built,
// a package under ~/.npm/_npx. So the user's caches (GOCACHE, GOMODCACHE,
// ~/.npm, ~/.cache, cargo's, maven's, gradle's…) are read-only inside the
// wall, and every agent writes one agent cache instead, shared between
// agents under the data directory: a second sandbox's build reuses what
// the first compiled. Go modules the user already downloaded come from
// the user's module cache through GOPROXY (file://, read-only) before
// the user's own proxy.

// cacheDir is the agents' shared build cache under the data directory.
func cacheDir(dataDir string) string { return filepath.Join(dataDir, "cache") }

// cacheVar is one environment variable pointing a tool at a directory of
// the agent cache.
type cacheVar struct{ name, dir string }

// cacheVars are the tools pointed at the agent cache. XDG_CACHE_HOME
// covers what keeps its cache in ~/.cache (pip, uv, claude's own).
var cacheVars = []cacheVar{
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"XDG_CACHE_HOME", "xdg"},
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"npm_config_store_dir", "pnpm-store"},
	{"BUN_INSTALL_CACHE_DIR", "bun"},
}

// prepareCaches makes the agent cache's directories, so that they exist
// before any wall goes up (a first `npm install` needs its cache
// directory), and returns the environment that points the tools at them.
func prepareCaches(dataDir, home string, getenv func(string) string) ([]string, error) {
	root := cacheDir(dataDir)
	var env []string
	for _, v := range cacheVars {
		dir := filepath.Join(root, v.dir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		env = append(env, v.name+"="+dir)
	}

	if p := goProxy(home, getenv); p != "" {
		env = append(env, "GOPROXY="+p)
	}

	return env, nil
}

// goProxy is GOPROXY for an agent: the user's module download cache
// first (read-only, a file:// proxy), then the user's own GOPROXY (Go's
// default when unset). "" when the user has no download cache.
func goProxy(home string, getenv func(string) string) string {
	modcache := getenv("GOMODCACHE")
	if modcache == "" {
		gopath := getenv("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		modcache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}

	dl := filepath.Join(modcache, "cache", "download")
	if fi, err := os.Stat(dl); err != nil || !fi.IsDir() {
		return ""
	}

	user := getenv("GOPROXY")
	if user == "" {
		user = "https://proxy.golang.org,direct"
	}

	// Comma: a module missing from the user's cache falls through to the
	// next proxy (a file:// proxy answers "not found").
	return "file://" + filepath.ToSlash(dl) + "," + strings.TrimSpace(user)
}
