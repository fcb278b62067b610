"""No import circles in any member, and no import from a layer to one above it.

The layers are in ``workspace_layers.py``; the graph is read from the sources
(``import_graph.py``), typing-only imports included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_graph import PACKAGES, cycles, graph, resolve
from workspace_layers import MEMBER_LAYERS, MODULE_LAYERS, layer_of, member_layer_of

GRAPH = graph()


def _describe(circle: frozenset[str]) -> str:
    return " <-> ".join(sorted(circle))


def test_no_import_circles() -> None:
    found = [_describe(circle) for circle in cycles(GRAPH)]
    assert not found, "import circles: " + "; ".join(sorted(found))


def test_every_member_is_read() -> None:
    members = {module.split(".")[0] for module in GRAPH}
    assert members == set(PACKAGES.values())
    assert members == {package for _, packages in MEMBER_LAYERS for package in packages}
    assert members == set(MODULE_LAYERS)


def test_members_import_only_members_below_them() -> None:
    upward = [
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        for dep in deps
        if module.split(".")[0] != dep.split(".")[0]
        and member_layer_of(dep) <= member_layer_of(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_spark_imports_nothing_of_sync() -> None:
    # The Spark jobs share the contract's schema with ds-sync (ds_schema), not the sync service.
    found = [
        f"{module} imports {dep}"
        for module, deps in GRAPH.items()
        if module.split(".")[0] == "ds_spark"
        for dep in deps
        if dep.split(".")[0] == "ds_sync"
    ]
    assert not found, "\n".join(sorted(found))


def _inner_layer(module: str) -> tuple[str, int]:
    layers = MODULE_LAYERS[module.split(".")[0]]
    index = layer_of(module, layers)
    return layers[index][0], index


def test_every_module_has_a_layer() -> None:
    for module in GRAPH:
        _inner_layer(module)


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    for module, deps in GRAPH.items():
        name, index = _inner_layer(module)
        for dep in deps:
            if dep.split(".")[0] != module.split(".")[0]:
                continue
            dep_name, dep_index = _inner_layer(dep)
            if dep_index < index:
                upward.append(f"{module} ({name}) imports {dep} ({dep_name})")
    assert not upward, "\n".join(sorted(upward))


def test_the_import_graph_sees_the_imports() -> None:
    # Absolute, from a package, relative and typing-only imports all count.
    assert "ds_server.edge.http" in GRAPH["ds_server.routes.dispatch"]
    # Typing-only: durable_sessions.events imports Bootstrap under TYPE_CHECKING alone.
    assert "durable_sessions.protocol.bootstrap" in GRAPH["durable_sessions.events"]
    assert "durable_sessions.protocol.headers" in GRAPH["durable_sessions.tokens"]
    assert "ds_schema" in {dep.split(".")[0] for dep in GRAPH["ds_spark.postgres"]}
    layers = MODULE_LAYERS["ds_server"]
    assert layer_of("ds_server.routes.dispatch", layers) < layer_of("ds_server.edge.http", layers)


@pytest.mark.parametrize(
    ("module", "path", "statement", "source"),
    [
        ("pkg.a.b", "pkg/a/b.py", "from . import c", "pkg.a"),
        ("pkg.a.b", "pkg/a/b.py", "from ..c import d", "pkg.c"),
        ("pkg.a", "pkg/a/__init__.py", "from .b import c", "pkg.a.b"),
        ("pkg.a", "pkg/a/__init__.py", "from pkg.x import y", "pkg.x"),
    ],
)
def test_relative_imports_are_resolved(module: str, path: str, statement: str, source: str) -> None:
    node = ast.parse(statement).body[0]
    assert isinstance(node, ast.ImportFrom)
    assert resolve(module, Path(path), node) == source


def test_a_circle_is_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [frozenset({"a", "b", "c"})]
