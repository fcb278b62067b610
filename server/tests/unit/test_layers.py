"""The server's layers: each module imports only its own layer and those below, and no cycles.

Imports are read from the source (``ast``), typing-only ones included: an
import under ``TYPE_CHECKING`` is still a dependency of the design.
"""

from __future__ import annotations

import ast
from pathlib import Path

import ds_server

PACKAGE = Path(ds_server.__file__).parent

# Top to bottom. A module belongs to the first layer with a prefix of its
# name; it may import its own layer and every layer below, never above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "process",
        (
            "ds_server.cli",
            "ds_server.__main__",
            "ds_server.http_protocol",
            "ds_server.connection_events",
            "ds_server.response_head",
            "ds_server.stalled_writes",
            "ds_server.listen",
            "ds_server.freed_memory",
            "ds_server.build",
        ),
    ),
    ("app", ("ds_server.app", "ds_server")),
    # Request metrics and logs, /metrics: they read requests (edge) and the store.
    ("monitoring", ("ds_server.monitoring",)),
    ("routes", ("ds_server.routes", "ds_server.auth")),
    ("edge", ("ds_server.edge",)),
    # Several replicas on one store: the subscription leader, forwarding to it.
    ("cluster", ("ds_server.cluster",)),
    ("features", ("ds_server.subscriptions",)),
    ("stores", ("ds_server.stores",)),
    (
        "foundation",
        (
            "ds_server.protocol",
            "ds_server.events",
            "ds_server.backends",
            "ds_server.live",
            "ds_server.connection",
            "ds_server.settings",
            # What every layer records into: the families, and the calls.
            "ds_server.metrics",
        ),
    ),
]


def _module_name(path: Path) -> str:
    parts = ["ds_server", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Each server module and the server modules it imports."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {dep for dep in found if dep in modules and dep != name}
    return graph


def _layer(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "ds_server" and module.startswith(prefix + ".")):
                return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_every_module_has_a_layer() -> None:
    for module in _imports():
        _layer(module)


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {dep} ({LAYERS[_layer(dep)][0]})"
        for module, deps in _imports().items()
        for dep in deps
        if _layer(dep) < _layer(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_import_cycles() -> None:
    graph = _imports()
    cycles: list[list[str]] = []
    # Tarjan's strongly connected components; a component of two or more is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in graph[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_import_graph_sees_the_imports() -> None:
    graph = _imports()
    assert "ds_server.edge.http" in graph["ds_server.routes.dispatch"]
    assert _layer("ds_server.routes.dispatch") < _layer("ds_server.edge.http")
