# C types for pgbarrier/relay/state.py when Cython compiles it into _state_c (setup.py).
# The .py is the implementation; this file only declares types and the C names its
# ``if _COMPILED:`` branches use (pgbarrier.accel).
import cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memchr

cdef bint _COMPILED
cdef object _scan
cdef int _IDLE, READY, DRAINED, COPY_IN, PARAMETER, MORE, _ERROR
cdef int _UP_IDLE, _UP_OPEN, _UP_SKIPPING
cdef int _PARSE, _BIND, _DESCRIBE, _EXECUTE, _CLOSE, _SYNC, _QUERY, _STATEMENT, _PORTAL
cdef bytes _QUEUED
cdef tuple _WORDS

@cython.locals(top=Py_ssize_t)
cdef Py_ssize_t _length_at(bytes data, Py_ssize_t pos)

@cython.locals(base=cython.p_char, hit=cython.p_void)
cdef Py_ssize_t _nul(bytes data, Py_ssize_t start, Py_ssize_t end) except -2

cdef bytes _sub(bytes data, Py_ssize_t start, Py_ssize_t end)

cdef tuple _BY_FIRST

@cython.locals(text=bytes, upper=bytes, word=bytes, p=cython.p_uchar, words=tuple,
               w=cython.p_uchar, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, c=cython.uchar)
cdef bint _plain(bytes data, Py_ssize_t start, Py_ssize_t end) except -1

@cython.locals(body=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, kind=int, name=bytes,
               statement=bytes, names=dict, local=dict, portal=str, text=bytes)
cdef bint _one(int code, bytes data, Py_ssize_t pos, Py_ssize_t end, dict stmts,
               dict portals, dict verdicts, dict statements, dict held, object session,
               bint skipping, list expect) except -1

cdef class UpstreamCore

cdef class RelayState:
    cdef public bint in_batch, busy
    cdef public int phase, status
    cdef public Py_ssize_t done, commands
    cdef public object failed_at
    cdef public str failed_sqlstate
    cdef public long long generation
    cdef public list wbuf, expect
    cdef public dict stmts, portals, verdicts, query_verdicts
    cdef public object copy_drain
    cdef public double received_at

    cpdef received(self, double now)

    cpdef batch_opened(self)
    cpdef batch_closed(self)
    cpdef sent(self, bint synced=*)
    cpdef batch_sent(self)
    cpdef failed(self)
    cpdef ready(self, int status)
    cpdef bint open_upstream(self)
    cpdef bint skipping(self)
    cpdef exchange(self)
    cpdef counted(self, Py_ssize_t done, Py_ssize_t commands)
    cpdef errored(self, str sqlstate)
    cpdef Py_ssize_t take_commands(self)
    cpdef waiting(self)
    cpdef waited(self)

    @cython.locals(skipping=bint)
    cpdef bint queue(self, object session, int code, bytes frame) except -1
    @cython.locals(n=Py_ssize_t, last=Py_ssize_t, length=Py_ssize_t, end=Py_ssize_t,
                   pos=Py_ssize_t, code=int, queued=bytes, wbuf=list, expect=list,
                   statements=dict, held=dict, text=bytes, buf=bytes)
    cpdef Py_ssize_t fast_batch(self, object session, object relay, UpstreamCore up,
                                bytes data, Py_ssize_t limit) except -2
    cpdef queued(self, bytes frame)
    cpdef bytes take_queued(self)
    @cython.locals(expected=list)
    cpdef list take_expected(self)
    @cython.locals(verdicts=dict)
    cpdef remember_query(self, bytes text, bint relayable)
    cpdef forget(self, int code, bytes name)
    @cython.locals(expect=list, i=Py_ssize_t, item=tuple)
    cpdef settled(self)
    cpdef finished(self, object session)
    cpdef fast_ready(self, object session)
    cpdef copy_began(self, Py_ssize_t drain)
    cpdef Py_ssize_t copy_ended(self) except -1

    @cython.locals(stop=int, start=Py_ssize_t, done=Py_ssize_t, commands=Py_ssize_t)
    cpdef tuple scan(self, bytes buf, Py_ssize_t pos, Py_ssize_t drain,
                     object on_parameter=*)

cdef class UpstreamCore:
    cdef public bytes buf
    cdef public Py_ssize_t pos
    cdef public object lost, state
    cdef public list param_events, pending_writes
    cdef public bint blocking
