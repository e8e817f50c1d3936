# Augmenting declarations for mrgym/sim/topology.py (Cython pure mode; the .py is unchanged).
# Link becomes an extension type with C-typed fields; shares() a C-callable method.
cimport cython


cdef class Clock:
    cdef public double rate, v, t, due
    cdef public dict bound
    cdef public list heap


cdef class Link:
    cdef public object name
    cdef public double capacity, thrash, floor, background, cur, cur_w
    cdef public dict flows
    cdef public long n_writes
    cdef public object host
    cdef public Clock clk, clk_w

    @cython.locals(n=cython.Py_ssize_t, w=cython.Py_ssize_t, k=cython.Py_ssize_t,
                   agg=cython.double, per=cython.double)
    cpdef tuple shares(self)
