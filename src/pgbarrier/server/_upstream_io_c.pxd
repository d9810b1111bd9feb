# C types for pgbarrier/server/upstream_io.py when Cython compiles it into _upstream_io_c
# (setup.py). The .py is the implementation; this file only declares types and the C
# names its ``if _COMPILED:`` branches use (pgbarrier.accel).
import cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.errno cimport errno, EAGAIN, EINTR
# the upstream's fields are reached in C: accel runs this extension only beside that one
# (pgbarrier.accel.REQUIRES)
from pgbarrier.relay._state_c cimport UpstreamCore

cdef extern from "<sys/socket.h>" nogil:
    ssize_t recv(int fd, void *buf, size_t n, int flags)

cdef bint _COMPILED
cdef object log
cdef Py_ssize_t _RECV
#: the compiled build's read buffer, _RECV bytes: one for the module (see the module rules)
cdef char _BUF[65536]

cdef class UpstreamIO:
    cdef public object loop, up, sock, waiting, idle, _rest, _then
    cdef public int fd
    cdef public bint watching, fresh, paused

    @cython.locals(got=Py_ssize_t, err=int, data=bytes, up=UpstreamCore)
    cpdef _readable(self)
