# C types for pgbarrier/pgproto/rowframe.py when Cython compiles it into _rowframe_c
# (setup.py). The .py is the implementation; this file only declares types and the C
# names its ``if _COMPILED:`` branches use (pgbarrier.accel).
import cython
from libc.string cimport memcpy

cdef bint _COMPILED
cdef int _POS, _NEG, _NUMERIC_MAX
cdef long long _DAY_US
cdef long long _DATE_INF, _TS_INF

@cython.locals(r=Py_ssize_t, p=cython.longlong, a=cython.longlong, length=cython.longlong)
cpdef put_fields(unsigned char[::1] buf, long long[::1] cursor, const long long[::1] offsets,
                 const unsigned char[::1] data, const unsigned char[::1] valid, Py_ssize_t n)

@cython.locals(r=Py_ssize_t, i=cython.longlong, a=cython.longlong, b=cython.longlong,
               more=cython.longlong)
cpdef copy_sizes(long long[::1] sizes, long long[::1] extra, const long long[::1] offsets,
                 const unsigned char[::1] data, const unsigned char[::1] valid, Py_ssize_t n,
                 const unsigned char[::1] escapes, Py_ssize_t null_length, bint scan)

@cython.locals(r=Py_ssize_t, i=cython.longlong, p=cython.longlong, a=cython.longlong,
               length=cython.longlong, c=cython.uchar, e=cython.uchar, null_length=Py_ssize_t)
cpdef put_copy_fields(unsigned char[::1] buf, long long[::1] cursor, const long long[::1] extra,
                      const long long[::1] offsets, const unsigned char[::1] data,
                      const unsigned char[::1] valid, Py_ssize_t n,
                      const unsigned char[::1] escapes, const unsigned char[::1] null,
                      unsigned char separator)

@cython.locals(r=Py_ssize_t, i=cython.longlong, a=cython.longlong, b=cython.longlong,
               more=cython.longlong, null_length=Py_ssize_t, quoted=bint)
cpdef csv_sizes(long long[::1] sizes, long long[::1] extra, const long long[::1] offsets,
                const unsigned char[::1] data, const unsigned char[::1] valid, Py_ssize_t n,
                const unsigned char[::1] special, const unsigned char[::1] doubled,
                const unsigned char[::1] null, bint scan, bint force, bint lone)

@cython.locals(r=Py_ssize_t, i=cython.longlong, p=cython.longlong, a=cython.longlong,
               length=cython.longlong, c=cython.uchar, quoted=cython.longlong,
               null_length=Py_ssize_t)
cpdef put_csv_fields(unsigned char[::1] buf, long long[::1] cursor, const long long[::1] extra,
                     const long long[::1] offsets, const unsigned char[::1] data,
                     const unsigned char[::1] valid, Py_ssize_t n,
                     const unsigned char[::1] doubled, const unsigned char[::1] null,
                     unsigned char quote, unsigned char escape, unsigned char separator)

@cython.locals(point=Py_ssize_t)
cdef str _pg_float(str s)

@cython.locals(r=Py_ssize_t, out=bytearray, offsets_v="long long[::1]")
cpdef tuple float8_text(const double[::1] values, const unsigned char[::1] valid, Py_ssize_t n)

@cython.locals(r=Py_ssize_t, i=Py_ssize_t, p=Py_ssize_t, pad=int, nfrac=int, ov="long long[::1]", dv="unsigned char[::1]", g=cython.longlong,
               power=cython.longlong, widen=cython.longlong, tail=cython.longlong, u=cython.longlong,
               a=cython.longlong, whole=cython.longlong, frac=cython.longlong,
               rest=cython.longlong, nint=int, first=int, last=int, weight=int,
               ndigits=int, sign=int, negative=bint, groups="long long[12]", each=bint, at=int)
cpdef tuple numeric_binary(const long long[::1] unscaled, const unsigned char[::1] valid,
                           Py_ssize_t n, int scale, const long long[::1] scales=*)

@cython.locals(r=Py_ssize_t, p=Py_ssize_t, v=cython.longlong, days=cython.longlong,
               micros=cython.longlong, z=cython.longlong, era=cython.longlong,
               doe=cython.longlong, yoe=cython.longlong, year=cython.longlong,
               doy=cython.longlong, mp=cython.longlong, day=cython.longlong,
               month=cython.longlong, width=int, rest=cython.longlong, i=int,
               zone=cython.longlong, minutes=cython.longlong, seconds=cython.longlong,
               ov="long long[::1]", dv="unsigned char[::1]")
cpdef tuple datetime_text(const long long[::1] values, const unsigned char[::1] valid,
                          Py_ssize_t n, int kind, const int[::1] zones=*)

@cython.locals(r=Py_ssize_t, p=Py_ssize_t, i=int, u=cython.longlong, power=cython.longlong,
               frac=cython.longlong, ov="long long[::1]", dv="unsigned char[::1]")
cpdef tuple decimal_text(const long long[::1] unscaled, const unsigned char[::1] valid,
                         Py_ssize_t n, int scale)

@cython.locals(u=cython.ulonglong, rest=cython.ulonglong, width=int, i=int)
cdef inline Py_ssize_t _put_int(unsigned char[::1] dv, Py_ssize_t p, long long v) noexcept nogil

cdef inline Py_ssize_t _put_infinity(unsigned char[::1] dv, Py_ssize_t p,
                                     bint negative) noexcept nogil

cdef inline Py_ssize_t _put_two(unsigned char[::1] dv, Py_ssize_t p, long long v) noexcept nogil

@cython.locals(secs=cython.ulonglong, frac=cython.ulonglong, hour=cython.ulonglong,
               minute=cython.ulonglong, second=cython.ulonglong, width=int, i=int)
cdef inline Py_ssize_t _put_clock(unsigned char[::1] dv, Py_ssize_t p,
                                  unsigned long long micros) noexcept nogil

@cython.locals(i=Py_ssize_t)
cdef Py_ssize_t _put_unit(unsigned char[::1] dv, Py_ssize_t p, long long v, bytes unit,
                          bint first, bint before_negative)

@cython.locals(r=Py_ssize_t, p=Py_ssize_t, start=Py_ssize_t, m=cython.longlong,
               years=cython.longlong, mons=cython.longlong, d=cython.longlong,
               v=cython.longlong, u=cython.ulonglong, before_negative=bint,
               ov="long long[::1]", dv="unsigned char[::1]")
cpdef tuple interval_text(const long long[::1] months, const long long[::1] days,
                          const long long[::1] micros, const unsigned char[::1] valid,
                          Py_ssize_t n)

@cython.locals(size=cython.longlong, r=Py_ssize_t, i=cython.longlong, p=cython.longlong,
               c=cython.uchar, h=cython.uchar, lo=cython.uchar, ov="long long[::1]",
               dv="unsigned char[::1]")
cpdef tuple hex_text(const long long[::1] offsets, const unsigned char[::1] data,
                     const unsigned char[::1] valid, Py_ssize_t n)

@cython.locals(size=cython.longlong, r=Py_ssize_t, j=cython.longlong, i=cython.longlong,
               a=cython.longlong, b=cython.longlong, p=cython.longlong, c=cython.uchar,
               quote=bint, ov="long long[::1]", dv="unsigned char[::1]")
cpdef tuple array_text(const long long[::1] lists, const unsigned char[::1] present,
                       Py_ssize_t n, const long long[::1] offsets,
                       const unsigned char[::1] data, const unsigned char[::1] valid)

@cython.locals(size=cython.longlong, r=Py_ssize_t, j=cython.longlong, i=cython.longlong,
               a=cython.longlong, length=cython.longlong, p=cython.longlong,
               count=cython.longlong, nulls=int, ov="long long[::1]", dv="unsigned char[::1]")
cpdef tuple array_binary(const long long[::1] lists, const unsigned char[::1] present,
                         Py_ssize_t n, const long long[::1] offsets,
                         const unsigned char[::1] data, const unsigned char[::1] valid,
                         int element)

cdef inline void _put_int32(unsigned char[::1] dv, Py_ssize_t p, long long v) noexcept nogil

@cython.locals(r=Py_ssize_t)
cpdef add_field_sizes(long long[::1] sizes, const long long[::1] offsets,
                      const unsigned char[::1] valid, Py_ssize_t n)

@cython.locals(r=Py_ssize_t, p=cython.longlong, length=cython.longlong)
cpdef put_headers(unsigned char[::1] buf, long long[::1] cursor, const long long[::1] sizes,
                  Py_ssize_t n, unsigned char kind, int ncols)
