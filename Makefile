# git-agency — build, install, test.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The man pages' date: SOURCE_DATE_EPOCH when set (reproducible-builds.org),
# else the commit's date; never the time of the build, so that two builds
# of one commit are byte-identical.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
LDFLAGS := -X github.com/git-agency/git-agency/cli.Version=$(VERSION) -X github.com/git-agency/git-agency/cli.BuildDate=$(SOURCE_DATE_EPOCH)
GOBIN   ?= $(shell $(GO) env GOBIN)
ifeq ($(GOBIN),)
GOBIN   := $(shell $(GO) env GOPATH)/bin
endif
# man finds pages in <dir>/../share/man for every <dir> on PATH.
MANDIR  ?= $(abspath $(GOBIN)/../share/man/man1)
# The manual's topic pages (docs/*.md) are section 7: git-agency-landing(7).
MAN7DIR ?= $(abspath $(MANDIR)/../man7)
BUILD   := build
# Completion: bash-completion 2.x loads completions/git-agency from the
# user's directory, ${XDG_DATA_HOME:-~/.local/share}/bash-completion; zsh
# needs the site-functions directory on $fpath (see docs/install.md).
XDG_DATA_HOME ?= $(HOME)/.local/share
BASHCOMPDIR ?= $(XDG_DATA_HOME)/bash-completion/completions
ZSHCOMPDIR  ?= $(abspath $(GOBIN)/../share/zsh/site-functions)

# staticcheck, pinned; installed from the Go module proxy into .cache/ on
# first use (not a go.mod tool dependency: that would pull its own
# versions of golang.org/x/tools and others into the module graph that
# builds git-agency).
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(CURDIR)/.cache/tools/$(STATICCHECK_VERSION)/staticcheck
# errorlint (errors compared or asserted without errors.Is/As, anywhere)
# and errcheck (dropped errors, in agency/ and store/, with the justified
# exclusions of .errcheck-excludes), pinned and installed the same way.
ERRORLINT_VERSION ?= v1.8.0
ERRORLINT := $(CURDIR)/.cache/tools/errorlint-$(ERRORLINT_VERSION)/go-errorlint
ERRCHECK_VERSION ?= v1.30.0
ERRCHECK := $(CURDIR)/.cache/tools/errcheck-$(ERRCHECK_VERSION)/errcheck

.PHONY: all build install test stress test-race test-hermetic lint bench bench-scripts bench-watch bench-include bench-sparse demo e2e-real e2e-killsweep clean man completion

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-agency ./cmd/git-agency
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-sandbox ./cmd/git-sandbox
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-agency-watch ./cmd/git-agency-watch

# Every command's page (cli/pages/*.md with the grammar's options), the
# programs' own pages that list them (git-agency.1, git-sandbox.1), and the
# topics of the manual (docs/*.md as git-agency-<topic>.7).
man: build
	rm -rf $(BUILD)/man
	mkdir -p $(BUILD)/man
	set -e; for prog in git-agency git-sandbox; do \
	  for p in $$($(BUILD)/$$prog man --list); do $(BUILD)/$$prog man $$p > $(BUILD)/man/$$p; done; \
	done

completion: build
	mkdir -p $(BUILD)/completion
	$(BUILD)/git-agency completion bash > $(BUILD)/completion/git-agency
	$(BUILD)/git-sandbox completion bash > $(BUILD)/completion/git-sandbox
	$(BUILD)/git-agency completion zsh > $(BUILD)/completion/_git-agency
	$(BUILD)/git-sandbox completion zsh > $(BUILD)/completion/_git-sandbox

install: build man completion
	mkdir -p $(GOBIN) $(MANDIR) $(MAN7DIR)
	install -m 0755 $(BUILD)/git-agency $(BUILD)/git-sandbox $(BUILD)/git-agency-watch $(GOBIN)/
	install -m 0644 $(BUILD)/man/*.1 $(MANDIR)/
	install -m 0644 $(BUILD)/man/*.7 $(MAN7DIR)/
	mkdir -p $(BASHCOMPDIR) $(ZSHCOMPDIR)
	install -m 0644 $(BUILD)/completion/git-agency $(BUILD)/completion/git-sandbox $(BASHCOMPDIR)/
	install -m 0644 $(BUILD)/completion/_git-agency $(BUILD)/completion/_git-sandbox $(ZSHCOMPDIR)/
	@echo "installed git-agency and git-sandbox into $(GOBIN), man pages into $(MANDIR)"
	@echo "completion: bash $(BASHCOMPDIR), zsh $(ZSHCOMPDIR)"
	@case ":$$PATH:" in *":$(GOBIN):"*) ;; *) echo "note: add $(GOBIN) to your PATH so 'git agency' resolves";; esac

test:
	$(GO) test -count=1 -timeout 45m ./...

# The long variants of scripts that make test runs shorter: 40 walled
# starts while 4 agents commit (wall_starts_busy).
stress:
	AGENCY_STRESS=1 $(GO) test -count=1 -timeout 45m -run 'TestScripts/wall_starts_busy$$' .

# Every package but the scripts' (which start from an empty environment)
# under a hostile user git configuration, as HOME's, XDG's and
# GIT_CONFIG_GLOBAL's: a test that reads the developer's configuration
# instead of its own (internal/testenv) fails here. Run by .ci/run. Go's
# own directories stay this user's.
HOSTILE_HOME := $(CURDIR)/$(BUILD)/hostile-home
test-hermetic:
	rm -rf $(HOSTILE_HOME)
	mkdir -p $(HOSTILE_HOME)/.config/git
	cp testdata/hostile.gitconfig $(HOSTILE_HOME)/.gitconfig
	cp testdata/hostile.gitconfig $(HOSTILE_HOME)/.config/git/config
	GOPATH=$$($(GO) env GOPATH) GOCACHE=$$($(GO) env GOCACHE) GOMODCACHE=$$($(GO) env GOMODCACHE) GOENV=$$($(GO) env GOENV) \
	HOME=$(HOSTILE_HOME) XDG_CONFIG_HOME=$(HOSTILE_HOME)/.config GIT_CONFIG_GLOBAL=$(HOSTILE_HOME)/.gitconfig \
	$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v '^github.com/git-agency/git-agency$$')

# The same under the race detector (slow on a small machine). A race or a
# panic that a supervisor writes into its supervisor.log fails the script
# that started it, in both.
test-race:
	$(GO) test -race -count=1 -timeout 60m ./...

lint: $(STATICCHECK) $(ERRORLINT) $(ERRCHECK)
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(ERRORLINT) ./...
	$(ERRCHECK) -ignoretests -exclude .errcheck-excludes ./agency/... ./store/...
	$(GO) test -count=1 ./internal/houserules

$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(ERRORLINT):
	GOBIN=$(dir $(ERRORLINT)) $(GO) install github.com/polyfloyd/go-errorlint@$(ERRORLINT_VERSION)

$(ERRCHECK):
	GOBIN=$(dir $(ERRCHECK)) $(GO) install github.com/kisielk/errcheck@$(ERRCHECK_VERSION)

clean:
	rm -rf $(BUILD)

# Benchmarks print numbers and ratios against plain git; they never fail
# (a benchmark that breaks says so and the next one runs). Add one as
# bench/<name>.bench.sh, a Go Benchmark function, or a bench-<area> target
# listed here.
bench: bench-scripts bench-watch

bench-scripts:
	-bash bench/run.sh

# bench-watch: CPU used by `git agency watch` over 30 s at the default
# interval, as a share of one core (goal ≤ 3 %): with 50 invocations (40
# pending, 20 per worktree, every pair conflicting: the conflict forecast's
# worst case), then with 50 running and 1000 old records.
bench-watch: build
	-$(GO) run ./bench/watchcpu -bin $(BUILD)/git-agency -d 30s -n 50
	-$(GO) run ./bench/watchcpu -bin $(BUILD)/git-agency -d 30s -n 51 -running 50 -old 1000

# bench-include: .worktreeinclude copying a 10k-file node_modules vs cp -a
# (goal ≤ 1.2×); bench-sparse: a 1/10 sparse sandbox vs a full one (goal
# ≤ 0.2×). Both also run from `make bench` (bench/*.bench.sh).
bench-include:
	-BENCH_ROOT=$(CURDIR) bash bench/include.bench.sh

bench-sparse:
	-BENCH_ROOT=$(CURDIR) bash bench/sparse.bench.sh

# A throwaway repository, three demo agents, landing, cleanup (demo/demo.sh).
# Touches nothing outside its own temp directory.
demo:
	sh demo/demo.sh

# The built-in claude and codex runners with the REAL CLIs, offline against
# the project's mock model server (e2e/real.sh). Not part of `make test`:
# installs both CLIs with npm (~640 MB, once, into ~/.cache/agency-real-clis).
e2e-real:
	bash e2e/real.sh

# kill -9 before every git call of every state-changing command, then
# doctor, one gc, doctor, and nothing lost (a few minutes; e2e/killsweep.sh).
e2e-killsweep:
	bash e2e/killsweep.sh
