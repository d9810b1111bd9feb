"""The PostgreSQL protocol's vocabulary, a leaf every package may import: message
codecs (:mod:`~pgbarrier.pgproto.messages`) and type encoding
(:mod:`~pgbarrier.pgproto.types`). No sockets, no SQL meaning."""
