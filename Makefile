# The durable-sessions stack. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
# The workspace's interpreter. A distribution's CPython (Debian's, Ubuntu's)
# is built with profile-guided and link-time optimisation; a plain source
# build, such as pyenv's by default, is not, and serves ~10 % fewer requests
# (docs/benchmarks.md, "The interpreter"). So /usr/bin/python3 when it is
# 3.11 or newer, else $(PYTHON); `make WORKSPACE_PYTHON=/path/to/python3 ...`
# chooses another. Exported for every uv command below.
WORKSPACE_PYTHON ?= $(shell /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2> /dev/null && echo /usr/bin/python3 || command -v $(PYTHON))
export UV_PYTHON := $(WORKSPACE_PYTHON)
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
# Debian's PostgreSQL 15: the Postgres-dependent tests run on it as well as on
# the embedded 18. Installing the package may create and start a cluster of
# Debian's own (15/main, port 5432); nothing here uses it or minds it.
POSTGRES15_BIN := /usr/lib/postgresql/15/bin

.PHONY: help setup dev dev-server dev-reset example-chat analytics snapshots test lint typecheck unit unit-spread unit-spark unit-browser unit-e2e unit-soak soak unit-postgres15 test-postgres-matrix test-docker unit-compiled e2e viewer-test viewer-shot quickstart-shot extensions fuzz conformance conformance-compiled wheel docs config-reference cli-reference compose-check envoy-configs fmt clean bench bench-configs bench-log bench-cluster bench-fairness bench-metrics bench-storage bench-extensions bench-sync bench-spark

help: ## List the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "uv==$(UV_VERSION)"

# The workspace's environment, from uv.lock, in three sizes (pyproject.toml's
# dependency groups): everything (.synced: every group, what `make setup` and
# the tests use), what the stack runs (.synced-stack: `make dev` with no
# snapshot schedule), and that with Spark (.synced-spark). `--inexact`: a
# smaller sync never removes what a larger one installed.
MANIFESTS := $(UV) uv.lock pyproject.toml $(wildcard */pyproject.toml) $(TOOLS)/workspace-python
# Precompile: with PYTHONDONTWRITEBYTECODE set, every server start would recompile.
PRECOMPILE = @$(PY) -m compileall -q -j 0 $(VENV)/lib settings/src server/src proxy/src client/src stack/src sync/src schema/src > /dev/null || true

# Which interpreter the workspace was made with: another one makes uv make it again.
$(TOOLS)/workspace-python: FORCE
	@mkdir -p $(TOOLS)
	@echo '$(WORKSPACE_PYTHON)' | cmp -s - $@ || echo '$(WORKSPACE_PYTHON)' > $@

.PHONY: FORCE
FORCE:

$(VENV)/.synced: $(MANIFESTS)
	$(UV) sync --locked --inexact --all-groups --quiet
	$(PRECOMPILE)
	@touch $@

$(VENV)/.synced-stack: $(MANIFESTS)
	$(UV) sync --locked --inexact --no-default-groups --group stack --quiet
	$(PRECOMPILE)
	@touch $@

$(VENV)/.synced-spark: $(MANIFESTS)
	$(UV) sync --locked --inexact --no-default-groups --group stack --group spark --quiet
	$(PRECOMPILE)
	@touch $@

conformance/node_modules/.installed: conformance/package.json conformance/package-lock.json
	cd conformance && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The official TypeScript packages, pinned, that judge our readers and writers in
# the tests: @durable-streams/state and /client, the AI SDK transport.
JUDGES := tests/node/node_modules/.installed
$(JUDGES): tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(CHROMIUM):
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends chromium

$(POSTGRES15_BIN)/postgres:
	$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends postgresql-15

setup: $(VENV)/.synced conformance/node_modules/.installed $(JUDGES) $(CHROMIUM) $(POSTGRES15_BIN)/postgres ## Install everything (uv, Python workspace, npm packages, Chromium, Debian's PostgreSQL 15)

# `make dev PORT=8081 SERVER_PORT=4440 ...`: each variable becomes the launcher's flag.
# Only from the command line: a PORT in the environment is usually another program's.
DEV_DIR ?= .dev
DEV_CLUSTER_DIR ?= .dev-cluster
dev_flag = $(if $(filter command line,$(origin $(1))),$(2) $($(1)))
DEV_FLAGS = --state-dir $(DEV_DIR) $(call dev_flag,PORT,--port) \
	$(call dev_flag,SERVER_PORT,--server-port) $(call dev_flag,ADMIN_PORT,--admin-port) \
	$(call dev_flag,PG_PORT,--pg-port) $(call dev_flag,SYNC_PORT,--sync-port) \
	$(call dev_flag,SERVER_METRICS_PORT,--server-metrics-port) \
	$(call dev_flag,HEARTBEAT_SECS,--heartbeat-secs) $(call dev_flag,SNAPSHOT_SECS,--snapshot-secs) \
	$(call dev_flag,LOG_MAX_MB,--log-max-mb) $(call dev_flag,LOG_KEEP,--log-keep) \
	$(if $(filter command line,$(origin TLS)),$(if $(filter 1,$(TLS)),--tls))
# `make dev` installs Spark for its snapshot schedule only: SNAPSHOT_SECS=0 runs without it.
DEV_SYNCED = $(if $(filter command line,$(origin SNAPSHOT_SECS)),$(if $(filter 0 0.0,$(SNAPSHOT_SECS)),$(VENV)/.synced-stack,$(VENV)/.synced-spark),$(VENV)/.synced-spark)

dev: $(DEV_SYNCED) ## The whole stack until Ctrl-C: Postgres, ds-server, Envoy :8080, ds-sync, heartbeat, hourly snapshots (PORT= SERVER_PORT= ADMIN_PORT= PG_PORT= SYNC_PORT= SERVER_METRICS_PORT= SNAPSHOT_SECS= LOG_MAX_MB= LOG_KEEP=; TLS=1: https and HTTP/2; installs no test tools or browser, and Spark only for the snapshots)
	@$(PY) -m ds_stack.dev $(DEV_FLAGS)

dev-cluster: $(DEV_SYNCED) ## The stack with 3 ds-server replicas on the postgres store behind Envoy and 2 ds-sync processes sharing the work (state in .dev-cluster/; same ports and flags as dev)
	@$(PY) -m ds_stack.dev $(subst --state-dir $(DEV_DIR),--state-dir $(DEV_CLUSTER_DIR),$(DEV_FLAGS)) --replicas 3 --syncs 2

dev-cluster-reset: $(VENV)/.synced-stack ## Delete the dev cluster's data in .dev-cluster/
	@$(PY) -m ds_stack.dev --state-dir $(DEV_CLUSTER_DIR) reset

dev-reset: $(VENV)/.synced-stack ## Delete the dev stack's data in .dev/ (streams, Postgres, logs); refuses while `make dev` runs
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) reset

analytics: $(VENV)/.synced-spark ## ds-spark analytics against the running `make dev` stack (output in .dev/spark-output)
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) spark analytics

snapshots: $(VENV)/.synced-spark ## ds-spark snapshots against the running `make dev` stack
	@$(PY) -m ds_stack.dev --state-dir $(DEV_DIR) spark snapshots

EXAMPLE_PORT ?= 3000

example-chat: $(VENV)/.synced-stack ## The example AI chat backend (examples/chat) on 127.0.0.1:3000 against the running `make dev` (EXAMPLE_PORT=)
	@env_lines="$$($(PY) -m ds_stack.dev --state-dir $(DEV_DIR) env)" && eval "$$env_lines" && \
		PYTHONPATH=examples/chat/src exec $(PY) -m chat_example --port $(EXAMPLE_PORT)

dev-server: $(VENV)/.synced-stack ## Run ds-server alone on 127.0.0.1:4437 (no gateway, no auth; streams in .dev/streams)
	DS_STORAGE__DATA_DIR=$(DEV_DIR)/streams $(VENV)/bin/ds-server

test: setup lint typecheck compose-check unit unit-compiled conformance conformance-compiled docs ## Lint, type-check, compose file, pytest (the server suite on both builds; gateway, browser, e2e), conformance (both builds), docs build

# The workspace's members (pyproject.toml's [tool.uv.workspace]), each checked by deptry.
MEMBERS := settings client server proxy sync spark stack bench schema

lint: $(VENV)/.synced ## ruff lint + format check; deptry: every member declares what it imports and imports what it declares
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@for member in $(MEMBERS); do \
		echo "deptry $$member/src"; \
		(cd $$member && ../$(VENV)/bin/deptry src --no-ansi) || exit 1; \
	done

typecheck: $(VENV)/.synced ## mypy --strict on the sources
	$(VENV)/bin/mypy

# The suite mostly waits on real servers, so it runs as five pytest processes
# side by side: everything else spread over PYTEST_WORKERS xdist workers, and
# one process each for the suites that share one costly process per run: Spark
# (one JVM), the browser tests (one Chromium; Playwright's sync API also holds
# an event loop other asyncio tests can't share), e2e (one whole stack),
# the soak test's short form (a whole stack of its own, `make soak` for an hour)
# and the tests that need Postgres again, on Debian's 15.
# Each one's output is printed when it ends.
PYTEST_WORKERS ?= 3
# pyproject's testpaths without spark/tests and e2e (--ignore can't drop a testpaths entry).
SPREAD_TESTS := settings/tests server/tests proxy/tests client/tests bench/tests stack/tests sync/tests tests examples/chat/tests \
	schema/tests
PYTEST_ARGS ?=

unit: $(VENV)/.synced $(CHROMIUM) $(POSTGRES15_BIN)/postgres ## pytest: unit, store contract, HTTP, gateway (real Envoy), Spark, browser and e2e tests; what needs Postgres again on 15
	@$(MAKE) --no-print-directory -j6 --output-sync=target unit-spread unit-spark unit-browser unit-e2e unit-soak unit-postgres15

unit-spread: $(VENV)/.synced
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) $(SPREAD_TESTS) --ignore=proxy/tests/browser --ignore=tests/soak $(PYTEST_ARGS)

unit-spark: $(VENV)/.synced
	$(VENV)/bin/pytest -q spark/tests $(PYTEST_ARGS)

unit-browser: $(VENV)/.synced $(CHROMIUM)
	$(VENV)/bin/pytest -q proxy/tests/browser $(PYTEST_ARGS)

unit-e2e: $(VENV)/.synced
	$(VENV)/bin/pytest -q e2e $(PYTEST_ARGS)

# -s: the test's last line is its figures (written vs retained, bootstraps, disk use).
unit-soak: $(VENV)/.synced $(JUDGES)
	DS_SOAK_SECS=$(SOAK_SHORT_SECS) $(VENV)/bin/pytest -q -s tests/soak $(PYTEST_ARGS)

SOAK_SHORT_SECS ?= 90
SOAK_SECS ?= 3600

soak: $(VENV)/.synced $(JUDGES) ## The soak test for SOAK_SECS (an hour): the whole stack, lowered limits, ds-sync killed; prints its figures (not in `make test`)
	DS_SOAK_SECS=$(SOAK_SECS) $(VENV)/bin/pytest -q -s tests/soak $(PYTEST_ARGS)

# The tests that need Postgres (`-m postgres`: ds-sync both ways with its kill
# tests, the postgres store's contract and persistence, Spark's Postgres
# reader) on a server other than the embedded 18 the runs above use. Spark's
# run alone after the rest, in one process (one JVM): two SparkSessions side
# by side on two busy cores outlast pytest's timeout.
POSTGRES_TESTS := server/tests/stores server/tests/unit sync/tests stack/tests schema/tests
POSTGRES_SPARK_TESTS := spark/tests/integration/test_spark_postgres_jobs.py
POSTGRES_WORKERS ?= 2

unit-postgres15: $(VENV)/.synced $(POSTGRES15_BIN)/postgres ## pytest: the tests that need Postgres, on Debian's PostgreSQL 15 (part of `make unit`)
	DS_TEST_POSTGRES_BIN=$(POSTGRES15_BIN) $(VENV)/bin/pytest -q -m postgres \
		-n $(POSTGRES_WORKERS) $(POSTGRES_TESTS) $(PYTEST_ARGS)
	DS_TEST_POSTGRES_BIN=$(POSTGRES15_BIN) $(VENV)/bin/pytest -q -m postgres \
		$(POSTGRES_SPARK_TESTS) $(PYTEST_ARGS)

test-docker: $(VENV)/.synced ## Opt-in, needs a Docker engine: ds-sync on Electric's real image and Postgres 17, docker-compose.yml up with a round trip (each skips in one line without an engine)
	$(VENV)/bin/pytest -q -m docker -rs tests/docker $(PYTEST_ARGS)

# `make test-postgres-matrix MATRIX_ARGS="--versions 14,18"` for some versions.
MATRIX_ARGS ?=

test-postgres-matrix: $(VENV)/.synced $(POSTGRES15_BIN)/postgres ## The tests that need Postgres on 14, 15, 16, 17, 18 (and Docker's postgres:14-17 where an engine exists); prints a table
	$(PY) tools/postgres_matrix.py $(MATRIX_ARGS) $(POSTGRES_TESTS) server/tests/crash tests/cluster spark/tests

e2e: $(VENV)/.synced ## The e2e suite alone: the whole stack, black-box through Envoy (also part of `make unit`)
	$(VENV)/bin/pytest -q e2e

viewer-test: $(VENV)/.synced $(CHROMIUM) ## The session viewer's browser tests alone (Chromium, Envoy, ds-server)
	$(VENV)/bin/pytest -q proxy/tests/browser

viewer-shot: $(VENV)/.synced $(CHROMIUM) ## Refresh docs/img/viewer.png from a live session (a browser test)
	@mkdir -p docs/img
	DS_VIEWER_SCREENSHOT=docs/img/viewer.png $(VENV)/bin/pytest -q \
		proxy/tests/browser/test_viewer_live.py -k test_two_users_see_each_other_live

quickstart-shot: $(VENV)/.synced $(CHROMIUM) ## Refresh docs/img/quickstart-viewer.png: the quickstart's steps run on a stack, then the viewer shows their session
	DS_QUICKSTART_SCREENSHOT=docs/img/quickstart-viewer.png $(VENV)/bin/pytest -q \
		e2e/test_e2e_docs.py -k quickstart

extensions: $(VENV)/.synced ## The /ds extension suite against a real ds-server, every backend
	$(VENV)/bin/pytest -q server/tests/extensions

# `make test` runs the same fuzzer with 1,000 requests per server, seed 31.
FUZZ_SEED ?= 31
FUZZ_REQUESTS ?= 6000

fuzz: $(VENV)/.synced ## The request fuzzer, long: FUZZ_REQUESTS (6000) per backend and through Envoy, seed FUZZ_SEED (31)
	DS_FUZZ_SEED=$(FUZZ_SEED) DS_FUZZ_REQUESTS=$(FUZZ_REQUESTS) $(VENV)/bin/pytest -q -s \
		server/tests/fuzz proxy/tests/integration/test_gateway_fuzz.py

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

docs: $(VENV)/.synced ## Build the documentation site (mkdocs --strict); fails if docs/configuration.md or docs/reference/cli.md is stale
	$(PY) tools/config_reference.py --check
	$(PY) tools/cli_reference.py --check
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir site

config-reference: $(VENV)/.synced ## Regenerate the settings tables of docs/configuration.md from the settings classes
	$(PY) tools/config_reference.py --write

cli-reference: $(VENV)/.synced ## Regenerate docs/reference/cli.md from every command's --help
	$(PY) tools/cli_reference.py --write

# Debian's docker-compose (1.29) validates the file without a Docker engine.
COMPOSE_PROFILES_ALL := --profile sync --profile dev --profile spark

envoy-configs: $(VENV)/.synced ## Render proxy/envoy/envoy.yaml, envoy.container.yaml and envoy.prod.yaml from envoy.template.yaml (a test fails while one is stale)
	$(PY) -m ds_proxy.envoy_template --write

compose-check: ## Validate docker-compose.yml with every profile (docker-compose config; no Docker engine needed)
	@command -v docker-compose > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y docker-compose)
	docker-compose -f docker-compose.yml $(COMPOSE_PROFILES_ALL) config -q
	@echo "docker-compose.yml: valid ($(COMPOSE_PROFILES_ALL))"

bench/node/node_modules/.installed: bench/node/package.json bench/node/package-lock.json
	cd bench/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# `make bench BENCH_ARGS="--quick --repetitions 1 --scenarios post,rtt"` for a short run.
BENCH_ARGS ?=
# The configurations ds-server is compared in, POST by POST (bench-configs):
# as users run it (default, image, compose, dev through Envoy) and one tuned, labelled.
BENCH_CONFIGS ?= default,image,compose,dev,tuned
# `make bench-configs BENCH_CONFIGS_ARGS="--quick --repetitions 3"` for a short run.
BENCH_CONFIGS_ARGS ?= --repetitions 5
BENCH_TOOLS = @command -v wrk > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk); \
	command -v valgrind > /dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y valgrind); \
	$(PY) -m compileall -q -j 0 server/src bench/src > /dev/null || true

# ds-bench starts each server with the build its configuration names (plain
# sources, or the compiled build in $(COMPILED)); only metrics-cost, which
# also measures in process, needs the compiled build on its own path.
bench: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## ds-server vs the Node reference: every scenario as the image runs it, what metrics and the request log cost, the Python SDK's producer vs the TypeScript one, then POSTs in every configuration users run, then the fairness run (not part of `make test`)
	$(BENCH_TOOLS)
	$(VENV)/bin/ds-bench compare --configs image --update-docs $(BENCH_ARGS)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench metrics-cost $(BENCH_METRICS_ARGS)
	$(VENV)/bin/ds-bench log-cost $(BENCH_LOG_ARGS)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench producers $(BENCH_PRODUCERS_ARGS)
	$(VENV)/bin/ds-bench compare --configs $(BENCH_CONFIGS) --scenarios post --update-docs $(BENCH_CONFIGS_ARGS)
	@# One tenant flooding the gateway beside another (docs/benchmarks.md, "Fairness").
	@$(MAKE) --no-print-directory bench-fairness

# `make bench-fairness BENCH_FAIRNESS_ARGS="--seconds 5"` for a short run.
BENCH_FAIRNESS_ARGS ?=

bench-fairness: $(VENV)/.synced $(COMPILED)/.built ## Tenant B's append and SSE p99 with tenant A idle, then flooding the gateway; then the same with no limits (also the end of `make bench`)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench fairness $(BENCH_FAIRNESS_ARGS)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench fairness --no-limits $(BENCH_FAIRNESS_ARGS)

bench-configs: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## Unbatched POSTs vs Node in every configuration (BENCH_CONFIGS: default, image, compose, dev via Envoy, tuned), interleaved; ends with the ratio table
	$(BENCH_TOOLS)
	$(VENV)/bin/ds-bench compare --configs $(BENCH_CONFIGS) --scenarios post --update-docs $(BENCH_CONFIGS_ARGS)

# `make bench-metrics BENCH_METRICS_ARGS="--quick --repetitions 3"` for a short run.
BENCH_METRICS_ARGS ?=

bench-metrics: $(VENV)/.synced $(COMPILED)/.built ## Unbatched POST throughput with metrics on vs off, interleaved (also part of `make bench`)
	$(BENCH_TOOLS)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench metrics-cost $(BENCH_METRICS_ARGS)

# `make bench-producers BENCH_PRODUCERS_ARGS="--repetitions 3 --sizes 100"` for a short run.
BENCH_PRODUCERS_ARGS ?=

.PHONY: bench-producers
bench-producers: $(VENV)/.synced bench/node/node_modules/.installed $(COMPILED)/.built ## Python AsyncIdempotentProducer vs the TypeScript IdempotentProducer: msg/s at 1 and 16 producers (also the end of `make bench`)
	PYTHONPATH=$(COMPILED) $(VENV)/bin/ds-bench producers $(BENCH_PRODUCERS_ARGS)

# `make bench-log BENCH_LOG_ARGS="--quick --repetitions 3 --builds compiled"` for a short run.
BENCH_LOG_ARGS ?=

bench-log: $(VENV)/.synced $(COMPILED)/.built ## What the request log costs per POST, plain and compiled (callgrind, and wrk interleaved; also part of `make bench`)
	$(BENCH_TOOLS)
	$(VENV)/bin/ds-bench log-cost $(BENCH_LOG_ARGS)

bench-cluster: $(VENV)/.synced bench/node/node_modules/.installed ## Postgres-store replicas: durable appends at 1/16/64 writers and SSE fan-out, 1 vs 3 replicas
	$(VENV)/bin/ds-bench cluster

bench-storage: $(VENV)/.synced ## Storage benchmark: append latency/throughput per backend, start-up time
	$(VENV)/bin/ds-bench storage

bench-extensions: $(VENV)/.synced ## Server RSS while bootstrapping a 1 GiB stream; space a snapshot frees
	$(VENV)/bin/ds-bench extensions

# `make bench-sync BENCH_SYNC_ARGS="--seconds 10 --events 50000"` for a short run;
# `BENCH_SYNC_ARGS="--scenarios tables"` for the Postgres → stream lag alone;
# `BENCH_SYNC_ARGS="--profile"` attaches py-spy to ds-sync in the lag runs;
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
