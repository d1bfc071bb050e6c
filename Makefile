# optics — everyday targets. The README names the two that matter: `make run` and `make test`.

CARGO ?= cargo
# Extra arguments for `optics` under `make run`, e.g. `make run ARGS="--listen 0.0.0.0:8080"`.
ARGS ?=
PYTHON ?= python3
REFERENCE_VENV := .venv-reference
# The official MCP Python SDK, for the tool server's client checks.
MCP_VENV := .venv-mcp
# Schemathesis, for the API's hardening run.
HARDENING_VENV := .venv-hardening
# DuckDB and polars, reading the snapshot store directly as docs/storage.md shows.
SQL_VENV := .venv-sql
# Playwright, driving Debian's Chromium through the dashboard.
BROWSER_VENV := .venv-browser
# The distributed proof: an S3 API server (moto) in a venv, a Kafka-protocol broker (tansu, from
# crates.io, with its SQLite storage so a restarted broker keeps its log) built once into tools/.
DISTRIBUTED_VENV := .venv-distributed
TANSU := tools/tansu/bin/tansu

.PHONY: run build-distributed build test mcp-clients test-sql-readers test-browser test-hardening test-distributed fmt fmt-check lint bench reference registry clean help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

run: ## build the optimised binary (profile `service`) and run the whole service on ./data
	$(CARGO) build --profile service --bin optics --no-default-features
	./target/service/optics run $(ARGS)

build-distributed: ## the optimised binary with the Kafka bus, for `optics ingest` / `optics compute`
	$(CARGO) build --profile service --bin optics

build: ## debug build of the whole workspace
	$(CARGO) build --workspace

test: fmt-check lint ## formatting check, clippy -D warnings, every test, the MCP client checks, the SQL readers, the dashboard, Schemathesis
	$(CARGO) test --workspace
	$(MAKE) mcp-clients
	$(MAKE) test-sql-readers
	$(MAKE) test-browser
	$(MAKE) test-hardening

mcp-clients: ## the official MCP Python SDK drives every tool over stdio and streamable HTTP against `optics run`
	test -x $(MCP_VENV)/bin/python || $(PYTHON) -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --quiet -r scripts/mcp/requirements.txt
	$(CARGO) build --bin optics
	$(MCP_VENV)/bin/python scripts/mcp/check_tools.py --optics target/debug/optics --records $(REFERENCE_RECORDS)

test-sql-readers: ## DuckDB, polars and `optics sql` read a backfilled store alike; ADBC reads a chain-at-time over Flight SQL
	test -x $(SQL_VENV)/bin/python || $(PYTHON) -m venv $(SQL_VENV)
	$(SQL_VENV)/bin/pip install --quiet -r scripts/sql/requirements.txt
	$(CARGO) build --bin optics
	dir=$$(mktemp -d) && \
	backfill="target/debug/optics backfill --data-dir $$dir --to 2026-11-20 --universe 2 --history-years 1 --quiet" && \
	$$backfill --sessions 2 && $$backfill --sessions 1 && \
	$(SQL_VENV)/bin/python scripts/sql/read_store.py --data-dir $$dir --ticker SPX --optics target/debug/optics && \
	$(SQL_VENV)/bin/python scripts/sql/flight_sql_check.py --data-dir $$dir --ticker SPX --optics target/debug/optics; \
	status=$$?; rm -rf "$$dir"; exit $$status

test-browser: ## headless Chromium (Debian's) signs in to the dashboard, picks SPY and AAPL, checks every panel drew
	command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	test -x $(BROWSER_VENV)/bin/python || $(PYTHON) -m venv $(BROWSER_VENV)
	$(BROWSER_VENV)/bin/pip install --quiet -r scripts/browser/requirements.txt
	$(CARGO) build --bin optics
	$(BROWSER_VENV)/bin/python scripts/browser/dashboard_check.py --optics target/debug/optics \
		--chromium $$(command -v chromium) --out target/dashboard

test-hardening: ## Schemathesis holds `optics run` to its OpenAPI document: >= 10,000 cases, no failure
	test -x $(HARDENING_VENV)/bin/python || $(PYTHON) -m venv $(HARDENING_VENV)
	$(HARDENING_VENV)/bin/pip install --quiet -r scripts/hardening/requirements.txt
	$(CARGO) build --bin optics
	$(HARDENING_VENV)/bin/python scripts/hardening/schemathesis_run.py --optics target/debug/optics \
		--schemathesis $(HARDENING_VENV)/bin/schemathesis

test-distributed: $(TANSU) ## ingest, two workers, two replicas on a real broker, S3 API, PostgreSQL, Redis; faults; figures
	test -x $(DISTRIBUTED_VENV)/bin/python || $(PYTHON) -m venv $(DISTRIBUTED_VENV)
	$(DISTRIBUTED_VENV)/bin/pip install --quiet -r scripts/distributed/requirements.txt
	$(CARGO) build --profile service --bin optics
	$(DISTRIBUTED_VENV)/bin/python scripts/distributed/run.py --optics target/service/optics \
		--tansu $(TANSU) --moto $(DISTRIBUTED_VENV)/bin/moto_server

$(TANSU):
	$(CARGO) install tansu --version 0.6.0 --locked --no-default-features --features libsql \
		--root tools/tansu --target-dir tools/tansu-build

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
	$(CARGO) bench -p optics-ingest --features kafka --bench kafka_throughput
	$(CARGO) bench -p optics-compute --bench chain_build
	$(CARGO) bench -p optics-compute --bench exposure
	$(CARGO) bench -p optics-compute --bench strategy
	$(CARGO) bench -p optics --bench pipeline
	$(CARGO) bench -p optics-api --bench load
	$(CARGO) bench -p optics-api --bench soak
	$(CARGO) bench -p optics-api --bench auth
	$(CARGO) bench --profile service -p optics-api --bench chain_at_time
	$(CARGO) bench --profile service -p optics-api --bench universe_refresh
	$(CARGO) bench -p optics-mcp --bench tool_call
	$(CARGO) bench --profile service --no-default-features -p optics --bench live_memory
	$(CARGO) bench --profile service --no-default-features -p optics --bench freshness

reference: ## regenerate the reference vectors (QuantLib + mpmath; optionlab for strategies; numpy/pandas/arch for volatility, earnings, correlation and dividends)
	test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/pip install --quiet -r scripts/reference/requirements.txt
	$(REFERENCE_VENV)/bin/python scripts/reference/pricing_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/strategy_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/vol_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/earnings_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/stock_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/moves_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/dividend_borrow_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/cores_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/borrow_context_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/relative_value_vectors.py
	$(REFERENCE_VENV)/bin/python scripts/reference/screen_vectors.py

# The interface's reference records, beside the repository in every clone and in CI.
REFERENCE_RECORDS ?= ../shared/spec/reference-records.json

registry: ## regenerate the endpoint table (api/src/registry/table.rs) from the reference records
	$(PYTHON) api/scripts/gen_registry.py $(REFERENCE_RECORDS) > api/src/registry/table.rs.new
	rustfmt --edition 2024 api/src/registry/table.rs.new
	mv api/src/registry/table.rs.new api/src/registry/table.rs

clean: ## remove build outputs
	$(CARGO) clean
