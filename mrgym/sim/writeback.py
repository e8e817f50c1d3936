"""Write-back page cache: writes land in memory, one flusher per disk writes them back.

A MapReduce task's writes (map outputs, HDFS block replicas through the DataNode) return
once the data is in the OS page cache; the kernel's flusher threads write dirty pages
back later in large, sorted batches.  So however many tasks write to a host, its disk
sees *one* sequential write stream, and a writer waits for its data to reach the disk
only when the host's dirty pages exceed their budget (Linux ``balance_dirty_pages``
throttles it to the flusher's pace).  Without this, every write of every 3-replica HDFS
pipeline was a seeking stream of its own for its whole duration, and disks sat at their
random-access floor with ~23 streams even when the cluster was under 25 % busy (issue 9's
diagnosis; ILA Fig. 8 measures far less slowdown).

Model (fluid, no page granularity):

* a write of ``mb`` to a host whose dirty data plus ``mb`` fits its budget (``dirty_ratio`` of its Hadoop VMs' memory) is
  absorbed whole: the writer's flow drops that disk from its path, and ``mb`` is added
  at once to the host's flusher, a flow on the disk with tag ``writeback`` (Dom0 serves
  it on a virtualized host);
* a write that does not fit goes to the disk as a throttled ``write`` stream;
* on the disk, all ``write`` and ``writeback`` flows together are *one* stream: they count
  once in the seek-thrash term (the elevator merges them) and split one stream's share of
  the bandwidth (``Link.shares``);
* an absorbed write still crosses the network at its own pace, but its MB are charged to
  the caches when it starts (a fluid simplification: a remote flusher may start before
  the data has arrived); a writer killed mid-way takes its unsent MB back;
* one cache per physical host, fed by all its Hadoop VMs (a simplification: under Xen
  each guest has its own page cache and flusher; their budgets add up to this one);
* a failed host loses its dirty data (its replicas are handled by HDFS, not here).

Guest memory (``ModelParams.guest_page_cache``, default off).  Under Xen every guest
runs its own kernel, so each VM has its own page cache, flusher and dirty limit, and one
guest's free memory cannot absorb another guest's burst (Chisnall, *The Definitive Guide
to the Xen Hypervisor*, ch. 9: the balloon driver is the only way memory moves between
guests).  On: the host's cache dispatches to one :class:`WriteCache` per Hadoop VM whose
budget is ``dirty_ratio`` of the guest's *dirtyable* memory — Linux applies
``vm.dirty_ratio`` to free plus reclaimable page-cache memory
(``global_dirtyable_memory``), so the JVM heaps of the VM's running tasks
(``task_heap_mb`` each, Hadoop 1's ``mapred.child.java.opts -Xmx200m``) and the memory
its balloon driver holds (``VM.balloon_gb``, HybridMR phase II's memory management) are
not available to it.  A write to a co-hosted disk goes through the writer's own guest;
a replica written to another host goes through that host's first DataNode guest (the
simulator does not carry the replica's VM to the flow; with one DataNode VM per host,
as in every bundled scenario but split-architecture ones, that *is* the replica's VM).
"""

from __future__ import annotations

from mrgym.sim.execution import FluidEngine
from mrgym.sim.topology import VM, Host
from mrgym.sim.work import Work


class WriteCache:
    """One host's dirty pages and its flusher flow; with ``guests`` (guest_page_cache on),
    a dispatcher to one cache per Hadoop VM of the host instead."""

    __slots__ = (
        "host",
        "engine",
        "dirty_ratio",
        "flusher",
        "absorbed_mb",
        "throttled_mb",
        "vm",
        "heap_mb",
        "guests",
    )

    def __init__(
        self,
        host: Host,
        engine: FluidEngine,
        dirty_ratio: float,
        guests: dict[int, WriteCache] | None = None,
        heap_mb: float = 0.0,
        vm: VM | None = None,
    ):
        self.host = host
        self.engine = engine
        self.dirty_ratio = dirty_ratio
        self.flusher: Work | None = None
        self.absorbed_mb = 0.0  # monitoring: MB that went through the cache
        self.throttled_mb = 0.0  # MB written while the cache was full
        self.vm = vm  # the guest whose cache this is (None: the host's)
        self.heap_mb = heap_mb
        # guest mode: every Hadoop VM's own cache by VM id, shared by all hosts' caches (a
        # migrated guest keeps its cache); None: this host's one cache takes the writes
        self.guests = guests

    @property
    def budget_mb(self) -> float:
        """Dirty data allowed: ``dirty_ratio`` of the host's Hadoop VMs' memory (read now: a
        live migration moves a VM's memory to another host), or of the guest's dirtyable
        memory (its memory less its balloon and its running tasks' JVM heaps)."""
        vm = self.vm
        if vm is None:
            return self.dirty_ratio * 1024.0 * sum(v.memory_gb for v in self.host.vms)
        free = 1024.0 * (vm.memory_gb - vm.balloon_gb) - self.heap_mb * len(vm.running)
        return self.dirty_ratio * max(0.0, free)

    def guest(self, vm: VM | None) -> WriteCache | None:
        """The guest cache a write of ``vm`` to this host's disk goes through: ``vm``'s when
        it lives here, else the first DataNode guest's (module docstring)."""
        g = self.guests
        if g is None:
            return self
        if vm is not None and vm.host is self.host and vm.id in g:
            return g[vm.id]
        for v in self.host.vms:
            if v.datanode and v.id in g:
                return g[v.id]
        return None

    def take(self, mb: float, now: float, vm: VM | None = None) -> WriteCache | None:
        """The cache that absorbed a write of ``mb`` by ``vm``, or None (to the disk)."""
        c = self.guest(vm) if self.guests is not None else self
        if c is not None and c.absorb(mb, now):
            return c
        return None

    def dirty_mb(self, now: float) -> float:
        f = self.flusher
        if f is None or not f.active:
            return 0.0
        return f.remaining_at(now)

    def absorb(self, mb: float, now: float) -> bool:
        """Take ``mb`` into the cache if it fits; False: the writer goes to the disk."""
        host = self.host if self.vm is None else self.vm.host  # a guest may have migrated
        if self.dirty_ratio <= 0.0 or not host.alive:
            return False
        if self.dirty_mb(now) + mb > self.budget_mb:
            self.throttled_mb += mb
            return False
        self.absorbed_mb += mb
        f = self.flusher
        if f is not None and f.active:
            self.engine.extend(f, mb)
        else:
            dom0 = (host,) if host.virtualized else ()
            self.flusher = self.engine.flow((host.disk,), mb, 1.0, dom0, tag="writeback")
        return True

    def take_back(self, mb: float) -> None:
        """A writer was killed with ``mb`` not sent: that part never becomes dirty."""
        f = self.flusher
        if f is not None and f.active and mb > 0.0:
            self.engine.shrink(f, mb)
            self.absorbed_mb -= mb

    def drop(self) -> None:
        """The host went down: its dirty pages are gone."""
        for v in self.host.vms if self.guests else ():
            g = self.guests.get(v.id)
            if g is not None:
                g.drop()
        f = self.flusher
        if f is not None and f.active:
            self.engine.cancel(f)
        self.flusher = None


def guest_caches(vms, engine: FluidEngine, dirty_ratio: float, heap_mb: float) -> dict:
    """One cache per Hadoop VM (guest_page_cache on): VMs with no memory (interactive
    ones) take no Hadoop writes, and a native host's worker is no guest (it writes through
    its host's one cache: no guest kernel of its own, no heaps carved out of a guest)."""
    return {
        v.id: WriteCache(v.host, engine, dirty_ratio, heap_mb=heap_mb, vm=v)
        for v in vms
        if v.memory_gb > 0 and v.host.virtualized
    }
