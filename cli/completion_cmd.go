package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-agency/git-agency/agency"
	"github.com/git-agency/git-agency/store"
)

// CompletionCmd prints a shell completion script generated from the
// grammar. The bash script defines _git_agency (or _git_sandbox), the
// function git's own bash completion calls for `git agency <TAB>`; the zsh
// script defines _git-agency (or _git-sandbox), which zsh's _git calls.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh" help:"Shell: bash or zsh."`
}

func (c *CompletionCmd) Run(env *Env, app *kong.Kong) error {
	spec := completionSpec(app.Model)
	sub := strings.TrimPrefix(env.Prog, "git ")
	if c.Shell == "zsh" {
		writeZshCompletion(env.Stdout, sub, spec)
	} else {
		writeBashCompletion(env.Stdout, sub, spec)
	}
	return nil
}

// CompleteCmd answers the completion scripts' dynamic questions: present
// worktree names, invocation ids, runner names. It reads records without
// taking the lock and prints nothing (and succeeds) outside a repository.
type CompleteCmd struct {
	What string `arg:"" enum:"worktrees,invocations,pending,runners" help:"What to list."`
}

func (c *CompleteCmd) Run(env *Env) error {
	a, err := env.App()
	if err != nil {
		return nil
	}
	var out []string
	switch c.What {
	case "worktrees":
		list, _ := a.Store.ScanWorktrees()
		for _, e := range list {
			if e.Record != nil && e.Record.State == store.StatePresent {
				out = append(out, e.Record.Name)
			}
		}
		sort.Strings(out) // names, alphabetically (creation order is not total)
	case "invocations":
		list, _ := a.Store.ScanInvocations()
		for i := len(list) - 1; i >= 0; i-- { // newest first
			out = append(out, list[i].ID)
		}
	case "pending":
		// What land takes: ended, neither landed nor discarded (records
		// as they are: a read, no reconcile).
		list, _ := a.Store.ScanInvocations()
		for i := len(list) - 1; i >= 0; i-- {
			if r := list[i].Record; r != nil && agency.Pending(r) {
				out = append(out, list[i].ID)
			}
		}
	case "runners":
		seen := map[string]bool{"claude": true, "codex": true}
		out = append(out, "claude", "codex")
		for _, n := range a.Config.Subsections("agency.runner") {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, s := range out {
		fmt.Fprintln(env.Stdout, s)
	}
	return nil
}

// cmdSpec is what completion needs to know of one command.
type cmdSpec struct {
	path   string            // "worktree rm" ("" for the root)
	subs   []string          // subcommand names offered
	lookup map[string]string // word (name or alias) -> canonical subcommand
	flags  []string          // "--json", "--name=" (value flags end in '=')
	vflags map[string]string // value flag -> value kind ("" none, "worktree", "enum:a b")
	args   []string          // kinds of the positionals, in order ("worktree", "invocation", "file", "")
	rest   string            // kind of a trailing variadic positional
}

func completionSpec(app *kong.Application) []*cmdSpec {
	var out []*cmdSpec
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		s := &cmdSpec{path: path, lookup: map[string]string{}, vflags: map[string]string{}}
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			s.subs = append(s.subs, c.Name)
			s.lookup[c.Name] = c.Name
			for _, al := range c.Aliases {
				s.lookup[al] = c.Name
			}
		}
		for _, f := range n.Flags {
			if f.Hidden {
				continue
			}
			if f.IsBool() || f.IsCounter() {
				s.flags = append(s.flags, "--"+f.Name)
				continue
			}
			s.flags = append(s.flags, "--"+f.Name+"=")
			s.vflags["--"+f.Name] = valueKind(f.Name, f.Enum)
			if f.Short != 0 {
				// "-w NAME" completes NAME as "--worktree NAME" does.
				s.vflags["-"+string(f.Short)] = s.vflags["--"+f.Name]
			}
		}
		if path != "" {
			s.flags = append(s.flags, "--help")
		}
		for _, p := range n.Positional {
			k := valueKind(p.Name, p.Enum)
			if p.Tag != nil && p.Tag.Get("complete") != "" {
				k = p.Tag.Get("complete") // a narrower list (land: the pending)
			}
			if p.IsCumulative() {
				s.rest = k
				break
			}
			s.args = append(s.args, k)
		}
		out = append(out, s)
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			walk(c, strings.TrimSpace(path+" "+c.Name))
		}
	}
	walk(app.Node, "")
	return out
}

// valueKind decides how a flag's or positional's value is completed, from
// its name: worktree names, invocation ids, runner names, enum values, or
// files.
func valueKind(name, enum string) string {
	if enum != "" {
		return "enum:" + strings.Join(strings.Split(enum, ","), " ")
	}
	switch strings.TrimSuffix(name, "s") {
	case "worktree", "into", "target":
		return "worktree"
	case "invocation", "id", "inv", "invocation-id", "sandbox", "now":
		return "invocation"
	case "runner":
		return "runner"
	case "parent", "branch", "onto":
		return "branch"
	case "path", "file", "prompt-file", "dir", "repo":
		return "file"
	}
	return ""
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeBashCompletion(w io.Writer, sub string, specs []*cmdSpec) {
	fn := "_git_" + sub           // _git_agency: what git's completion calls
	h := "__git_" + sub + "_spec" // per-program helpers, so both scripts coexist
	fmt.Fprintf(w, `# bash completion for 'git %[1]s' (generated by 'git %[1]s completion bash').
#
# Git's own bash completion calls %[2]s for 'git %[1]s <TAB>'. Install this file
# as ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/git-%[1]s
# (bash-completion 2.x loads it on first use), or source it after git's
# completion in ~/.bashrc.

# %[3]s PATH: set the completion tables of one command path.
%[3]s ()
{
	__ga_subs="" __ga_flags="" __ga_args="" __ga_rest=""
	case "$1" in
`, sub, fn, h)
	for _, s := range specs {
		var args []string
		for _, a := range s.args {
			args = append(args, orUnderscore(a))
		}
		fmt.Fprintf(w, "\t%s)\n\t\t__ga_subs=%s\n\t\t__ga_flags=%s\n\t\t__ga_args=%s\n\t\t__ga_rest=%s\n\t\t;;\n",
			shQuote(s.path), shQuote(strings.Join(s.subs, " ")), shQuote(strings.Join(s.flags, " ")),
			shQuote(strings.Join(args, " ")), shQuote(s.rest))
	}
	fmt.Fprintf(w, "\t*) return 1 ;;\n\tesac\n}\n\n")

	// word -> canonical subcommand, per path
	fmt.Fprintf(w, "# %s_sub PATH WORD: the canonical subcommand WORD names under PATH, in __ga_sub.\n%s_sub ()\n{\n\tcase \"$1:$2\" in\n", h, h)
	for _, s := range specs {
		keys := make([]string, 0, len(s.lookup))
		for k := range s.lookup {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "\t%s) __ga_sub=%s ;;\n", shQuote(s.path+":"+k), shQuote(s.lookup[k]))
		}
	}
	fmt.Fprintf(w, "\t*) return 1 ;;\n\tesac\n}\n\n")

	// value flag -> kind
	fmt.Fprintf(w, "# %s_vflag PATH FLAG: the value kind of a flag that takes a value, in __ga_kind.\n%s_vflag ()\n{\n\tcase \"$1:$2\" in\n", h, h)
	for _, s := range specs {
		keys := make([]string, 0, len(s.vflags))
		for k := range s.vflags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "\t%s) __ga_kind=%s ;;\n", shQuote(s.path+":"+k), shQuote(s.vflags[k]))
		}
	}
	fmt.Fprintf(w, "\t*) return 1 ;;\n\tesac\n}\n\n")

	fmt.Fprintf(w, `# %[1]s_values KIND PREFIX CUR: complete a value of a kind.
%[1]s_values ()
{
	case "$1" in
	worktree) __gitcomp_nl "$(__git %[2]s __complete worktrees 2>/dev/null)" "$2" "$3" ;;
	invocation) __gitcomp_nl "$(__git %[2]s __complete invocations 2>/dev/null)" "$2" "$3" ;;
	pending) __gitcomp_nl "$(__git %[2]s __complete pending 2>/dev/null)" "$2" "$3" ;;
	runner) __gitcomp_nl "$(__git %[2]s __complete runners 2>/dev/null)" "$2" "$3" ;;
	branch) __gitcomp_direct "$(__git_heads "$2" "$3" " ")" ;;
	enum:*) __gitcomp "${1#enum:}" "$2" "$3" ;;
	*) COMPREPLY=() ;; # files: git's completion falls back to the shell's
	esac
}

%[3]s ()
{
	local __ga_subs __ga_flags __ga_args __ga_rest __ga_sub __ga_kind
	local gpath="" c=$((${__git_cmd_idx:-1}+1)) w nargs=0 dashdash=""
	while [ $c -lt $cword ]; do
		w="${words[c]}"
		if [ -z "$dashdash" ] && [ "$w" = "--" ]; then
			dashdash=1
		elif [ -z "$dashdash" ] && [ "${w#-}" != "$w" ]; then
			case "$w" in
			*=*) ;;
			*) if %[1]s_vflag "$gpath" "$w"; then ((c++)); fi ;;
			esac
		elif [ -z "$dashdash" ] && [ $nargs -eq 0 ] && %[1]s_sub "$gpath" "$w"; then
			gpath="${gpath:+$gpath }$__ga_sub"
		else
			((nargs++))
		fi
		((c++))
	done
	%[1]s "$gpath" || return
	local prev="${words[cword-1]}"
	if [ -z "$dashdash" ] && [ $cword -gt $((${__git_cmd_idx:-1}+1)) ] && %[1]s_vflag "$gpath" "$prev"; then
		%[1]s_values "$__ga_kind" "" "$cur"
		return
	fi
	case "$cur" in
	--*=*)
		# bash splits the word at '=' (COMP_WORDBREAKS) and replaces only
		# the value: offer values without the "--flag=" prefix, as git's
		# own completion does.
		if [ -z "$dashdash" ] && %[1]s_vflag "$gpath" "${cur%%%%=*}"; then
			%[1]s_values "$__ga_kind" "" "${cur#*=}"
		fi
		return
		;;
	-*)
		if [ -z "$dashdash" ]; then
			__gitcomp "$__ga_flags"
			return
		fi
		;;
	esac
	if [ -n "$__ga_subs" ] && [ $nargs -eq 0 ]; then
		__gitcomp "$__ga_subs"
		return
	fi
	local kinds=($__ga_args) kind
	kind="${kinds[nargs]}"
	if [ -z "$kind" ]; then
		kind="$__ga_rest"
	fi
	[ "$kind" = "_" ] && kind=""
	%[1]s_values "$kind" "" "$cur"
}
`, h, sub, fn)
}

func orUnderscore(s string) string {
	if s == "" {
		return "_"
	}
	return s
}

func writeZshCompletion(w io.Writer, sub string, specs []*cmdSpec) {
	fn := "_git-" + sub
	h := "__git_" + sub + "_zspec"
	fmt.Fprintf(w, `#compdef git-%[1]s
# zsh completion for 'git %[1]s' (generated by 'git %[1]s completion zsh').
# zsh's _git calls %[2]s for 'git %[1]s <TAB>'. Install as a file named
# %[2]s in a directory on $fpath (e.g. /usr/local/share/zsh/site-functions)
# before compinit runs.

%[3]s() {
  ga_subs=() ga_flags=() ga_args=() ga_rest=""
  case "$1" in
`, sub, fn, h)
	for _, s := range specs {
		var args []string
		for _, a := range s.args {
			args = append(args, shQuote(orUnderscore(a)))
		}
		fmt.Fprintf(w, "    %s)\n      ga_subs=(%s)\n      ga_flags=(%s)\n      ga_args=(%s)\n      ga_rest=%s\n      ;;\n",
			shQuote(s.path), strings.Join(quoteAll(s.subs), " "), strings.Join(quoteAll(s.flags), " "),
			strings.Join(args, " "), shQuote(s.rest))
	}
	fmt.Fprintf(w, "    *) return 1 ;;\n  esac\n}\n\n")
	fmt.Fprintf(w, "%s_sub() {\n  case \"$1:$2\" in\n", h)
	for _, s := range specs {
		keys := make([]string, 0, len(s.lookup))
		for k := range s.lookup {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s) ga_sub=%s ;;\n", shQuote(s.path+":"+k), shQuote(s.lookup[k]))
		}
	}
	fmt.Fprintf(w, "    *) return 1 ;;\n  esac\n}\n\n")
	fmt.Fprintf(w, "%s_vflag() {\n  case \"$1:$2\" in\n", h)
	for _, s := range specs {
		keys := make([]string, 0, len(s.vflags))
		for k := range s.vflags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "    %s) ga_kind=%s ;;\n", shQuote(s.path+":"+k), shQuote(s.vflags[k]))
		}
	}
	fmt.Fprintf(w, "    *) return 1 ;;\n  esac\n}\n\n")
	fmt.Fprintf(w, `%[1]s_values() {
  local -a vals
  case "$1" in
    worktree) vals=(${(f)"$(git %[2]s __complete worktrees 2>/dev/null)"}) ;;
    invocation) vals=(${(f)"$(git %[2]s __complete invocations 2>/dev/null)"}) ;;
    pending) vals=(${(f)"$(git %[2]s __complete pending 2>/dev/null)"}) ;;
    runner) vals=(${(f)"$(git %[2]s __complete runners 2>/dev/null)"}) ;;
    branch) vals=(${(f)"$(git for-each-ref --format='%%(refname:strip=2)' refs/heads 2>/dev/null)"}) ;;
    enum:*) vals=(${=${1#enum:}}) ;;
    file) _files; return ;;
    *) return 1 ;;
  esac
  compadd -P "$2" -a vals
}

%[3]s() {
  local ga_sub ga_kind ga_rest gpath="" w dashdash="" i
  local -a ga_subs ga_flags ga_args
  integer nargs=0 start=2
  # Called by _git, words[1] is the subcommand; called for git-%[2]s directly, too.
  for (( i = start; i < CURRENT; i++ )); do
    w="${words[i]}"
    if [[ -z $dashdash && $w == -- ]]; then
      dashdash=1
    elif [[ -z $dashdash && $w == -* ]]; then
      if [[ $w != *=* ]] && %[1]s_vflag "$gpath" "$w"; then (( i++ )); fi
    elif [[ -z $dashdash && $nargs -eq 0 ]] && %[1]s_sub "$gpath" "$w"; then
      gpath="${gpath:+$gpath }$ga_sub"
    else
      (( nargs++ ))
    fi
  done
  %[1]s "$gpath" || return 1
  local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}"
  if [[ -z $dashdash && CURRENT -gt start ]] && %[1]s_vflag "$gpath" "$prev"; then
    %[1]s_values "$ga_kind" ""
    return
  fi
  if [[ -z $dashdash && $cur == --*=* ]]; then
    if %[1]s_vflag "$gpath" "${cur%%%%=*}"; then
      compset -P '*='
      %[1]s_values "$ga_kind" ""
    fi
    return
  fi
  if [[ -z $dashdash && $cur == -* ]]; then
    local -a plain eq
    plain=(${ga_flags:#*=}) eq=(${(M)ga_flags:#*=})
    compadd -a plain
    compadd -S '' -a eq
    return
  fi
  if (( ${#ga_subs} && nargs == 0 )); then
    compadd -a ga_subs
    return
  fi
  local kind="${ga_args[nargs+1]}"
  [[ -z $kind ]] && kind="$ga_rest"
  [[ $kind == _ ]] && kind=""
  %[1]s_values "$kind" "" || _files
}

%[3]s "$@"
`, h, sub, fn)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shQuote(s)
	}
	return out
}
