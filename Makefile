# toolgate: `make test` installs what the tests need and runs every test.
GO ?= go
# Fuzz budgets are counts, not durations: Go 1.26's fuzz coordinator can
# report a bare "context deadline exceeded" when a -fuzztime duration ends
# under CPU load (golang/go#75804). -timeout still catches a hanging input;
# minimizing a new input is bounded too (it stalls the progress count).
# 20,000 inputs a target keeps the whole of make test near 12 minutes on
# two cores with twenty targets; `make soak` runs 3,000,000.
FUZZTIME ?= 20000x
SOAKFUZZTIME ?= 3000000x

.PHONY: screenshots test deps generate check-generated vet unit integration agents python fuzz soak bench bench-peers build run

test: deps check-generated vet unit integration fuzz

# build writes the server as bin/toolgate-server and the client command
# (hooks, permissions, add-dir, evaluate) as bin/toolgate.
build:
	$(GO) build -o bin/toolgate-server ./cmd/server
	$(GO) build -o bin/toolgate ./cmd/toolgate

run:
	$(GO) run ./cmd/server

# screenshots regenerates the committed pictures of every page at 390 and
# 1280 px wide (integration/screenshots/pages), which the README links.
screenshots:
	TOOLGATE_SCREENSHOTS=1 $(GO) test -count=1 -run 'TestBrowserPagesLayout|TestBrowserChinese|TestBrowserAccessibility' ./integration/

# deps installs Debian's Chromium for the browser tests, python3 for the
# Python client's tests and PostgreSQL's server binaries for the tests of
# --database-url when they are missing (as root, through apt-get), and
# fetches the Go modules and the pinned agents the tests drive (Claude Code,
# Codex, Gemini CLI from npm, once, into ~/.cache/toolgate/agents). The PostgreSQL tests start their own throwaway
# cluster on a free loopback port (internal/pgtest); a system cluster the
# package may start on 5432 is not used by them.
deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing chromium (Debian package) for the browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core fonts-wqy-microhei >/dev/null; \
		else \
			echo "chromium is missing: install Debian's chromium package (as root) to run the browser tests"; exit 1; \
		fi; \
	fi
	@if ! command -v python3 >/dev/null 2>&1; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing python3 (Debian package) for the Python client's tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null; \
		else \
			echo "python3 is missing: install Debian's python3 package (as root) to run the Python client's tests"; exit 1; \
		fi; \
	fi
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing postgresql (Debian package) for the PostgreSQL tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
		else \
			echo "PostgreSQL is missing: install Debian's postgresql package (as root) to run the PostgreSQL tests"; exit 1; \
		fi; \
	fi
	$(GO) mod download
	sh integration/agents/install.sh

generate:
	$(GO) tool templ generate

# check-generated fails when the committed _templ.go files are stale.
check-generated:
	$(GO) tool templ generate
	@if [ -d .git ] && ! git diff --exit-code -- '*_templ.go'; then \
		echo "templ output is stale: run 'make generate' and commit"; exit 1; fi

# vet runs go vet and staticcheck (a tool of go.mod); both must be clean.
vet:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# unit and integration run through gotestsum (a tool of go.mod): a line per
# package, or per test in the long integration package, as each finishes, so
# no step is silent for minutes, and a failure's whole output.
GOTESTSUM = $(GO) tool gotestsum

unit:
	$(GOTESTSUM) --format pkgname-and-test-fails -- -count=1 $$($(GO) list ./... | grep -v /integration)

integration:
	$(GOTESTSUM) --format testname -- -count=1 -timeout 15m ./integration/...

# agents runs the real agents (installed by deps) through every wiring,
# mode and scenario; make test runs the permissive modes and a
# representative few of the default ones. It logs each tool call's result
# as the agent reported it.
agents: deps
	TOOLGATE_AGENTS_FULL=1 TOOLGATE_AGENTS_VERBOSE=1 $(GO) test -count=1 -v -timeout 15m -run 'TestClaudeCode|TestCodex|TestGemini|TestHookLatency|TestSetupAndDoctor' ./integration/

# python runs clients/python's unittest suite against a real server (also
# part of integration).
python:
	$(GO) test -count=1 -run '^TestPythonClient$$' ./integration/

# fuzz runs each fuzz target briefly; `make soak` runs them longer.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 200x -timeout 5m $$pkg; \
		done; \
	done

soak:
	$(MAKE) fuzz FUZZTIME=$(SOAKFUZZTIME)
	TOOLGATE_SOAK=1 TOOLGATE_WS_LOAD=1 $(GO) test -count=1 -timeout 60m ./integration/... ./web/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine/...

# bench-peers: toolgate side by side with OPA and Cedar (bench/peers, a module
# of its own, so its modules are fetched on first use; not part of test).
bench-peers:
	cd bench/peers && $(GO) run ./cmd/sidebyside -sizes 10,1000,10000,100000 -rounds 25
