# C types for pgbarrier/server/core.py when Cython compiles it into _core_c (setup.py).
# The .py is the implementation; this file only declares types and the C names its
# ``if _COMPILED:`` branches use (pgbarrier.accel).
import cython
from cpython.bytes cimport PyBytes_AS_STRING
from libc.errno cimport errno, EAGAIN, EINTR
# the relay's state and the upstream's fields are reached in C: accel runs this
# extension only beside that one (pgbarrier.accel.REQUIRES)
from pgbarrier.relay._state_c cimport RelayState, UpstreamCore

cdef extern from "<sys/socket.h>" nogil:
    ssize_t send(int fd, const void *buf, size_t n, int flags)
    int MSG_NOSIGNAL

cdef bint _COMPILED
cdef object log, _IDLE, _monotonic

cdef class ConnectionCore:
    cdef public object server, loop, transport, session, frames, upstream_io
    cdef public bint in_batch, cancelled, shut_read, eof
    cdef public long long batches
    cdef public object began, ended, xact_began, last_batch
    cdef public bint _serving, _busy, _finished, _idle, _read_paused, _write_paused
    cdef public object _idle_timer, _on_writable, _timing, _fast, _fast_replied_cb
    cdef public object _on_parameter
    cdef public UpstreamCore _up
    cdef public RelayState _state
    cdef public bint _fast_query
    cdef public int _up_fd, _client_fd
    cdef public Py_ssize_t _limit
    cdef public bint _log_durations, _logs_statements
    cdef public object _info, _stats

    @cython.locals(first=bytes)
    cpdef _batch_began(self, object session, list batch)
    cpdef _batch_ended(self, object out, bint idle)
    @cython.locals(taken=Py_ssize_t, n=Py_ssize_t, sent=Py_ssize_t, up=UpstreamCore)
    cpdef bint _relay_fast(self, bytes data) except -1
    @cython.locals(sent=Py_ssize_t, err=int)
    cdef Py_ssize_t _send(self, int fd, bytes data) except? -1
    @cython.locals(fd=int, sent=Py_ssize_t)
    cdef _to_client(self, bytes data)
    @cython.locals(start=Py_ssize_t, pos=Py_ssize_t, stop=int, buf=bytes, up=UpstreamCore)
    cpdef _fast_replied(self)
