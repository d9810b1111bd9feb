# C types for pgbarrier/session/relay_queue.py when Cython compiles it into
# _relay_queue_c (setup.py). The .py is the implementation; this file only declares
# types and the C names its ``if cython.compiled:`` branches use (pgbarrier.accel).
import cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

cdef bint _COMPILED
cdef int _PARSE, _BIND, _DESCRIBE, _EXECUTE, _CLOSE, _SYNC, _QUERY, _STATEMENT, _PORTAL
cdef bytes _QUEUED
cdef tuple _WORDS

@cython.locals(top=Py_ssize_t)
cdef Py_ssize_t _length_at(bytes data, Py_ssize_t pos)

@cython.locals(i=Py_ssize_t)
cdef Py_ssize_t _nul(bytes data, Py_ssize_t start, Py_ssize_t end) except -2

cdef bytes _sub(bytes data, Py_ssize_t start, Py_ssize_t end)

@cython.locals(text=bytes, upper=bytes, word=bytes)
cdef bint _plain(bytes data, Py_ssize_t start, Py_ssize_t end) except -1

@cython.locals(skipping=bint)
cpdef bint queue(object relay, int code, bytes frame) except -1

@cython.locals(n=Py_ssize_t, last=Py_ssize_t, length=Py_ssize_t, end=Py_ssize_t,
               pos=Py_ssize_t, code=int, queued=bytes, wbuf=list, expect=list,
               stmts=dict, portals=dict, verdicts=dict, statements=dict, held=dict)
cpdef Py_ssize_t batch(object relay, bytes data, Py_ssize_t limit) except -2

@cython.locals(body=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, kind=int, name=bytes,
               statement=bytes, names=dict, local=dict, portal=str, text=bytes)
cdef bint _one(int code, bytes data, Py_ssize_t pos, Py_ssize_t end, dict stmts,
               dict portals, dict verdicts, dict statements, dict held, object session,
               bint skipping, list expect) except -1
