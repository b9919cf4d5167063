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

.PHONY: all build install test lint bench demo e2e-real clean man

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-agency ./cmd/git-agency
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/git-sandbox ./cmd/git-sandbox

man: build
	mkdir -p $(BUILD)/man
	$(BUILD)/git-agency man > $(BUILD)/man/git-agency.1
	$(BUILD)/git-sandbox man > $(BUILD)/man/git-sandbox.1

install: build man
	mkdir -p $(GOBIN) $(MANDIR)
	install -m 0755 $(BUILD)/git-agency $(BUILD)/git-sandbox $(GOBIN)/
	install -m 0644 $(BUILD)/man/git-agency.1 $(BUILD)/man/git-sandbox.1 $(MANDIR)/
	@echo "installed git-agency and git-sandbox into $(GOBIN), man pages into $(MANDIR)"
	@case ":$$PATH:" in *":$(GOBIN):"*) ;; *) echo "note: add $(GOBIN) to your PATH so 'git agency' resolves";; esac

test:
	$(GO) test -count=1 -timeout 30m ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BUILD)

# Benchmarks print ratios against plain git; they never fail on a slow result.
bench: bench-checkpoint
bench-checkpoint:
	$(GO) run ./bench/checkpoint
