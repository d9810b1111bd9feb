"""Prepared statements and portals of the extended query protocol.

Rules this module keeps:

* A statement is the SQL text and its parameter type OIDs; it lives until it is
  closed or replaced (the unnamed one is replaced by the next Parse), across
  any number of Syncs. Describe fills in the OIDs the client left unspecified
  (``resolved_oids``, from the backend); Bind then reads the client's values by
  those types.
* A portal is a statement bound to parameter values and result formats. It is
  executed at most once; a suspended portal keeps its row iterator so the next
  Execute resumes where the last one stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pgbarrier.result import Column, Result


@dataclass
class PreparedStatement:
    name: str
    sql: str
    param_oids: tuple[int, ...]
    #: every parameter's type after Describe: the client's, else the backend's inference
    resolved_oids: tuple[int, ...] | None = None

    def oid_of(self, index: int) -> tuple[int, bool]:
        """Type OID of parameter ``index`` and whether the client gave it (else inferred or 0)."""
        given = self.param_oids[index] if index < len(self.param_oids) else 0
        if given:
            return given, True
        resolved = self.resolved_oids
        if resolved is not None and index < len(resolved):
            return resolved[index], False
        return 0, False


@dataclass
class Portal:
    name: str
    statement: PreparedStatement
    params: Any  # list of Python values, or the client's WireParams (a relaying backend)
    result_formats: tuple[int, ...]
    #: columns sent in a RowDescription by Describe (None: not described yet)
    described: list[Column] | None = None
    #: True when Describe could not know the shape and the RowDescription goes with Execute
    describe_deferred: bool = False
    result: Result | None = None
    rows: Iterator[tuple[Any, ...]] | None = None
    sent: int = 0
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def format_of(self, index: int) -> int:
        fmts = self.result_formats
        if not fmts:
            return 0
        if len(fmts) == 1:
            return fmts[0]
        return fmts[index] if index < len(fmts) else 0

    def all_binary(self) -> bool:
        return bool(self.result_formats) and all(f == 1 for f in self.result_formats)
