# Augmenting declarations for mrgym/sim/work.py (Cython pure mode; the .py is unchanged).
cimport cython

from mrgym.sim.topology cimport Clock


cdef class Work:
    cdef public object kind
    cdef public double total, remaining, factor, cf, vfin
    cdef public long long vseq
    cdef public Clock clk
    cdef public object event, host, vm, tag, absorbed, dom0_hosts
    cdef public tuple links, clks
    cdef public bint active, write

    cpdef double remaining_at(self, double now)

    cpdef double rate_now(self)
