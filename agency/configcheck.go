package agency

import (
	"fmt"
	"strconv"

	"github.com/git-agency/git-agency/errs"
)

// configValue is one agency.* setting doctor checks: its kind and what
// happens to a bad value (fallback: the default is used silently; else the
// commands that read it fail with E_CONFIG).
type configValue struct {
	key, kind, def string
	fallback       bool
}

// Kinds of configValue.
const (
	kindDuration = "duration"
	kindNumber   = "number"
	kindBool     = "boolean"
	kindAge      = "age"
)

// configValues are the agency.* settings with a typed value. The runner
// settings (agency.runner.<name>.*) are checked with their runner.
var configValues = []configValue{
	{"agency.stallThreshold", kindDuration, "5m", true},
	{"agency.lockTimeout", kindDuration, "30s", false},
	{"agency.timeout", kindDuration, "none", false},
	{"agency.idleTimeout", kindDuration, "none", false},
	{"agency.notify.timeout", kindDuration, "10s", false},
	{"agency.checkpoint.debounce", kindDuration, "3s", false},
	{"agency.checkpoint.rateLimit", kindDuration, "10s", false},
	{"agency.checkpoint.fallbackInterval", kindDuration, "30s", false},
	{"agency.watch.interval", kindDuration, "1s", false},
	{"agency.gc.olderThan", kindAge, "30d", false},
	{"agency.maxActive", kindNumber, "unlimited", false},
	{"agency.queue", kindBool, "false", false},
}

// configValueOK reports whether v is a valid value of kind.
func configValueOK(kind, v string) bool {
	switch kind {
	case kindNumber:
		n, err := strconv.Atoi(v)
		return err == nil && n >= 0
	case kindAge:
		d, err := ParseAge(v)
		return err == nil && d >= 0
	}

	return true
}

// checkConfig is doctor's check of the agency.* values it knows: a value
// of the wrong kind is a problem, named with what it does instead.
func (a *App) checkConfig(add func(check, level, hint, path, format string, args ...any)) {
	bad := 0
	for _, c := range configValues {
		v, set := a.Config.Get(c.key)
		if !set {
			continue
		}

		ok := true
		switch c.kind {
		case kindDuration:
			_, ok = a.Config.Duration(c.key, 0)
		case kindBool:
			_, ok = a.Config.Bool(c.key, false)
		default:
			ok = v == "" || configValueOK(c.kind, v)
		}

		if ok {
			continue
		}

		bad++
		effect := "commands that read it fail with " + string(errs.EConfig)
		if c.fallback {
			effect = "the default " + c.def + " is used instead"
		}

		add("config", LevelProblem, fmt.Sprintf("git config %s <%s>, or git config --unset %s", c.key, configExample(c.kind), c.key), "",
			"%s = %q is not a valid %s: %s", c.key, v, c.kind, effect)
	}

	if bad == 0 {
		add("config", LevelOK, "", "", "agency.* values are valid")
	}
}

// configExample is a valid value of kind, for the hint.
func configExample(kind string) string {
	switch kind {
	case kindDuration:
		return "a duration such as 5m"
	case kindNumber:
		return "a whole number"
	case kindBool:
		return "true or false"
	}

	return "a duration such as 720h, or days such as 30d"
}
