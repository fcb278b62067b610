"""What the documentation states as fact about the repository, and whether it holds.

The pages name settings (``DS_*``), make targets, ports, command-line flags,
files and Python modules. Each of these is checked against the code, the
Makefile and the tree, so that a rename in the code that the docs don't
follow fails the test suite instead of a reader.

Only code (inline code spans and fenced blocks) is read: prose like "make it
so" is not a claim about a make target. The extraction is pure and tested
on its own; the checks read the repository.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = ("server", "proxy", "client", "sync", "spark", "stack", "bench")
# Files whose text counts as "the code" when a name is looked up literally.
CODE_SUFFIXES = {".py", ".yaml", ".yml", ".toml", ".js", ".html", ".sh", ".sql", ".json", ".ts"}
CODE_NAMES = {"Makefile", "Dockerfile", "docker-compose.yml", "run"}
SKIPPED_DIRS = {".git", ".venv", "node_modules", "site", "build", ".tools", ".dev", "__pycache__"}

_FENCE = re.compile(r"^(```|~~~)")
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_VARIABLE = re.compile(r"\bDS_[A-Z0-9_]*[A-Z0-9_]")
# A command starts a line, follows a shell separator or an environment assignment: a quoted
# message that says "delete streams to make room" names no target.
_MAKE = re.compile(
    r"(?:^|[;&|(]|\b[A-Z_][A-Z0-9_]*=\S*)\s*make\s+((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)([a-z][a-z0-9-]*)",
    re.MULTILINE,
)
_MAKE_VARIABLES = re.compile(r"\b([A-Z][A-Z0-9_]*)=")
_PORT = re.compile(r"(?:127\.0\.0\.1|localhost|0\.0\.0\.0|\blocalhost):(\d{2,5})\b")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_PATH = re.compile(r"(?<![\w./$~-])((?:\.?[\w-]+/)+[\w.*-]*[\w*-])")
_TEST = re.compile(r"\b(test_[a-z0-9_]+)\b")
_MODULE = re.compile(r"\b((?:ds_[a-z]+|durable_sessions)(?:\.[a-z_][a-z0-9_]*)+)\b")


@dataclass(frozen=True, slots=True)
class Claim:
    """One fact a page states: what kind, the text, and where it stands."""

    kind: str
    text: str
    page: str
    line: int
    context: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.kind} {self.text!r} ({self.context.strip()[:80]})"


def code_lines(markdown: str) -> Iterator[tuple[int, str, bool]]:
    """Each piece of code on a page: (line number, code, whether it is in a fenced block)."""
    fenced = False
    for number, line in enumerate(markdown.splitlines(), start=1):
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if fenced:
            yield number, line, True
            continue
        for span in _SPAN.findall(line):
            yield number, span, False


def claims(page: str, markdown: str) -> Iterator[Claim]:
    """Every checkable claim of one page."""
    for number, code, _fenced in code_lines(markdown):

        def claim(kind: str, text: str, *, line: int = number, context: str = code) -> Claim:
            return Claim(kind, text, page, line, context)

        for name in _VARIABLE.findall(code):
            yield claim("setting", name)
        for assignments, target in _MAKE.findall(code):
            yield claim("make target", target)
            for variable in _MAKE_VARIABLES.findall(assignments):
                yield claim("make variable", variable)
        for port in _PORT.findall(code):
            yield claim("port", port)
        for command, arguments in commands_run(code):
            for flag in _FLAG.findall(arguments):
                yield claim("flag", f"{command} {flag}")
        for path in _PATH.findall(code):
            if _looks_like_repo_path(path):
                yield claim("path", path)
        for module in _MODULE.findall(code):
            yield claim("module", module)
        for test in _TEST.findall(code):
            if not test.endswith("_"):
                yield claim("test", test)


# What may stand before a command on a line of shell.
_PREFIXES = {"sudo", "exec", "env", "uv", "run", "time", "nohup", "setsid"}


def commands_run(code: str) -> Iterator[tuple[str, str]]:
    """Each project command a line of shell runs, with the arguments given to it."""
    code = re.sub(r"(^|\s)#.*", "", code)
    for segment in re.split(r"&&|\|\||[;|()]|\$\(", code):
        words = segment.split()
        while words and (words[0] in _PREFIXES or re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0])):
            words = words[1:]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name in commands():
            yield name, " ".join(words[1:])
        elif name.startswith("python") and words[1:2] == ["-m"] and words[2:3]:
            module = words[2]
            if module.startswith("ds_"):
                yield module, " ".join(words[3:])


# A path is checked when it points into the repository: under a top-level
# directory of it, or a file with an extension the tree holds. Stream names
# (`sessions/room-1`), URL paths and runtime directories are not files here.
_REPO_SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml", ".json", ".sql", ".js", ".svg", ".png")
_RUNTIME_PREFIXES = (".dev/", ".dev-cluster/", ".venv/", ".tools/", "build/", "site/")


def _looks_like_repo_path(path: str) -> bool:
    if path.startswith(_RUNTIME_PREFIXES) or "node_modules" in path:
        return False
    top = path.split("/", 1)[0]
    if top.isupper():  # a placeholder of a command's help: DIR/.service.json
        return False
    in_tree = (ROOT / top).is_dir() and top not in {".", ".."}
    in_package = re.fullmatch(r"ds_[a-z]+|durable_sessions", top) is not None
    return in_tree or in_package or path.endswith(_REPO_SUFFIXES)


@cache
def commands() -> dict[str, Path]:
    """The project's console scripts and the source directory of each."""
    found: dict[str, Path] = {}
    for member in MEMBERS:
        project = tomllib.loads((ROOT / member / "pyproject.toml").read_text(encoding="utf-8"))
        for name, target in project.get("project", {}).get("scripts", {}).items():
            package = target.split(":", 1)[0].split(".", 1)[0]
            found[name] = ROOT / member / "src" / package
    return found


def code_files() -> Iterator[Path]:
    """Every file of the tree that is code, not documentation."""
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        # The docs' own tests set what the pages read: no evidence that the code does.
        if SKIPPED_DIRS.intersection(relative.parts) or relative.parts[:2] == ("tests", "docs"):
            continue
        if path.is_file() and (path.suffix in CODE_SUFFIXES or path.name in CODE_NAMES):
            yield path


@cache
def code_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in code_files())


@cache
def tree_paths() -> frozenset[str]:
    """Every file and directory of the repository, relative to its root."""
    paths: set[str] = set()
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if not SKIPPED_DIRS.intersection(relative.parts):
            paths.add(relative.as_posix())
    return frozenset(paths)


@cache
def test_names() -> frozenset[str]:
    """Every test function and test module name of the repository."""
    names: set[str] = set()
    for path in ROOT.rglob("test_*.py"):
        if SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
            continue
        names.add(path.stem)
        names.update(re.findall(r"def (test_\w+)", path.read_text(encoding="utf-8")))
    return frozenset(names)


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([a-zA-Z0-9_-]+):", text, flags=re.MULTILINE))


@cache
def make_variables() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    defined = re.findall(r"^([A-Z][A-Z0-9_]*)\s*[:?+]?=", text, flags=re.MULTILINE)
    used = re.findall(r"\$\(([A-Z][A-Z0-9_]*)\)", text)
    return frozenset(defined) | frozenset(used)


def holds(claim: Claim, settings: frozenset[str]) -> bool:
    """Whether the repository bears a claim out."""
    text = claim.text
    if claim.kind == "setting":
        if text.endswith("_"):
            return any(name.startswith(text) for name in settings) or text in code_text()
        return text in settings or re.search(rf"\b{text}\b", code_text()) is not None
    if claim.kind == "make target":
        return text in make_targets()
    if claim.kind == "make variable":
        return text in make_variables()
    if claim.kind == "port":
        return re.search(rf"(?<!\d){text}(?!\d)", code_text()) is not None
    if claim.kind == "flag":
        command, flag = text.split(" ", 1)
        return _flag_exists(command, flag)
    if claim.kind == "path":
        return _path_exists(text)
    if claim.kind == "module":
        return _module_exists(text)
    if claim.kind == "test":
        return text in test_names()
    raise ValueError(claim.kind)


def _flag_exists(command: str, flag: str) -> bool:
    if command.startswith("ds_"):
        package = command.split(".", 1)[0]
        sources: Iterable[Path] = (
            path for member in MEMBERS for path in (ROOT / member / "src" / package).rglob("*.py")
        )
    else:
        sources = commands()[command].rglob("*.py")
    return any(f'"{flag}"' in path.read_text(encoding="utf-8") for path in sources)


# Paths of other projects a page cites, to say how they do a thing.
EXTERNAL_PATHS = frozenset({"yoyo/backends/base.py"})


def _path_exists(path: str) -> bool:
    path = path.rstrip("/")
    if path in EXTERNAL_PATHS:
        return True
    if "*" in path:
        # A pattern of files a command writes (`bench/results/fairness-*.json`): its
        # directory must exist.
        return path.rsplit("/", 1)[0] in tree_paths()
    if path in tree_paths():
        return True
    # Relative to a package (`stores/_engine.py`) or written with a `module.attribute`
    # tail (`edge/references.fork_source_name`): some file must end with it.
    candidates = {path}
    head, _, tail = path.rpartition("/")
    if "." in tail and not tail.endswith(_REPO_SUFFIXES):
        candidates.add(f"{head}/{tail.split('.', 1)[0]}.py")
    return any(
        known == candidate or known.endswith("/" + candidate)
        for known in tree_paths()
        for candidate in candidates
    )


def _module_exists(dotted: str) -> bool:
    """A module, or a name a module defines or imports, or a logger's name."""
    source = _longest_module(dotted)
    if source is not None:
        path, rest = source
        if not rest:
            return True
        text = path.read_text(encoding="utf-8")
        pattern = rf"(?:def|class|import|,)\s+{rest[0]}\b|^{rest[0]}\s*[:=]"
        if re.search(pattern, text, re.MULTILINE) is not None:
            return True
    # A logger's name is dotted like a module: `getLogger("ds_server.access")`.
    return f'"{dotted}"' in code_text()


def _longest_module(dotted: str) -> tuple[Path, list[str]] | None:
    """The source of the longest prefix of ``dotted`` that is a module, and the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        for member in MEMBERS:
            base = ROOT / member / "src" / Path(*parts[:cut])
            for source in (base.with_suffix(".py"), base / "__init__.py"):
                if source.is_file():
                    return source, parts[cut:]
    return None
