# C types for pgbarrier/relay/state.py when Cython compiles it into _state_c (setup.py).
# The .py is the implementation; this file only declares types (pgbarrier.accel).
import cython

cdef object _scan
cdef int _IDLE, READY, DRAINED, COPY_IN, PARAMETER, MORE, _ERROR

cdef class RelayState:
    cdef public bint in_batch, dirty, skipping, busy
    cdef public int status
    cdef public Py_ssize_t done, commands
    cdef public object failed_at
    cdef public str failed_sqlstate
    cdef public long long generation

    cpdef batch_opened(self)
    cpdef batch_closed(self)
    cpdef sent(self, bint synced=*)
    cpdef batch_sent(self)
    cpdef failed(self)
    cpdef ready(self, int status)
    cpdef exchange(self)
    cpdef counted(self, Py_ssize_t done, Py_ssize_t commands)
    cpdef errored(self, str sqlstate)
    cpdef Py_ssize_t take_commands(self)
    cpdef waiting(self)
    cpdef waited(self)

    @cython.locals(stop=int, start=Py_ssize_t, done=Py_ssize_t, commands=Py_ssize_t)
    cpdef tuple scan(self, bytes buf, Py_ssize_t pos, Py_ssize_t drain)
