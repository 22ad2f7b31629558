# Run `make help` for the targets.

.PHONY: help run ci test test/short bench build vet fmt tools

help: ## show this help
	@grep -E '^[a-zA-Z/_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

run: ## run the service on the embedded SQLite default (data/)
	go run ./cmd/webhooks serve

ci: ## on a Debian machine (as root): install and start what the tests need, then run them all, as CI does (.ci/run)
	.ci/run

# go test starts the packages' test binaries in the order it is given them,
# -p (the number of CPUs) at a time: the slowest go first, so that none of
# them is left to run alone at the end. ./... brings every other package.
SLOW_TESTS = ./internal/e2e ./cmd/webhooks ./internal/postgres ./internal/sqlite ./internal/portal

# TEST_JSON, when set, names a file that keeps go test's -json events
# (.ci/run reads it); the console shows the usual results through
# scripts/gotest-report.
GOTEST = go test -race -count=1 -timeout 15m
ifdef TEST_JSON
GOTEST_JSON = -json
GOTEST_REPORT = | tee $(TEST_JSON) | scripts/gotest-report
endif

# The kits' own tests (kits/test) run beside go test, which leaves a CPU idle
# at times; their output follows go test's.
test: SHELL := /bin/bash
test: tools ## run every test with the race detector, and the kits' own tests (needs what make ci installs: docs/development.md)
	kits/setup
	@set -o pipefail; kits_log=$$(mktemp); kits/test > $$kits_log 2>&1 & kits=$$!; \
	echo "$(GOTEST) $(SLOW_TESTS) ./..."; \
	$(GOTEST) $(GOTEST_JSON) $(SLOW_TESTS) ./... $(GOTEST_REPORT); go_status=$$?; \
	wait $$kits; kits_status=$$?; echo kits/test; cat $$kits_log; rm -f $$kits_log; \
	test $$go_status -eq 0 && test $$kits_status -eq 0

test/short: tools ## run every test without the race detector (faster)
	kits/setup
	go test -count=1 ./...

tools: tools/openapi-lint/node_modules/.installed ## install the pinned OpenAPI linter (Redocly CLI, npm ci)

# npm ci installs exactly the lockfile's versions; it runs again only when
# the lockfile changes.
tools/openapi-lint/node_modules/.installed: tools/openapi-lint/package-lock.json
	npm ci --prefix tools/openapi-lint --no-audit --no-fund
	touch $@

bench: ## the throughput and latency figures of docs/performance.md (30 s per scenario)
	go run ./cmd/webhooks bench

build: ## build the webhooks binary (./webhooks), with its version and revision
	go build -buildvcs=auto -o webhooks ./cmd/webhooks

# staticcheck runs at the version pinned here, from the Go module proxy,
# without entering go.mod: no build of the service depends on it.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: ## staticcheck (every check of its default set; exceptions are justified in //lint:ignore comments)
	go run $(STATICCHECK) ./...

vet: ## go vet, gofmt and go mod tidy
	go vet ./...
	go mod tidy -diff
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
