package gitcore

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Config is the agency.* configuration read once per command. Lookups use
// git's key rules: section and variable names are case-insensitive, a
// subsection (agency.runner.<name>.command) is case-sensitive.
type Config struct {
	entries []ConfigEntry
}

// NewConfig wraps entries (as returned by Repo.Config).
func NewConfig(entries []ConfigEntry) *Config { return &Config{entries: entries} }

func canonKey(k string) string {
	first := strings.Index(k, ".")
	last := strings.LastIndex(k, ".")
	if first < 0 {
		return strings.ToLower(k)
	}
	if first == last {
		return strings.ToLower(k)
	}
	return strings.ToLower(k[:first]) + k[first:last] + strings.ToLower(k[last:])
}

// Get returns the last value of key and whether it is set.
func (c *Config) Get(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	want := canonKey(key)
	val, ok := "", false
	for _, e := range c.entries {
		if canonKey(e.Key) == want {
			val, ok = e.Value, true
		}
	}
	return val, ok
}

// GetAll returns every value of a multi-valued key, in order.
func (c *Config) GetAll(key string) []string {
	if c == nil {
		return nil
	}
	want := canonKey(key)
	var vals []string
	for _, e := range c.entries {
		if canonKey(e.Key) == want {
			vals = append(vals, e.Value)
		}
	}
	return vals
}

// Duration returns key parsed as a Go duration, def when unset. ok is false
// when the value is set but invalid.
func (c *Config) Duration(key string, def time.Duration) (time.Duration, bool) {
	v, set := c.Get(key)
	if !set || v == "" {
		return def, true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return def, false
	}
	return d, true
}

// Int returns key parsed as an integer, def when unset. ok is false when the
// value is set but invalid.
func (c *Config) Int(key string, def int) (int, bool) {
	v, set := c.Get(key)
	if !set || v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def, false
	}
	return n, true
}

// Bool returns key read as git reads a boolean (true, yes, on, 1 or no
// value; false, no, off, 0), def when unset. ok is false when the value is
// set but invalid.
func (c *Config) Bool(key string, def bool) (bool, bool) {
	v, set := c.Get(key)
	if !set {
		return def, true
	}
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return def, false
}

// Subsections returns the distinct subsection names under a section prefix,
// e.g. Subsections("agency.runner") → ["claude", "mine"].
func (c *Config) Subsections(prefix string) []string {
	if c == nil {
		return nil
	}

	p := strings.ToLower(prefix) + "."
	seen := map[string]bool{}
	var out []string
	for _, e := range c.entries {
		k := e.Key
		if !strings.HasPrefix(strings.ToLower(k), p) {
			continue
		}

		rest := k[len(p):]
		i := strings.LastIndex(rest, ".")
		if i <= 0 {
			continue
		}

		sub := rest[:i]
		if !seen[sub] {
			seen[sub] = true
			out = append(out, sub)
		}
	}

	return out
}

// UserConfig reads the agency.* configuration git sees in dir, which need
// not be inside a repository (then the global and system files only).
func UserConfig(ctx context.Context, r CommandRunner, dir string) ([]ConfigEntry, error) {
	if r == nil {
		r = ExecRunner{}
	}
	res, err := r.Run(ctx, Cmd{Dir: dir, Env: userEnv(), Args: []string{"config", "-z", "--get-regexp", `^agency\.`}})
	if err != nil {
		if exitCode(err) == 1 {
			return nil, nil
		}
		return nil, err
	}
	return parseConfigZ(res.Stdout), nil
}
