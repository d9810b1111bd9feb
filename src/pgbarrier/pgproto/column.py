"""A result column as RowDescription describes it: what every layer passes around.

The codec's own type: :mod:`pgbarrier.pgproto.messages` and :mod:`pgbarrier.pgproto.columnar`
encode it, the backends build it, :class:`pgbarrier.result.Result` holds a list of them
(``pgbarrier.result`` re-exports it, the name most callers import it by). It lives in the
codec so that the codec imports nothing above it (tests/unit/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pgbarrier.pgproto import types as pgt


@dataclass(frozen=True)
class Column:
    name: str
    type_oid: int
    type_modifier: int = -1
    #: the table (pg_class OID) and its column (attnum) this column is, else 0 and 0
    table_oid: int = 0
    column_number: int = 0

    @property
    def type_size(self) -> int:
        return pgt.TYPE_SIZE.get(self.type_oid, -1)
