"""What a view reads, and the chains of plain views a query reads a relation through.

Rules this module keeps:

* :func:`view_inputs` gives the relations a stored view definition reads (``CREATE VIEW
  ... AS query`` as the backend keeps it, or a bare query), in the backend's dialect, with
  :func:`pgbarrier.sql.statements.query_inputs`'s rules (names normalised like PostgreSQL,
  qualified names joined with ``.``, CTE names and table functions are not inputs).
  ``None`` when the text does not parse: the caller decides what an unknown view means.
  Only for a backend whose catalog keeps no dependencies (DuckDB): PostgreSQL's
  ``pg_depend`` answers without parsing.
* :func:`walk` follows edges from the start nodes breadth first, each node visited once
  (so a cycle, or a diamond of views, costs its edges and never loops), at most
  :data:`MAX_DEPTH` edges deep (a guard, not a limit anyone meets), and returns for each
  reached node that is not a view the shortest path to it: ``(start, view, ...,
  relation)``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

import sqlglot
from sqlglot import exp

from pgbarrier.sql.statements import query_inputs

#: how many views deep a chain is followed: far more than anyone nests (each node is
#: visited once, so the work is bounded by the number of views anyway, cycles included)
MAX_DEPTH = 10_000

N = TypeVar("N", bound=Hashable)


def view_inputs(sql: str, dialect: str) -> frozenset[str] | None:
    """The relations the view defined by ``sql`` reads (None when it does not parse)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - sqlglot raises several kinds; the caller decides
        return None
    if isinstance(tree, exp.Create):
        tree = tree.expression
    if not isinstance(tree, exp.Query):
        return None
    return query_inputs(tree)


def walk(starts: Iterable[N], step: Callable[[N], Iterable[N] | None],
         max_depth: int = MAX_DEPTH) -> list[tuple[N, ...]]:
    """Shortest paths from ``starts`` to every reached node that is not a view.

    ``step(node)`` is what view ``node`` reads, or None when ``node`` is not a view.
    Starts themselves are not reported (their caller sees them already)."""
    reads: dict[N, list[N] | None] = {}

    def children(node: N) -> list[N] | None:
        if node not in reads:
            got = step(node)
            reads[node] = None if got is None else list(got)
        return reads[node]

    parent: dict[N, N | None] = {}
    frontier: list[N] = []
    for s in starts:
        if s not in parent:
            parent[s] = None
            frontier.append(s)
    ends: list[N] = []
    depth = 0
    while frontier and depth < max_depth:
        depth += 1
        nxt: list[N] = []
        for node in frontier:
            for child in children(node) or ():
                if child in parent:
                    continue
                parent[child] = node
                if children(child) is None:
                    ends.append(child)
                else:
                    nxt.append(child)
        frontier = nxt
    paths = []
    for end in ends:
        path = [end]
        while (up := parent[path[-1]]) is not None:
            path.append(up)
        paths.append(tuple(reversed(path)))
    return paths
