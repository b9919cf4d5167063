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
//   - when no name or prefix matches, one to four lowercase hex digits
//     (or "inv-" and them) match the records whose short id (the four hex
//     digits ending the id, as ls and watch show invocations) starts with
//     them;
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
		// that too, or any prefix of it ("b7c9", "b7", "inv-b7c9"), when
		// nothing else matched.
		if short, ok := shortPrefix(query); ok {
			for i, c := range cands {
				if c.Broken || (c.Archived && !opts.All) {
					continue
				}
				if s := ShortID(c.ID); len(c.ID) > 5 && c.ID[len(c.ID)-5] == '-' && strings.HasPrefix(s, short) {
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
		if name := closestName(query, cands); name != "" {
			e = errs.NotFoundDidYouMean(kind, query, name)
		} else if id := closestID(query, cands); id != "" {
			e = errs.NotFoundDidYouMean(kind, query, id)
		}

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

// shortPrefix tells whether q is a short id as watch shows it, or the
// start of one: one to four lowercase hex digits, optionally written
// inv-XXXX.
func shortPrefix(q string) (string, bool) {
	q = strings.TrimPrefix(q, "inv-")
	if len(q) < 1 || len(q) > 4 {
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

// closestName is the name of a present record nearest to query (a typo:
// at most a third of its letters, and at least one, changed), "" when
// none is that close or two are equally close.
func closestName(query string, cands []Candidate) string {
	best, bestD, tie := "", len(query)/3+1, false
	for _, c := range cands {
		if c.Name == "" || c.Archived || c.Broken {
			continue
		}

		switch d := editDistance(query, c.Name); {
		case d < bestD:
			best, bestD, tie = c.Name, d, false
		case d == bestD && c.Name != best:
			tie = true
		}
	}

	if tie {
		return ""
	}

	return best
}

// closestID is, for a record without a name (an invocation), the id
// nearest to query by the same measure as closestName: its short id (the
// four hex digits ls and watch show) for a query written as one ("9bf8",
// "inv-9bf8"), else its full id; "" when none is that close or two are
// equally close.
func closestID(query string, cands []Candidate) string {
	short, isShort := shortPrefix(query)
	isShort = isShort && len(short) == 4
	q := query
	if isShort {
		q = short
	}

	best, bestD, tie := "", len(q)/3+1, false
	for _, c := range cands {
		if c.Name != "" || c.Archived || c.Broken {
			continue
		}

		id := c.ID
		if isShort {
			if len(c.ID) <= 5 || c.ID[len(c.ID)-5] != '-' {
				continue
			}
			id = ShortID(c.ID)
		}

		switch d := editDistance(q, id); {
		case d < bestD:
			best, bestD, tie = id, d, false
		case d == bestD && id != best:
			tie = true
		}
	}

	if tie {
		return ""
	}

	return best
}

// editDistance is the number of single-letter edits (insert, delete,
// replace, swap two neighbours: the usual typos) from a to b, in bytes:
// names are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}

	for j := range d[0] {
		d[0][j] = j
	}

	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}

			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}

	return d[len(a)][len(b)]
}
