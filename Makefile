# The durable-sessions stack. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
CONFORMANCE_BACKENDS ?= memory sqlite file-durable file-fast
# The compiled ds-server: its wheel, and that wheel unpacked for PYTHONPATH.
DIST := build/dist
COMPILED := build/compiled
SERVER_SOURCES := $(shell find server/src -name '*.py') server/pyproject.toml

.PHONY: help setup dev dev-server test lint typecheck unit unit-compiled extensions conformance conformance-compiled wheel docs fmt clean bench bench-storage bench-extensions bench-sync bench-spark

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "uv==$(UV_VERSION)"

$(VENV)/.synced: $(UV) uv.lock pyproject.toml $(wildcard */pyproject.toml)
	$(UV) sync --locked --inexact --all-groups --quiet
	@# Precompile: with PYTHONDONTWRITEBYTECODE set, every server start would recompile.
	@$(PY) -m compileall -q -j 0 $(VENV)/lib server/src proxy/src client/src stack/src sync/src > /dev/null || true
	@touch $@

conformance/node_modules/.installed: conformance/package.json conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: $(VENV)/.synced conformance/node_modules/.installed ## Install everything (uv, Python workspace, npm packages)

dev: $(VENV)/.synced ## Run Envoy on 127.0.0.1:8080 (JWT) in front of ds-server on 127.0.0.1:4437
	$(PY) -m ds_proxy.dev

dev-server: $(VENV)/.synced ## Run ds-server alone on 127.0.0.1:4437 (no gateway, no auth)
	$(VENV)/bin/ds-server

test: setup lint typecheck unit unit-compiled conformance conformance-compiled docs ## Lint, type-check, pytest (server suite on both builds), conformance (both builds), docs build

lint: $(VENV)/.synced ## ruff lint + format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV)/.synced ## mypy --strict on the sources
	$(VENV)/bin/mypy

unit: $(VENV)/.synced ## pytest: unit, store contract, HTTP and gateway (real Envoy) tests
	$(VENV)/bin/pytest -q

extensions: $(VENV)/.synced ## The /ds extension suite against a real ds-server, every backend
	$(VENV)/bin/pytest -q server/tests/extensions

conformance: setup ## The official conformance suite against a real ds-server, per backend
	$(PY) server/tests/conformance/run.py $(CONFORMANCE_BACKENDS)

# mypyc compiles the hot modules (the list is in server/pyproject.toml); the
# wheel keeps the .py sources beside them. No build isolation: mypyc needs the
# workspace's dependencies to see their types.
$(COMPILED)/.built: $(VENV)/.synced $(SERVER_SOURCES)
	@# Built from a copy: the build leaves compiled modules beside the sources,
	@# where they would shadow the .py files of the editable install.
	rm -rf $(DIST) $(COMPILED) build/server
	mkdir -p build/server && cp -r server/pyproject.toml server/src build/server/
	HATCH_BUILD_HOOK_ENABLE_MYPYC=1 $(UV) build --wheel --no-build-isolation \
		--python $(PY) --out-dir $(DIST) build/server
	$(PY) -m zipfile -e $(DIST)/ds_server-*.whl $(COMPILED)
	@touch $@

wheel: $(COMPILED)/.built ## The compiled ds-server wheel (mypyc), in build/dist
	@ls $(DIST)/*.whl

# The whole server suite again, against the compiled build: the servers the
# tests start inherit PYTHONPATH, and the suite refuses to run if the
# compiled modules don't load (server/tests/conftest.py).
unit-compiled: $(VENV)/.synced $(COMPILED)/.built ## pytest: the whole server suite against the compiled ds-server
	DS_TEST_BUILD=compiled PYTHONPATH=$(COMPILED) $(VENV)/bin/pytest -q server/tests

conformance-compiled: setup $(COMPILED)/.built ## The conformance suite against the compiled ds-server, per backend
	PYTHONPATH=$(COMPILED) $(PY) server/tests/conformance/run.py --compiled $(CONFORMANCE_BACKENDS)

docs: $(VENV)/.synced ## Build the documentation site (mkdocs --strict)
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir site

bench/node/node_modules/.installed: bench/node/package.json bench/node/package-lock.json
	cd bench/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# `make bench BENCH_ARGS="--quick --repetitions 1 --scenarios post,rtt"` for a short run.
BENCH_ARGS ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

bench: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## ds-server (compiled) vs the Node reference server, all scenarios (not part of `make test`)
	@command -v wrk > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk)
	@# Fresh bytecode, so the many server starts don't each recompile the sources.
	@$(PY) -m compileall -q -j 0 server/src bench/src > /dev/null || true
	@# The compiled build is what production runs (`make wheel`), so it is what's measured.
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench compare --update-docs $(BENCH_ARGS)

bench-storage: $(VENV)/.synced ## Storage benchmark: append latency/throughput per backend, start-up time
	$(VENV)/bin/ds-bench storage

bench-extensions: $(VENV)/.synced ## Server RSS while bootstrapping a 1 GiB stream; space a snapshot frees
	$(VENV)/bin/ds-bench extensions

# `make bench-sync BENCH_SYNC_ARGS="--seconds 10 --events 50000"` for a short run;
# `BENCH_SYNC_ARGS="--scenarios tables"` for the Postgres → stream lag alone.
BENCH_SYNC_ARGS ?=

bench-sync: $(VENV)/.synced ## ds-sync: stream → Postgres lag and events/s; Postgres → pg-items lag at 1,000 changes/s
	@$(PY) -m compileall -q -j 0 sync/src bench/src > /dev/null || true
	$(VENV)/bin/ds-bench sync $(BENCH_SYNC_ARGS)

# `make bench-spark BENCH_SPARK_ARGS="--sizes 100000"` for a short run.
BENCH_SPARK_ARGS ?=

bench-spark: $(VENV)/.synced ## Spark analytics wall time and driver memory at 100k/1M/5M events, beside pandas
	SPARK_LOCAL_IP=127.0.0.1 $(PY) -m ds_spark.bench.run --update-docs $(BENCH_SPARK_ARGS)

fmt: $(VENV)/.synced ## Format and auto-fix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean: ## Remove build and test artefacts (keeps .venv and node_modules)
	rm -rf site build .pytest_cache .mypy_cache .ruff_cache .hypothesis
