# git-agency — build, install, test.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/git-agency/git-agency/cli.Version=$(VERSION)
GOBIN   ?= $(shell $(GO) env GOBIN)
ifeq ($(GOBIN),)
GOBIN   := $(shell $(GO) env GOPATH)/bin
endif
# man finds pages in <dir>/../share/man for every <dir> on PATH.
MANDIR  ?= $(abspath $(GOBIN)/../share/man/man1)
BUILD   := build
# Completion: bash-completion (2.9+) loads completions/git-agency from the
# share directory next to a bin directory on PATH; zsh needs the
# site-functions directory on $fpath (see README).
BASHCOMPDIR ?= $(abspath $(GOBIN)/../share/bash-completion/completions)
ZSHCOMPDIR  ?= $(abspath $(GOBIN)/../share/zsh/site-functions)

.PHONY: all build install test lint bench bench-include bench-sparse demo e2e-real clean man completion

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-agency ./cmd/git-agency
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-sandbox ./cmd/git-sandbox
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-agency-watch ./cmd/git-agency-watch

man: build
	mkdir -p $(BUILD)/man
	$(BUILD)/git-agency man > $(BUILD)/man/git-agency.1
	$(BUILD)/git-sandbox man > $(BUILD)/man/git-sandbox.1

completion: build
	mkdir -p $(BUILD)/completion
	$(BUILD)/git-agency completion bash > $(BUILD)/completion/git-agency
	$(BUILD)/git-sandbox completion bash > $(BUILD)/completion/git-sandbox
	$(BUILD)/git-agency completion zsh > $(BUILD)/completion/_git-agency
	$(BUILD)/git-sandbox completion zsh > $(BUILD)/completion/_git-sandbox

install: build man completion
	mkdir -p $(GOBIN) $(MANDIR)
	install -m 0755 $(BUILD)/git-agency $(BUILD)/git-sandbox $(BUILD)/git-agency-watch $(GOBIN)/
	install -m 0644 $(BUILD)/man/git-agency.1 $(BUILD)/man/git-sandbox.1 $(MANDIR)/
	mkdir -p $(BASHCOMPDIR) $(ZSHCOMPDIR)
	install -m 0644 $(BUILD)/completion/git-agency $(BUILD)/completion/git-sandbox $(BASHCOMPDIR)/
	install -m 0644 $(BUILD)/completion/_git-agency $(BUILD)/completion/_git-sandbox $(ZSHCOMPDIR)/
	@echo "installed git-agency and git-sandbox into $(GOBIN), man pages into $(MANDIR)"
	@echo "completion: bash $(BASHCOMPDIR), zsh $(ZSHCOMPDIR)"
	@case ":$$PATH:" in *":$(GOBIN):"*) ;; *) echo "note: add $(GOBIN) to your PATH so 'git agency' resolves";; esac

test:
	$(GO) test -count=1 -timeout 30m ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./internal/shape

# Benchmarks print numbers and ratios against plain git; they never fail.
# Add a benchmark as bench/<name>.bench.sh (or a Go Benchmark function).
bench:
	bash bench/run.sh

clean:
	rm -rf $(BUILD)

# bench runs every benchmark; each area adds its own bench-<area> target.
bench: bench-watch

# bench-watch: CPU used by `git agency watch` over 30 s with 50 invocations
# at the default interval, as a share of one core (goal ≤ 3 %).
bench-watch: build
	-$(GO) run ./bench/watchcpu -bin $(BUILD)/git-agency -d 30s -n 50

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
