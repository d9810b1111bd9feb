"""The package layout keeps no import cycles between pgbarrier's subpackages.

Read from the source text: every ``from pgbarrier.x... import`` line in every module,
those under ``if TYPE_CHECKING:`` and inside functions included, since a cycle there is a
cycle in the design even when Python tolerates it. (A regular expression, not ``ast``:
CPython 3.11's parser raised a spurious SystemError here once, in a full run.) The graph of
subpackage -> subpackage must have no cycle. The codec (``pgproto``) imports no other subpackage.
"""

from __future__ import annotations

import pathlib
import re

import pgbarrier

ROOT = pathlib.Path(pgbarrier.__file__).parent
PACKAGES = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


#: an import statement's module (``from pgbarrier.x... import`` / ``import pgbarrier.x``), at
#: any indentation (inside functions and ``if TYPE_CHECKING:`` too)
_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+pgbarrier\.(\w+)", re.MULTILINE)


def _graph() -> dict[str, dict[str, list[str]]]:
    """subpackage -> {imported subpackage: [the modules that import it]}."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in PACKAGES}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if len(rel.parts) < 2:
            continue  # top-level modules (app, cli, errors...) sit above the packages
        source = rel.parts[0]
        for target in _IMPORT.findall(path.read_text(encoding="utf-8")):
            if target in PACKAGES and target != source:
                graph[source].setdefault(target, []).append(str(rel))
    return graph


def _cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle_between_subpackages():
    graph = _graph()
    cycle = _cycle(graph)
    if cycle:
        where = {f"{a} -> {b}": graph[a][b][:3] for a, b in zip(cycle, cycle[1:])}
        raise AssertionError(f"import cycle {' -> '.join(cycle)}: {where}")


def test_the_codec_is_a_leaf():
    assert _graph()["pgproto"] == {}


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b": ["a/x.py"]}, "b": {"a": ["b/y.py"]}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b": ["a/x.py"]}, "b": {}}) is None
