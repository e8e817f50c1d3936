# Augmenting declarations for mrgym/sim/execution.py (Cython pure mode; the .py is unchanged).
# Work and FluidEngine become extension types; the hot loop's locals are C doubles.
cimport cython

from mrgym.sim.topology cimport Clock, Link
from mrgym.sim.work cimport Work

cdef double EPS, INF


cdef class FluidEngine:
    cdef public object env, params
    cdef public list _heap
    cdef public long long _seq, _token, n_rate_updates
    cdef public double _wake_at

    @cython.locals(old=cython.double, old_w=cython.double, s=cython.double,
                   sw=cython.double, r=cython.double, rem=cython.double,
                   n=cython.Py_ssize_t, link=Link, f=Work, c=Clock, cw=Clock,
                   k=Clock, cur=Clock, moves=dict, changed=list)
    cpdef _refresh_links(self, tuple links, double now, Work new=*)

    cpdef _retime(self, Clock c, double rate, double now)

    @cython.locals(v=cython.double, vfin=cython.double, rate=cython.double,
                   t=cython.double)
    cpdef _bind(self, Work f, Clock c, double rem, double now)

    @cython.locals(c=Clock, rem=cython.double)
    cpdef double _unbind(self, Work f, double now)

    @cython.locals(h=list, vfin=cython.double, f=Work)
    cpdef double _clock_due(self, Clock c)

    @cython.locals(t=cython.double)
    cpdef _reschedule(self, Clock c)

    @cython.locals(rose=cython.bint, c=Clock, w=Work, rem=cython.double)
    cpdef set_pool_rate(self, pool, double rate, moved, double now)

    @cython.locals(t=cython.double, f=cython.double, now=cython.double, heap=list, w=Work,
                   c=Clock)
    cpdef _fire(self, token)

    @cython.locals(now=cython.double, link=Link)
    cpdef _add_flow(self, Work w)

    @cython.locals(now=cython.double, link=Link)
    cpdef _detach(self, Work w)
