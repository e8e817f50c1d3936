# Augmenting declarations for mrgym/sim/cpu.py (Cython pure mode; the .py is unchanged).
cimport cython


cdef class CpuPool:
    cdef public object host, engine, params, interactive
    cdef public dict works, vm_count, vms, share, stalled
    cdef public object clock
    cdef public long io_streams
    cdef public double used, t_energy, energy_j, busy_core_s, _demand, scale

    @cython.locals(dt=cython.double)
    cpdef account(self, double now)
