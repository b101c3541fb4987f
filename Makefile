GO ?= go

# Where tests leave files for people to look at (the dashboard's screenshots).
export BREAKERGEN_ARTIFACTS ?= $(CURDIR)/.artifacts

.PHONY: help test fmt vet race check-generate generate bench demo lint

help: ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

test: fmt vet race ## gofmt, go vet, go test -race ./...

fmt: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet ./...
	$(GO) vet ./...

race: ## go test -race ./...
	$(GO) test -race ./...

bench: ## runtime benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/
