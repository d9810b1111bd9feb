"""Compiles pgbarrier's hot paths with Cython; everything else is in pyproject.toml.

The modules listed in ``COMPILED`` are plain Python (their C types are declared in the
``_<name>_c.pxd`` beside each); each is also built into an extension named ``_<name>_c``
beside its source, and :mod:`pgbarrier.accel` loads the extension when it is there. The
extensions are optional: where they cannot be built (no C compiler, say) the install goes
on without them and pgbarrier runs the Python sources, with the same behaviour.
"""

import sys

from setuptools import Extension, setup

COMPILED = ("pgbarrier.pgproto.scan", "pgbarrier.pgproto.rowframe", "pgbarrier.relay.state",
            "pgbarrier.server.core", "pgbarrier.server.upstream_io")


def _extension(module: str) -> Extension:
    package, _, name = module.rpartition(".")
    return Extension(f"{package}._{name}_c", [f"src/{module.replace('.', '/')}.py"],
                     optional=True)


def _extensions() -> list:
    try:
        from Cython.Build import cythonize

        # annotations are for readers and mypy: the C types are the .pxd's
        # include_path: an extension's .pxd may cimport another's (pgbarrier.accel)
        return cythonize([_extension(m) for m in COMPILED], quiet=True, include_path=["src"],
                         compiler_directives={"language_level": 3,
                                              "annotation_typing": False})
    except Exception as exc:  # noqa: BLE001 - the Python sources run instead
        print(f"pgbarrier: not compiling the hot paths ({exc}); the Python sources run",
              file=sys.stderr)
        return []


setup(ext_modules=_extensions())
