package store

import (
	"strings"

	"github.com/git-agency/git-agency/errs"
)

// Candidate is what the resolver knows of one record.
type Candidate struct {
	ID       string
	Name     string // "" for invocations
	Archived bool
	Broken   bool
}

// ResolveOptions widen the search.
type ResolveOptions struct {
	// All lets an id prefix also match archived records.
	All bool
}

// Resolve finds the one candidate a user's query means, by these rules:
//   - an exact id always resolves, whatever the state (the escape hatch);
//   - a name matches present (not archived, not broken) records only;
//   - a unique id prefix matches present records, archived ones too with All;
//   - when no name or prefix matches, exactly four lowercase hex digits
//     (or "inv-" and them) match the record whose id ends with them, as
//     watch shows invocations;
//   - broken records match only by exact id;
//   - more than one match is E_AMBIGUOUS listing the candidates.
//
// It returns the index of the match in cands.
func Resolve(kind, query string, cands []Candidate, opts ResolveOptions) (int, error) {
	if query == "" {
		return -1, errs.NotFound(kind, query)
	}
	for i, c := range cands {
		if c.ID == query {
			return i, nil
		}
	}
	var byName []int
	for i, c := range cands {
		if c.Name != "" && c.Name == query && !c.Archived && !c.Broken {
			byName = append(byName, i)
		}
	}
	if len(byName) == 1 {
		return byName[0], nil
	}
	if len(byName) > 1 {
		return -1, errs.Ambiguous(kind, query, describe(cands, byName))
	}
	var byPrefix []int
	for i, c := range cands {
		if c.Broken || (c.Archived && !opts.All) {
			continue
		}
		if strings.HasPrefix(c.ID, query) {
			byPrefix = append(byPrefix, i)
		}
	}
	if len(byPrefix) == 0 {
		// watch shows invocations by the 4-hex end of their id: accept
		// that too ("b7c9" or "inv-b7c9"), when nothing else matched.
		if suffix, ok := shortSuffix(query); ok {
			for i, c := range cands {
				if c.Broken || (c.Archived && !opts.All) {
					continue
				}
				if strings.HasSuffix(c.ID, "-"+suffix) {
					byPrefix = append(byPrefix, i)
				}
			}
		}
	}
	switch len(byPrefix) {
	case 1:
		return byPrefix[0], nil
	case 0:
		e := errs.NotFound(kind, query)
		for _, c := range cands {
			if c.Archived && (c.Name == query || strings.HasPrefix(c.ID, query)) {
				e.Hint = "a removed (archived) " + kind + " matches; use its full id " + c.ID
				break
			}
		}
		return -1, e
	default:
		return -1, errs.Ambiguous(kind, query, describe(cands, byPrefix))
	}
}

// shortSuffix tells whether q is a short id as watch shows it: four
// lowercase hex digits, optionally written inv-XXXX.
func shortSuffix(q string) (string, bool) {
	q = strings.TrimPrefix(q, "inv-")
	if len(q) != 4 {
		return "", false
	}
	for _, r := range q {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", false
		}
	}
	return q, true
}

func describe(cands []Candidate, idx []int) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		c := cands[i]
		s := c.ID
		if c.Name != "" {
			s += "  " + c.Name
		}
		if c.Archived {
			s += "  (archived)"
		}
		out = append(out, s)
	}
	return out
}

// WorktreeCandidates maps scanned worktrees to resolver candidates.
func WorktreeCandidates(list []WorktreeEntry) []Candidate {
	out := make([]Candidate, len(list))
	for i, e := range list {
		c := Candidate{ID: e.ID, Broken: e.Broken}
		if e.Record != nil {
			c.Name = e.Record.Name
			c.Archived = e.Record.State == StateArchived
		}
		out[i] = c
	}
	return out
}

// InvocationCandidates maps scanned invocations to resolver candidates.
func InvocationCandidates(list []InvocationEntry) []Candidate {
	out := make([]Candidate, len(list))
	for i, e := range list {
		out[i] = Candidate{ID: e.ID, Broken: e.Broken}
	}
	return out
}
