# breakergen: `make help` lists the targets.
GO ?= go

# Where tests leave files for people to look at (the dashboard's screenshots).
export BREAKERGEN_ARTIFACTS ?= $(CURDIR)/.artifacts

# Every module of the repository (the core, bench/, the exporters, redisstate):
# vet, race and lint go through each. tools/ only pins staticcheck.
MODULES := $(sort $(patsubst ./%,%,$(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './tools/*' -not -path '*/testdata/*' -not -path './.*'))))

# make race records every skipped test here; make skips reports them.
SKIPS := $(BREAKERGEN_ARTIFACTS)/skips.jsonl
# Runs go test -json and prints what go test prints, recording the skips.
TESTSUMMARY := $(CURDIR)/bin/testsummary

.PHONY: help demo demo-fleet serve test fmt vet race allocs skips testsummary race-repeat check-generate generate lint bench bench-runtime fuzz

help: ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-15s %s\n", $$1, $$2}'

demo: ## run the market-data scenario end to end (loopback only, about 13s; the first build takes longer)
	@echo "building the demo (./examples/marketdata/cmd/demo: the runtime, the generated wrappers, a fake upstream; a first build can take half a minute)…"
	@$(GO) build -o $(CURDIR)/bin/demo ./examples/marketdata/cmd/demo
	@$(CURDIR)/bin/demo $(DEMOFLAGS)

demo-fleet: ## three processes share their breakers through a redis-server of their own: one ban, one trip, one probe (about 3s; skips without redis-server)
	cd examples/fleet && $(GO) run .

serve: ## the demo, then keep serving the dashboard and Prometheus /metrics on 127.0.0.1:8080
	cd examples/ops && $(GO) run ./cmd/serve -serve 127.0.0.1:8080

test: fmt vet race allocs race-repeat check-generate skips ## gofmt, go vet, go test -race (every module), allocation tests without -race, hook tests repeated, generated-code freshness, then what was skipped

fmt: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet ./... in every module
	@set -e; for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...); done

race: testsummary ## go test -race ./... in every module (skips recorded for make skips)
	@rm -f $(SKIPS); mkdir -p $(dir $(SKIPS))
	@set -e; for m in $(MODULES); do echo "go test -race ($$m)"; (cd $$m && $(TESTSUMMARY) -record $(SKIPS) $(GO) test -race ./...); done

# The allocation tests (testing.AllocsPerRun, named *Alloc*) skip under
# -race: this pass runs them without it, in every module that has them.
allocs: testsummary ## the allocation tests without -race, in every module that has them
	@set -e; for m in $(MODULES); do (cd $$m && $(TESTSUMMARY) -allocs -record $(SKIPS) $(GO) test ./...); done

# With CI=true (.ci/run) a skip for a missing component fails here.
skips: testsummary ## how many tests make race skipped and why, each reason once; CI=true fails on a missing component
	@$(TESTSUMMARY) -report $(SKIPS)

testsummary:
	@$(GO) build -o $(TESTSUMMARY) ./internal/testsummary

# Hooks may run on a timer's goroutine: the tests that read what a hook wrote
# pass alone and must pass beside anything, so they run many times under
# -race (a few seconds in all) on top of the full run. So does the fleet's
# modes test: a fleet follows a peer's mode on three goroutines (Attach,
# the subscriber's resync, the messages), and a race there failed it one
# run in a hundred under load.
race-repeat: ## the demo's scenario, the runtime's hook tests and the fleet's modes, -race -count=N
	$(GO) test -race -count=200 -run '^TestScenario$$' ./examples/marketdata/demo/
	$(GO) test -race -count=50 -run 'Hook|Transition|Stress|^ExampleRegistry' ./runtime/
	cd redisstate && $(GO) test -race -count=30 -run '^TestFleetFollowsModes$$' .

generate: ## regenerate every generated file (go generate, every module with generated files)
	$(GO) generate ./...
	cd bench && $(GO) generate ./quote
	cd examples/clients && $(GO) generate ./...

check-generate: ## fail if any generated file is stale
	$(GO) run ./cmd/breakergen -check ./...
	cd bench && $(GO) run github.com/breakergen/breakergen/cmd/breakergen -check ./quote
	cd examples/clients && $(GO) run github.com/breakergen/breakergen/cmd/breakergen -check ./...

lint: ## staticcheck (every module), pinned as a tool in tools/go.mod
	cd tools && $(GO) build -o ../bin/staticcheck honnef.co/go/tools/cmd/staticcheck
	@set -e; for m in $(MODULES); do echo "staticcheck ($$m)"; (cd $$m && $(CURDIR)/bin/staticcheck ./...); done

# How long make fuzz runs the generator fuzzer, and with how many workers
# (the engine kills an input that runs over 10 s: more workers on a busy
# machine make that likelier).
FUZZTIME ?= 60s
FUZZPARALLEL ?= 1

fuzz: ## the generator fuzzer for FUZZTIME (60s): random annotated interfaces must generate, vet, and forward every argument unchanged
	$(GO) test -run '^$$' -fuzz FuzzGenerate -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) ./cmd/breakergen/

bench: ## breakergen beside its peers and the generator beside mockgen/mockery; rewrites BENCHMARKS.md (~15 min)
	cd bench && $(GO) run ./cmd/report

bench-runtime: ## the runtime's own benchmarks, then the wrapper beside a direct call and its floor (6 runs each; compare with benchstat)
	$(GO) test -run '^$$' -bench . -benchmem -count 6 -cpu 1,2 ./runtime/
	cd bench && $(GO) test -run '^$$' -bench '/^(direct|forward|floor|breakergen|breakergen-chain)$$' -benchmem -count 6 -cpu 1,2 ./contend/
