"""The package layout keeps no import cycles between pgbarrier's subpackages and modules.

Read from the source text: every ``from pgbarrier.x... import``, ``import pgbarrier.x`` and
``from pgbarrier import x`` line in every module, those under ``if TYPE_CHECKING:`` and
inside functions included, since a cycle there is a cycle in the design even when Python
tolerates it. (A regular expression, not ``ast``: CPython 3.11's parser raised a spurious
SystemError here once, in a full run.) The nodes are the subpackages (``session``,
``pgproto``...) and the top-level modules (``control``, ``result``, ``errors``...), none
exempt; the graph of node -> node must have no cycle. The codec (``pgproto``) imports no
other subpackage, and of the top-level modules only the foundations below everything
(``errors``, ``accel``).
"""

from __future__ import annotations

import pathlib
import re

import pgbarrier

ROOT = pathlib.Path(pgbarrier.__file__).parent
PACKAGES = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
#: the top-level modules (``__init__`` is the package itself: its version string)
MODULES = {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
NODES = PACKAGES | MODULES
#: what every layer may import: the errors every layer raises, the loader of compiled modules
FOUNDATIONS = {"errors", "accel"}


#: an import statement's module (``from pgbarrier.x... import`` / ``import pgbarrier.x``), at
#: any indentation (inside functions and ``if TYPE_CHECKING:`` too)
_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+pgbarrier\.(\w+)", re.MULTILINE)
#: ``from pgbarrier import a, b as c`` (one line, or a parenthesised list)
_FROM_PACKAGE = re.compile(r"^[ \t]*from[ \t]+pgbarrier[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)",
                           re.MULTILINE)


def _imports(text: str) -> list[str]:
    """The pgbarrier modules and subpackages ``text`` imports (first name after ``pgbarrier``)."""
    found = _IMPORT.findall(text)
    for names in _FROM_PACKAGE.findall(text):
        for name in names.strip("()").replace("\n", " ").split(","):
            name = name.split("#")[0].strip().split(" as ")[0].strip()
            if name:
                found.append(name)
    return found


def _graph() -> dict[str, dict[str, list[str]]]:
    """node (subpackage or top-level module) -> {imported node: [the modules that import it]}."""
    graph: dict[str, dict[str, list[str]]] = {n: {} for n in NODES}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        source = rel.parts[0] if len(rel.parts) > 1 else path.stem
        if source not in NODES:
            continue  # the package's own __init__
        for target in _imports(path.read_text(encoding="utf-8")):
            if target in NODES and target != source:
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
    assert set(_graph()["pgproto"]) <= FOUNDATIONS, _graph()["pgproto"]


def test_the_foundations_import_nothing_of_pgbarrier():
    graph = _graph()
    assert {f: graph[f] for f in FOUNDATIONS} == {f: {} for f in FOUNDATIONS}


def test_top_level_modules_are_in_the_graph():
    graph = _graph()
    assert "control" in graph and "pgproto" in graph["result"]
    assert "control" in graph["session"]  # session.session runs control statements


def test_the_import_reader_reads_every_form():
    text = ("from pgbarrier.session.relay import X\n"
            "    import pgbarrier.server.tls\n"
            "from pgbarrier import accel, errors as e\n"
            "from pgbarrier import (\n    admin,\n    logs,  # why\n)\n")
    assert _imports(text) == ["session", "server", "accel", "errors", "admin", "logs"]


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b": ["a/x.py"]}, "b": {"a": ["b/y.py"]}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b": ["a/x.py"]}, "b": {}}) is None
