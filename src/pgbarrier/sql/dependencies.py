"""The chains of plain views a query reads a relation through.

Rules this module keeps:

* :func:`walk` follows edges from the start nodes breadth first, each node visited once
  (so a cycle, or a diamond of views, costs its edges and never loops), at most
  :data:`MAX_DEPTH` edges deep (a guard, not a limit anyone meets), and returns for each
  reached node that is not a view the shortest path to it: ``(start, view, ...,
  relation)``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

#: how many views deep a chain is followed: far more than anyone nests (each node is
#: visited once, so the work is bounded by the number of views anyway, cycles included)
MAX_DEPTH = 10_000

N = TypeVar("N", bound=Hashable)


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
