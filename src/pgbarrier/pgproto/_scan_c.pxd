# C types for pgbarrier/pgproto/scan.py when Cython compiles it into _scan_c (setup.py).
# The .py is the implementation; this file only declares types (pgbarrier.accel).
import cython

cdef int _OTHER, _COMPLETES, _COMMAND, _READY, _ERROR, _PARAMETER, _COPY_IN
cdef bytes _KIND

@cython.locals(top=Py_ssize_t)
cpdef Py_ssize_t length_at(bytes buf, Py_ssize_t pos)

@cython.locals(n=Py_ssize_t, commands=Py_ssize_t, start=Py_ssize_t, end=Py_ssize_t,
               kind=int, kinds=bytes)
cpdef tuple replies(bytes buf, Py_ssize_t pos, Py_ssize_t drain, Py_ssize_t done)
