"""The package layout keeps no import cycles between pgbarrier's subpackages.

Read from the source (every ``from pgbarrier.x... import`` in every module, those under
``if TYPE_CHECKING:`` and inside functions included, since a cycle there is a cycle in
the design even when Python tolerates it): the graph of subpackage -> subpackage must
have no cycle. The codec (``pgproto``) imports no other subpackage.
"""

from __future__ import annotations

import ast
import pathlib

import pgbarrier

ROOT = pathlib.Path(pgbarrier.__file__).parent
PACKAGES = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _graph() -> dict[str, dict[str, list[str]]]:
    """subpackage -> {imported subpackage: [the modules that import it]}."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in PACKAGES}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if len(rel.parts) < 2:
            continue  # top-level modules (app, cli, errors...) sit above the packages
        source = rel.parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "pgbarrier" and len(parts) > 1 and parts[1] in PACKAGES \
                        and parts[1] != source:
                    graph[source].setdefault(parts[1], []).append(str(rel))
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
