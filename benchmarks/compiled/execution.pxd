# Augmenting declarations for mrgym/sim/execution.py (Cython pure mode; the .py is unchanged).
# Work and FluidEngine become extension types; the hot loop's locals are C doubles.
cimport cython

from mrgym.sim.topology cimport Link

cdef double EPS, INF


cdef class Work:
    cdef public object kind
    cdef public double total, remaining, rate, t_last, base, cores, due, factor
    cdef public long long version
    cdef public object event, host, vm, tag, absorbed, dom0_hosts
    cdef public tuple links
    cdef public bint active, write

    cpdef double remaining_at(self, double now)


cdef class FluidEngine:
    cdef public object env, params
    cdef public list _heap
    cdef public long long _seq, _token, n_rate_updates
    cdef public double _wake_at

    @cython.locals(old=cython.double, old_w=cython.double, s=cython.double,
                   sw=cython.double, lim=cython.double, lim_w=cython.double,
                   rate=cython.double, c=cython.double, r0=cython.double,
                   rem=cython.double, t=cython.double, rose=cython.bint,
                   n=cython.Py_ssize_t, seq=cython.longlong, link=Link, f=Work,
                   affected=dict, heap=list)
    cpdef _refresh_links(self, tuple links, double now, Work new=*)

    @cython.locals(t=cython.double)
    cpdef set_rate(self, Work w, double rate, double now)

    cpdef double _true_due(self, Work w)

    @cython.locals(t=cython.double, f=cython.double, now=cython.double, heap=list, w=Work)
    cpdef _fire(self, token)

    @cython.locals(now=cython.double, link=Link)
    cpdef _add_flow(self, Work w)

    @cython.locals(now=cython.double, link=Link)
    cpdef _detach(self, Work w)
