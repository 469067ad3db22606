# runsdesk — `make help` lists the targets.

GO           ?= go
TEST_TIMEOUT ?= 35m

# templ.yaml holds flat "key: value" lines; read them without a YAML parser.
templ_conf    = $(shell sed -n 's/^$(1):[[:space:]]*\([^ #]*\).*/\1/p' templ.yaml)
TEMPL_PATH    := $(call templ_conf,path)
TEMPL_INCLUDE_VERSION := $(call templ_conf,include-version)
TEMPL_FLAGS   := -path $(TEMPL_PATH) -include-version=$(TEMPL_INCLUDE_VERSION)

.DEFAULT_GOAL := help
.PHONY: help generate generate-check lint test test-typo3-layout bench bench-perf run

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

generate: ## regenerate the templ components (*_templ.go) under the templ.yaml path
	$(GO) tool templ generate $(TEMPL_FLAGS)

generate-check: ## fail if a *_templ.go file is stale or orphaned
	@if [ -z "$(TEMPL_PATH)" ]; then echo "templ.yaml has no path: key" >&2; exit 1; fi
	@if [ -d "$(TEMPL_PATH)" ] && find "$(TEMPL_PATH)" -name '*.templ' -o -name '*_templ.go' | grep -q .; then \
		echo "$(GO) tool templ generate -check $(TEMPL_FLAGS)"; \
		$(GO) tool templ generate -check $(TEMPL_FLAGS) || { echo "generated templ code is stale: run 'make generate' and commit the result" >&2; exit 1; }; \
	else \
		echo "no .templ files under $(TEMPL_PATH)/: nothing to check"; \
	fi

lint: ## go vet and staticcheck
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

test: generate-check ## check generated code and go.mod, vet, then all tests with the race detector
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2; exit 1; }
	$(GO) vet ./...
	@# the TYPO3-layout pass mostly waits on its database: it runs beside the main one
	@log=$$(mktemp); $(MAKE) --no-print-directory test-typo3-layout >$$log 2>&1 & layout=$$!; \
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...; main=$$?; \
	wait $$layout; second=$$?; cat $$log; rm -f $$log; \
	test $$main -eq 0 && test $$second -eq 0

test-typo3-layout: ## the store's transition, account, schema and EXPLAIN tests again on the tables runsdesk uses beside TYPO3 (--typo3)
	RUNSDESK_TEST_LAYOUT=typo3 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) \
		-run '^Test(Commit|Claim|Migrat|Sealed|Explain|StoreBesideTYPO3|Accounts?|Identit|ReapStale|Suspend)|PreparedOnce|CarriesCalls|CarriesTheOutput|ContinuationAppends' ./db/

bench: ## run the benchmarks (no tests)
	$(GO) test -run '^$$' -bench . -benchmem ./...

bench-perf: ## issue 6's figures: inbox at 1k/100k/1M runs, memory, submit path (bench/README.md; ~12 min)
	$(GO) run ./bench/inbox -runs 1000,100000,1000000 -mode http -duration 6s -clients 1,32 -rounds 1
	$(GO) run ./bench/inbox -runs 1000,100000,1000000 -mode http -duration 15s -clients 32 -interval 250ms -rounds 1
	$(GO) run ./bench/inbox -runs 1000000 -memory -duration 15s -clients 32
	$(GO) run ./bench/submit -runs 250000 -duration 8s -rounds 3

run: ## start the web UI, API and workers (private MariaDB under ./var unless RUNSDESK_DSN is set)
	$(GO) build -o bin/runsdesk ./cmd/web
	@# On a terminal, job control gives runsdesk the foreground alone: Ctrl-C reaches it, not
	@# make, so a graceful stop ends make with 0 (under `go run` or in make's group it is 1 or 130).
	@if [ -t 0 ]; then set -m; fi; ./bin/runsdesk serve --demo
