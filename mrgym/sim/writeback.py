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
"""

from __future__ import annotations

from mrgym.sim.execution import FluidEngine
from mrgym.sim.topology import Host
from mrgym.sim.work import Work


class WriteCache:
    """One host's dirty pages and its flusher flow."""

    __slots__ = ("host", "engine", "dirty_ratio", "flusher", "absorbed_mb", "throttled_mb")

    def __init__(self, host: Host, engine: FluidEngine, dirty_ratio: float):
        self.host = host
        self.engine = engine
        self.dirty_ratio = dirty_ratio
        self.flusher: Work | None = None
        self.absorbed_mb = 0.0  # monitoring: MB that went through the cache
        self.throttled_mb = 0.0  # MB written while the cache was full

    @property
    def budget_mb(self) -> float:
        """Dirty data the host may hold: ``dirty_ratio`` of its Hadoop VMs' memory (read
        now: a live migration moves a VM's memory to another host)."""
        return self.dirty_ratio * 1024.0 * sum(v.memory_gb for v in self.host.vms)

    def dirty_mb(self, now: float) -> float:
        f = self.flusher
        if f is None or not f.active:
            return 0.0
        return f.remaining_at(now)

    def absorb(self, mb: float, now: float) -> bool:
        """Take ``mb`` into the cache if it fits; False: the writer goes to the disk."""
        host = self.host
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
        f = self.flusher
        if f is not None and f.active:
            self.engine.cancel(f)
        self.flusher = None
