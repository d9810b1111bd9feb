"""Which implementation of the compiled hot paths runs: the C extension or its source.

Five modules are compiled. Four are what every relayed statement runs:
:mod:`pgbarrier.pgproto.scan` (the loop over the upstream's replies), the relay's
protocol state and its queued messages :mod:`pgbarrier.relay.state` (an extension type
with C fields), the connection's hot fields and fast path :mod:`pgbarrier.server.core`
(the compiled base class of the connection's protocol) and the loop's side of the
upstream socket :mod:`pgbarrier.server.upstream_io`. The fifth holds the per-value loops
of the columnar result path, :mod:`pgbarrier.pgproto.rowframe`. ``setup.py`` compiles
each with Cython, when pgbarrier is installed, into an extension named ``_<name>_c``
beside its source (C types from the ``_<name>_c.pxd`` there). Rules this module keeps:

* :func:`load` returns the extension when it was built and is not older than the files it
  was built from (its source, its ``.pxd``, and the ``.pxd`` of each module it is typed
  against), else the source module itself: the same code run as Python (the same answers, slower).
  A machine without a C compiler installs and runs; a source edited after the build is
  never shadowed by a stale extension (a warning says to reinstall: ``make install``).
* An extension may be typed against another's extension types (``cimport``: the serving
  core calls the relay state's methods and reads the upstream's fields in C).
  :data:`REQUIRES` names those ties, and :func:`load` runs such an extension only where
  every module it requires runs compiled too, else its source. An extension that cannot
  load beside the others (one it imports is missing or was built apart) is a source too.
* ``PGBARRIER_PURE_PYTHON=1`` in the environment loads the sources always (the tests run
  both implementations; a benchmark can compare them).
* :data:`COMPILED` records what was loaded, for ``pgbarrier --version`` style reports and
  for the test that CI runs the compiled path.
"""

from __future__ import annotations

import importlib
import logging
import os
from types import ModuleType

log = logging.getLogger(__name__)

#: module name -> whether its compiled extension was loaded
COMPILED: dict[str, bool] = {}


def pure_python() -> bool:
    return os.environ.get("PGBARRIER_PURE_PYTHON", "") not in ("", "0")


#: module -> the modules whose extension types its extension is typed against
REQUIRES: dict[str, tuple[str, ...]] = {
    "pgbarrier.server.core": ("pgbarrier.relay.state",),
    "pgbarrier.server.upstream_io": ("pgbarrier.relay.state",),
}


def load(name: str) -> ModuleType:
    """The implementation of module ``name`` to use (see the module rules)."""
    source = importlib.import_module(name)
    package, _, base = name.rpartition(".")
    compiled: ModuleType | None = None
    if not pure_python() and all(_compiled(r) for r in REQUIRES.get(name, ())):
        try:
            compiled = importlib.import_module(f"{package}._{base}_c")
        except (ImportError, ValueError):  # ValueError: a type's size differs (mismatched)
            compiled = None
    if compiled is not None and _older(compiled, source, [
            importlib.import_module(r) for r in REQUIRES.get(name, ())]):
        log.warning("%s: the compiled extension is older than its source; running the "
                    "source (reinstall to rebuild it: make install)", name)
        compiled = None
    COMPILED[name] = compiled is not None
    return compiled if compiled is not None else source


def _compiled(name: str) -> bool:
    """Whether module ``name`` runs its extension (loaded now if it was not yet)."""
    if name not in COMPILED:
        load(name)
    return COMPILED[name]


def _pxd(source: ModuleType) -> str:
    """The ``.pxd`` of a module's extension (its C types), beside its source."""
    head, tail = os.path.split(source.__file__ or "")
    return os.path.join(head, f"_{tail.rpartition('.')[0]}_c.pxd")


def _older(compiled: ModuleType, source: ModuleType,
           requires: list[ModuleType] | tuple[ModuleType, ...] = ()) -> bool:
    """Whether the extension is older than a file it was built from: its source, its
    ``.pxd``, and the ``.pxd`` of each module it is typed against (``requires``, their
    source modules): an edited ``.pxd`` moves the fields the extension reads in C."""
    try:
        built = os.path.getmtime(compiled.__file__ or "")
    except OSError:
        return False
    for path in (source.__file__ or "", _pxd(source), *(_pxd(m) for m in requires)):
        try:
            if os.path.getmtime(path) > built:
                return True
        except OSError:  # no .pxd: nothing to compare
            continue
    return False
