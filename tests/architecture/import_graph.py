"""The workspace's import graph, read from the sources (``ast``).

Typing-only imports count: an import under ``TYPE_CHECKING`` is still a
dependency of the design. Relative imports are resolved. A module imported
from a package (``from ds_sync import metrics``) is an edge to that module;
any other name (``from ds_sync.settings import Settings``) to its module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Member directory -> its import package (under <member>/src/).
PACKAGES = {
    "settings": "ds_settings",
    "client": "durable_sessions",
    "server": "ds_server",
    "proxy": "ds_proxy",
    "sync": "ds_sync",
    "spark": "ds_spark",
    "stack": "ds_stack",
    "bench": "ds_bench",
    "schema": "ds_schema",
}


def modules() -> dict[str, Path]:
    """Every module of every member, by dotted name."""
    found: dict[str, Path] = {}
    for member, package in PACKAGES.items():
        base = ROOT / member / "src"
        for path in sorted((base / package).rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` in ``module`` (at ``path``) names."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if _is_package(path) else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def graph() -> dict[str, set[str]]:
    """Each module and the workspace modules it imports (itself left out)."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                source = resolve(name, path, node)
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    found.add(full if full in known else source)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        edges[name] = {_nearest(dep, known) for dep in found} - {name, ""}
    return edges


def _nearest(dotted: str, known: dict[str, Path]) -> str:
    """``dotted`` or its closest enclosing module the workspace has ("" if none)."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The import circles: strongly connected components of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(edges.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
