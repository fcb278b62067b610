"""The workspace's layers: between members, and inside each member.

Top to bottom. A module belongs to the first layer with a prefix of its
name (a member's package name matches only the package itself; a name
ending in "." matches every module below it). It may import its own layer
and every layer below, never one above. Between members the rule is
stricter: a member imports only members in a layer below its own.
"""

from __future__ import annotations

Layers = list[tuple[str, tuple[str, ...]]]

MEMBER_LAYERS: Layers = [
    # Measures everything below it.
    ("benchmarks", ("ds_bench",)),
    # Run the services: the launcher and dev stack, the Spark jobs.
    ("jobs and launcher", ("ds_stack", "ds_spark")),
    ("services", ("ds_server", "ds_proxy", "ds_sync")),
    ("sdk", ("durable_sessions",)),
    # What every member's settings share: the stack's defaults, loading, fields.
    ("settings", ("ds_settings",)),
    # The session contract's Postgres schema: what ds-sync and ds-spark both apply.
    ("schema", ("ds_schema",)),
]

# Inside each member. Members whose inner layers are not (yet) drawn have the
# one every member keeps: their command line sits above everything they hold.
MODULE_LAYERS: dict[str, Layers] = {
    "ds_server": [
        (
            "process",
            (
                "ds_server.cli",
                "ds_server.__main__",
                "ds_server.http_protocol",
                "ds_server.connection_signals",
                "ds_server.response_head",
                "ds_server.stalled_writes",
                "ds_server.listen",
                "ds_server.freed_memory",
                "ds_server.build",
            ),
        ),
        ("app", ("ds_server.app", "ds_server")),
        # Request metrics and logs, /metrics: they read requests (edge) and the store.
        ("observability", ("ds_server.observability",)),
        ("routes", ("ds_server.routes", "ds_server.auth")),
        ("edge", ("ds_server.edge",)),
        # Several replicas on one store: the subscription leader, forwarding to it.
        ("cluster", ("ds_server.cluster",)),
        ("features", ("ds_server.subscriptions",)),
        # The store, and the one owner of a Postgres URL's connections it shares.
        ("stores", ("ds_server.stores", "ds_server.postgres_database")),
        (
            "foundation",
            (
                "ds_server.protocol",
                "ds_server.stream_observer",
                "ds_server.backends",
                "ds_server.live",
                "ds_server.connection",
                "ds_server.settings",
                # What every layer records into: the families, and the calls.
                "ds_server.metrics",
            ),
        ),
    ],
    "durable_sessions": [
        ("api", ("durable_sessions",)),
        # The AI SDK transport, on the sessions' writers and readers.
        ("integrations", ("durable_sessions.aisdk",)),
        # What a stream holds: session events, State Protocol state.
        ("models", ("durable_sessions.sessions", "durable_sessions.state")),
        (
            "clients",
            (
                "durable_sessions.follow",
                "durable_sessions.server",
                "durable_sessions.async_server",
                "durable_sessions.sse_reader",
                "durable_sessions.producer",
                "durable_sessions.bootstrap",
                "durable_sessions.streams",
                "durable_sessions.snapshots",
                "durable_sessions.events",
                "durable_sessions._live",
                "durable_sessions._following",
                "durable_sessions._loop_thread",
            ),
        ),
        (
            "transport",
            (
                "durable_sessions._http",
                "durable_sessions.http1",
                "durable_sessions._errors",
                "durable_sessions.tokens",
            ),
        ),
        ("protocol", ("durable_sessions.protocol",)),
    ],
    "ds_proxy": [
        ("api", ("ds_proxy",)),
        (
            "commands",
            (
                "ds_proxy.container",
                "ds_proxy.gateway",
                "ds_proxy.render",
                "ds_proxy.token_cli",
                "ds_proxy.token_service",
            ),
        ),
        (
            "configs",
            (
                "ds_proxy.settings",
                "ds_proxy.limits",
                "ds_proxy.tls",
                "ds_proxy.replicas",
                "ds_proxy.dev_token",
                "ds_proxy.envoy_template",
                "ds_proxy.local_cert",
            ),
        ),
        ("tokens", ("ds_proxy.tokens", "ds_proxy.forged", "ds_proxy.keys")),
        ("foundation", ("ds_proxy.envoy_config", "ds_proxy.paths")),
    ],
    "ds_stack": [
        (
            "commands",
            (
                "ds_stack.dev.cli",
                "ds_stack.dev.__main__",
                "ds_stack.postgres.cli",
                "ds_stack.postgres.__main__",
                "ds_stack.heartbeat.__main__",
                "ds_stack.pytest_postgres",
            ),
        ),
        ("stacks", ("ds_stack.dev", "ds_stack.cluster", "ds_stack.heartbeat")),
        ("components", ("ds_stack.components",)),
        ("postgres", ("ds_stack.postgres",)),
        ("launcher", ("ds_stack.launcher",)),
        ("foundation", ("ds_stack.ports", "ds_stack")),
    ],
}
MODULE_LAYERS["ds_sync"] = [
    ("commands", ("ds_sync.cli", "ds_sync.__main__")),
    # Runs both directions: start-up, shutdown, /metrics and /healthz.
    ("service", ("ds_sync.service", "ds_sync.http_endpoint", "ds_sync.options")),
    # The two directions: streams → Postgres, Postgres → streams.
    ("directions", ("ds_sync.sessions", "ds_sync.mirror")),
    (
        "foundation",
        (
            "ds_sync",
            "ds_sync.settings",
            "ds_sync.metrics",
            "ds_sync.metrics_export",
            "ds_sync.table_names",
            "ds_sync.backoff",
            "ds_sync.failpoints",
        ),
    ),
]
MODULE_LAYERS["ds_schema"] = [
    ("runner", ("ds_schema.migrate",)),
    ("foundation", ("ds_schema", "ds_schema.migrations", "ds_schema.postgres_version")),
]
# Side by side: none of its modules imports another.
MODULE_LAYERS["ds_settings"] = [("the package", ("ds_settings", "ds_settings."))]
for _package in ("ds_spark", "ds_bench"):
    MODULE_LAYERS[_package] = [
        ("commands", (f"{_package}.cli", f"{_package}.__main__")),
        ("the rest", (_package, f"{_package}.")),
    ]


def _matches(module: str, prefix: str) -> bool:
    if prefix.endswith("."):  # every module below a package
        return module.startswith(prefix)
    if "." not in prefix:  # a member's package: the package itself alone
        return module == prefix
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str, layers: Layers) -> int:
    """The index of ``module``'s layer in ``layers`` (top is 0); ValueError if it has none."""
    for index, (_, prefixes) in enumerate(layers):
        if any(_matches(module, prefix) for prefix in prefixes):
            return index
    raise ValueError(f"{module} is in no layer: add it to tests/architecture/workspace_layers.py")


def member_layer_of(module: str) -> int:
    """The index of the layer of ``module``'s member in MEMBER_LAYERS."""
    package = module.split(".")[0]
    for index, (_, packages) in enumerate(MEMBER_LAYERS):
        if package in packages:
            return index
    raise ValueError(f"{package} is in no member layer: add it to MEMBER_LAYERS")
