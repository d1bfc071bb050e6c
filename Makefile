# optics — everyday targets. The README names the two that matter: `make run` and `make test`.

CARGO ?= cargo
# Extra arguments for `optics` under `make run`, e.g. `make run ARGS="--listen 0.0.0.0:8080"`.
ARGS ?=
PYTHON ?= python3
REFERENCE_VENV := .venv-reference

.PHONY: run build test fmt fmt-check lint bench reference clean help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

run: ## build the optimised binary (profile `service`) and run it
	$(CARGO) build --profile service --bin optics
	@echo
	@echo "The HTTP service (optics run) lands with the API-platform issue; until then make run"
	@echo "prices an example contract with the optimised calculator:"
	@echo "  optics price --type call --spot 100 --strike 105 --days 30 --rate 0.05 --div 0.01 --iv 0.25"
	./target/service/optics price --type call --spot 100 --strike 105 --days 30 --rate 0.05 --div 0.01 --iv 0.25 $(ARGS)

build: ## debug build of the whole workspace
	$(CARGO) build --workspace

test: fmt-check lint ## formatting check, clippy -D warnings, then every test
	$(CARGO) test --workspace

fmt: ## format the code
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

lint: ## clippy on every target, warnings are errors
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: ## benchmarks that print figures (ns/option, ratios, accuracies, throughput)
	$(CARGO) bench -p optics-compute --bench pricing
	$(CARGO) bench -p optics-schemas --bench bus_codec
	$(CARGO) bench -p optics-ingest --bench bus_throughput
	$(CARGO) bench -p optics-ingest --bench archive_write
	$(CARGO) bench -p optics-ingest --bench simulator_rate

reference: ## regenerate the reference vectors with QuantLib + mpmath (Python venv)
	test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/pip install --quiet -r scripts/reference/requirements.txt
	$(REFERENCE_VENV)/bin/python scripts/reference/pricing_vectors.py

clean: ## remove build outputs
	$(CARGO) clean
