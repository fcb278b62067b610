# The durable-sessions stack. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
CONFORMANCE_BACKENDS ?= cluster memory sqlite file-durable file-fast postgres
# The compiled ds-server: its wheel, and that wheel unpacked for PYTHONPATH.
DIST := build/dist
COMPILED := build/compiled
SERVER_SOURCES := $(shell find server/src -name '*.py') server/pyproject.toml
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The browser tests drive Debian's Chromium: Playwright's own browser download
# cannot reach its servers, and CI machines may not have the package yet.
CHROMIUM := /usr/bin/chromium

.PHONY: help setup dev dev-server dev-reset analytics snapshots test lint typecheck unit unit-spread unit-spark unit-browser unit-e2e unit-soak soak unit-compiled e2e viewer-test viewer-shot extensions conformance conformance-compiled wheel docs config-reference compose-check fmt clean bench bench-cluster bench-metrics bench-storage bench-extensions bench-sync bench-spark

help: ## List the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

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

# The official TypeScript packages the SDK's tests are judged against.
client/tests/node/node_modules/.installed: client/tests/node/package.json client/tests/node/package-lock.json
	cd client/tests/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The official State Protocol package: the sync tests' independent reader of pg-{table}.
sync/tests/node/node_modules/.installed: sync/tests/node/package.json sync/tests/node/package-lock.json
	cd sync/tests/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(CHROMIUM):
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends chromium

setup: $(VENV)/.synced conformance/node_modules/.installed client/tests/node/node_modules/.installed sync/tests/node/node_modules/.installed $(CHROMIUM) ## Install everything (uv, Python workspace, npm packages, Chromium)

# `make dev PORT=8081 SERVER_PORT=4440 ...`: each variable becomes the launcher's flag.
# Only from the command line: a PORT in the environment is usually another program's.
DEV_DIR ?= .dev
DEV_CLUSTER_DIR ?= .dev-cluster
dev_flag = $(if $(filter command line,$(origin $(1))),$(2) $($(1)))
DEV_FLAGS = --state-dir $(DEV_DIR) $(call dev_flag,PORT,--port) \
	$(call dev_flag,SERVER_PORT,--server-port) $(call dev_flag,ADMIN_PORT,--admin-port) \
	$(call dev_flag,PG_PORT,--pg-port) $(call dev_flag,SYNC_PORT,--sync-port) \
	$(call dev_flag,SERVER_METRICS_PORT,--server-metrics-port) \
	$(call dev_flag,HEARTBEAT_SECS,--heartbeat-secs) $(call dev_flag,SNAPSHOT_SECS,--snapshot-secs)

dev: $(VENV)/.synced ## The whole stack until Ctrl-C: Postgres, ds-server, Envoy :8080, ds-sync, heartbeat, hourly snapshots (PORT= SERVER_PORT= ADMIN_PORT= PG_PORT= SYNC_PORT= SERVER_METRICS_PORT= SNAPSHOT_SECS=)
	@$(PY) -m ds_stack.dev $(DEV_FLAGS)

dev-cluster: $(VENV)/.synced ## The stack with 3 ds-server replicas on the postgres store behind Envoy and 2 ds-sync processes sharing the work (state in .dev-cluster/; same ports and flags as dev)
	@$(PY) -m ds_stack.dev $(subst --state-dir $(DEV_DIR),--state-dir $(DEV_CLUSTER_DIR),$(DEV_FLAGS)) --replicas 3 --syncs 2

dev-cluster-reset: $(VENV)/.synced ## Delete the dev cluster's data in .dev-cluster/
	@$(PY) -m ds_stack.dev --state-dir $(DEV_CLUSTER_DIR) reset

dev-reset: $(VENV)/.synced ## Delete the dev stack's data in .dev/ (streams, Postgres, logs); refuses while `make dev` runs
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) reset

analytics: $(VENV)/.synced ## ds-spark analytics against the running `make dev` stack (output in .dev/spark-output)
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) spark analytics

snapshots: $(VENV)/.synced ## ds-spark snapshots against the running `make dev` stack
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) spark snapshots

dev-server: $(VENV)/.synced ## Run ds-server alone on 127.0.0.1:4437 (no gateway, no auth; streams in .dev/streams)
	DS_STORAGE__DATA_DIR=$(DEV_DIR)/streams $(VENV)/bin/ds-server

test: setup lint typecheck compose-check unit unit-compiled conformance conformance-compiled docs ## Lint, type-check, compose file, pytest (the server suite on both builds; gateway, browser, e2e), conformance (both builds), docs build

lint: $(VENV)/.synced ## ruff lint + format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV)/.synced ## mypy --strict on the sources
	$(VENV)/bin/mypy

# The suite mostly waits on real servers, so it runs as five pytest processes
# side by side: everything else spread over PYTEST_WORKERS xdist workers, and
# one process each for the suites that share one costly process per run: Spark
# (one JVM), the browser tests (one Chromium; Playwright's sync API also holds
# an event loop other asyncio tests can't share), e2e (one whole stack) and
# the soak test's short form (a whole stack of its own, `make soak` for an hour).
# Each one's output is printed when it ends.
PYTEST_WORKERS ?= 3
# pyproject's testpaths without spark/tests and e2e (--ignore can't drop a testpaths entry).
SPREAD_TESTS := server/tests proxy/tests client/tests bench/tests stack/tests sync/tests tests
PYTEST_ARGS ?=

unit: $(VENV)/.synced $(CHROMIUM) ## pytest: unit, store contract, HTTP, gateway (real Envoy), Spark, browser and e2e tests
	@$(MAKE) --no-print-directory -j5 --output-sync=target unit-spread unit-spark unit-browser unit-e2e unit-soak

unit-spread: $(VENV)/.synced
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) $(SPREAD_TESTS) --ignore=proxy/tests/browser --ignore=tests/soak $(PYTEST_ARGS)

unit-spark: $(VENV)/.synced
	$(VENV)/bin/pytest -q spark/tests $(PYTEST_ARGS)

unit-browser: $(VENV)/.synced $(CHROMIUM)
	$(VENV)/bin/pytest -q proxy/tests/browser $(PYTEST_ARGS)

unit-e2e: $(VENV)/.synced
	$(VENV)/bin/pytest -q e2e $(PYTEST_ARGS)

# -s: the test's last line is its figures (written vs retained, bootstraps, disk use).
unit-soak: $(VENV)/.synced sync/tests/node/node_modules/.installed
	DS_SOAK_SECS=$(SOAK_SHORT_SECS) $(VENV)/bin/pytest -q -s tests/soak $(PYTEST_ARGS)

SOAK_SHORT_SECS ?= 90
SOAK_SECS ?= 3600

soak: $(VENV)/.synced sync/tests/node/node_modules/.installed ## The soak test for SOAK_SECS (an hour): the whole stack, lowered limits, ds-sync killed; prints its figures (not in `make test`)
	DS_SOAK_SECS=$(SOAK_SECS) $(VENV)/bin/pytest -q -s tests/soak $(PYTEST_ARGS)

e2e: $(VENV)/.synced ## The e2e suite alone: the whole stack, black-box through Envoy (also part of `make unit`)
	$(VENV)/bin/pytest -q e2e

viewer-test: $(VENV)/.synced $(CHROMIUM) ## The session viewer's browser tests alone (Chromium, Envoy, ds-server)
	$(VENV)/bin/pytest -q proxy/tests/browser

viewer-shot: $(VENV)/.synced $(CHROMIUM) ## Refresh docs/img/viewer.png from a live session (a browser test)
	@mkdir -p docs/img
	DS_VIEWER_SCREENSHOT=docs/img/viewer.png $(VENV)/bin/pytest -q \
		proxy/tests/browser/test_viewer_live.py -k test_two_users_see_each_other_live

extensions: $(VENV)/.synced ## The /ds extension suite against a real ds-server, every backend
	$(VENV)/bin/pytest -q server/tests/extensions

conformance: setup ## The official conformance suite against a real ds-server, per backend
	$(PY) server/tests/conformance/run.py $(CONFORMANCE_BACKENDS)

# mypyc compiles the hot modules (the list is in server/pyproject.toml); the
# wheel keeps the .py sources beside them. No build isolation: mypyc needs the
# workspace's dependencies to see their types.
$(COMPILED)/.built: $(VENV)/.synced $(SERVER_SOURCES)
	@# mypyc writes C: the build needs a compiler and Python's headers.
	@command -v "$${CC:-cc}" > /dev/null || { echo "make wheel: no C compiler ($${CC:-cc}); mypyc compiles the server to C. Install one (Debian/Ubuntu: apt-get install gcc)." >&2; exit 1; }
	@$(PY) -c 'import pathlib, sys, sysconfig; sys.exit(not pathlib.Path(sysconfig.get_paths()["include"], "Python.h").is_file())' \
		|| { echo "make wheel: no Python headers (Python.h) for $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'). Install them (Debian/Ubuntu: apt-get install python3-dev)." >&2; exit 1; }
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
	DS_TEST_BUILD=compiled PYTHONPATH=$(COMPILED) $(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) server/tests $(PYTEST_ARGS)

conformance-compiled: setup $(COMPILED)/.built ## The conformance suite against the compiled ds-server, per backend
	PYTHONPATH=$(COMPILED) $(PY) server/tests/conformance/run.py --compiled $(CONFORMANCE_BACKENDS)

docs: $(VENV)/.synced ## Build the documentation site (mkdocs --strict); fails if docs/configuration.md is stale
	$(PY) tools/config_reference.py --check
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir site

config-reference: $(VENV)/.synced ## Regenerate the settings tables of docs/configuration.md from the settings classes
	$(PY) tools/config_reference.py --write

# Debian's docker-compose (1.29) validates the file without a Docker engine.
COMPOSE_PROFILES_ALL := --profile sync --profile dev --profile spark

compose-check: ## Validate docker-compose.yml with every profile (docker-compose config; no Docker engine needed)
	@command -v docker-compose > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y docker-compose)
	docker-compose -f docker-compose.yml $(COMPOSE_PROFILES_ALL) config -q
	@echo "docker-compose.yml: valid ($(COMPOSE_PROFILES_ALL))"

bench/node/node_modules/.installed: bench/node/package.json bench/node/package-lock.json
	cd bench/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# `make bench BENCH_ARGS="--quick --repetitions 1 --scenarios post,rtt"` for a short run.
BENCH_ARGS ?=

bench: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## ds-server (compiled) vs the Node reference server, all scenarios, then what metrics cost, then the Python SDK's producer vs the TypeScript one (not part of `make test`)
	@command -v wrk > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk)
	@command -v valgrind > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y valgrind)
	@# Fresh bytecode, so the many server starts don't each recompile the sources.
	@$(PY) -m compileall -q -j 0 server/src bench/src > /dev/null || true
	@# The compiled build is what production runs (`make wheel`), so it is what's measured.
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench compare --update-docs $(BENCH_ARGS)
	@# What metrics cost: unbatched POSTs with DS_METRICS__ENABLED on and off, interleaved.
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench metrics-cost $(BENCH_METRICS_ARGS)
	@# The Python SDK's producer against the official TypeScript one, same server.
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench producers $(BENCH_PRODUCERS_ARGS)

# `make bench-metrics BENCH_METRICS_ARGS="--quick --repetitions 3"` for a short run.
BENCH_METRICS_ARGS ?=

bench-metrics: $(VENV)/.synced $(COMPILED)/.built ## Unbatched POST throughput with metrics on vs off, interleaved (also the end of `make bench`)
	@command -v wrk > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk)
	@command -v valgrind > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y valgrind)
	@$(PY) -m compileall -q -j 0 server/src bench/src > /dev/null || true
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench metrics-cost $(BENCH_METRICS_ARGS)

# `make bench-producers BENCH_PRODUCERS_ARGS="--repetitions 3 --sizes 100"` for a short run.
BENCH_PRODUCERS_ARGS ?=

.PHONY: bench-producers
bench-producers: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## Python AsyncIdempotentProducer vs the TypeScript IdempotentProducer: msg/s at 1 and 16 producers (also the end of `make bench`)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench producers $(BENCH_PRODUCERS_ARGS)

bench-cluster: $(VENV)/.synced bench/node/node_modules/.installed ## Postgres-store replicas: durable appends at 1/16/64 writers and SSE fan-out, 1 vs 3 replicas
	$(VENV)/bin/ds-bench cluster

bench-storage: $(VENV)/.synced ## Storage benchmark: append latency/throughput per backend, start-up time
	$(VENV)/bin/ds-bench storage

bench-extensions: $(VENV)/.synced ## Server RSS while bootstrapping a 1 GiB stream; space a snapshot frees
	$(VENV)/bin/ds-bench extensions

# `make bench-sync BENCH_SYNC_ARGS="--seconds 10 --events 50000"` for a short run;
# `BENCH_SYNC_ARGS="--scenarios tables"` for the Postgres → stream lag alone;
# `BENCH_SYNC_ARGS="--profile"` attaches py-spy to ds-sync in the 1,000/s runs;
# `make bench-sync SYNCS=2`: two ds-sync processes sharing the work in every scenario.
BENCH_SYNC_ARGS ?=
SYNCS ?= 1

bench-sync: $(VENV)/.synced ## ds-sync: stream → Postgres lag and events/s; Postgres → pg-items lag at 1,000 changes/s; CPU per event (SYNCS=2: two processes)
	@$(PY) -m compileall -q -j 0 sync/src bench/src > /dev/null || true
	$(VENV)/bin/ds-bench sync --instances $(SYNCS) $(BENCH_SYNC_ARGS)

# `make bench-spark BENCH_SPARK_ARGS="--sizes 100000"` for a short run.
BENCH_SPARK_ARGS ?=

bench-spark: $(VENV)/.synced ## Spark analytics wall time and driver memory at 100k/1M/5M events, beside pandas
	SPARK_LOCAL_IP=127.0.0.1 $(PY) -m ds_spark.bench.run --update-docs $(BENCH_SPARK_ARGS)

fmt: $(VENV)/.synced ## Format and auto-fix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean: ## Remove build and test artefacts (keeps .venv, node_modules and the dev stack's data: make dev-reset)
	rm -rf site build .pytest_cache .mypy_cache .ruff_cache .hypothesis
