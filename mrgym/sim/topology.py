"""Sites, racks, physical hosts, VMs, the instance catalog, links and distances.

The cluster is a tree: sites -> racks -> hosts -> VMs.  A VM is a Hadoop worker
(TaskTracker, optionally a DataNode) with map and reduce slots; a native host runs one
worker directly.  Every resource a byte crosses is a :class:`Link` (a host's disk, NIC
up/down, a rack's uplink up/down, a site's WAN up/down), so a transfer is a path of links
and the fluid model (``execution.py``) shares each link among the flows on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

INF = math.inf

MBIT = 1.0 / 8.0  # MB/s per Mbit/s


@dataclass(frozen=True)
class InstanceType:
    """One row of the instance catalog."""

    name: str
    cores: float  # physical cores available to guest workers
    core_speed: float  # compute units per core (1.0 = the reference core of the profiles)
    disk_mbps: float  # one physical disk, sequential MB/s with a single stream
    nic_gbps: float
    gpus: int = 0
    price_per_hour: float = 0.0
    spot: bool = False
    virtualized: bool = True
    power_idle_w: float = 100.0
    power_max_w: float = 250.0


# Sources: ILA §5.1 (12-core Xen servers, 10 cores for the 6 guest VMs, one shared disk,
# 1 Gbit/s); HybridMR §IV (dual 2.4 GHz Opteron, SCSI disk, 1 Gbit/s); PNA §III (16-core
# Palmetto nodes); Lee Table 4.1 (EC2 June 2011; core_speed = CU / cores, relative to an
# EC2 compute unit; disk and NIC from the "I/O" column: moderate 0.25, high 1, very high
# 10 Gbit/s).  Power figures are typical 2011 server numbers (idle ~50 % of peak).
CATALOG: dict[str, InstanceType] = {
    t.name: t
    for t in [
        InstanceType(
            "xen-12core", 10, 1.0, 100, 1.0, price_per_hour=0.68, power_idle_w=150, power_max_w=300
        ),
        InstanceType(
            "opteron-2core", 2, 1.0, 80, 1.0, price_per_hour=0.17, power_idle_w=110, power_max_w=220
        ),
        InstanceType(
            "palmetto-16core",
            16,
            1.0,
            120,
            10.0,
            price_per_hour=1.0,
            power_idle_w=180,
            power_max_w=380,
        ),
        InstanceType(
            "generic-4core",
            4,
            1.0,
            100,
            1.0,
            price_per_hour=0.34,
            power_idle_w=100,
            power_max_w=220,
        ),
        InstanceType(
            "m1.small", 1, 1.0, 60, 0.25, price_per_hour=0.085, power_idle_w=40, power_max_w=80
        ),
        InstanceType(
            "m1.large", 2, 2.0, 100, 1.0, price_per_hour=0.34, power_idle_w=70, power_max_w=140
        ),
        InstanceType(
            "m1.xlarge", 4, 2.0, 100, 1.0, price_per_hour=0.68, power_idle_w=110, power_max_w=220
        ),
        InstanceType(
            "m2.xlarge", 2, 3.25, 80, 0.25, price_per_hour=0.50, power_idle_w=70, power_max_w=140
        ),
        InstanceType(
            "m2.2xlarge", 4, 3.25, 100, 1.0, price_per_hour=1.00, power_idle_w=110, power_max_w=220
        ),
        InstanceType(
            "m2.4xlarge", 8, 3.25, 100, 1.0, price_per_hour=2.00, power_idle_w=180, power_max_w=360
        ),
        InstanceType(
            "c1.medium", 2, 2.5, 80, 0.25, price_per_hour=0.17, power_idle_w=70, power_max_w=140
        ),
        InstanceType(
            "c1.xlarge", 8, 2.5, 100, 1.0, price_per_hour=0.68, power_idle_w=180, power_max_w=360
        ),
        InstanceType(
            "cc1.4xlarge",
            8,
            4.1875,
            120,
            10.0,
            price_per_hour=1.60,
            power_idle_w=200,
            power_max_w=400,
        ),
        InstanceType(
            "cg1.4xlarge",
            8,
            4.1875,
            120,
            10.0,
            gpus=2,
            price_per_hour=2.10,
            power_idle_w=260,
            power_max_w=900,
        ),
    ]
}


class PathCache(dict):
    """Paths by (source host id, destination host id).  A live migration clears it
    (migration.py); ``generation`` counts the clears, so a part that keys its own state
    on where VMs are (the shuffle's source groups, attempts.py) knows to rebuild it."""

    generation = 0

    def clear(self) -> None:
        self.generation += 1
        super().clear()


class Clock:
    """A link's virtual clock for one class of its flows (a disk has one for its reads
    and one for its writes, a network link one for all).

    ``v`` is the MB a flow limited here (factor 1) has moved since the clock's start: it
    grows at ``rate``, the class's fair share.  A flow *bound* here (its bottleneck is this
    link) finishes when ``v`` reaches its ``vfin``, so a share change re-times the clock
    once instead of re-rating every flow it limits (issue "Speed": per-link virtual
    clocks).  The fluid engine (execution.py) keeps all of it."""

    __slots__ = ("rate", "v", "t", "bound", "heap", "due")

    def __init__(self) -> None:
        self.rate = 0.0
        self.v = 0.0  # virtual MB at time t
        self.t = 0.0
        self.bound: dict = {}  # flows limited here -> None (insertion order: determinism)
        self.heap: list = []  # (vfin, seq, flow) of bound flows; stale entries are skipped
        self.due = INF  # time of the clock's live entry in the engine's completion heap


class Link:
    """A shared resource crossed by flows: a disk, a NIC direction, an uplink.

    ``capacity`` is in MB/s.  For a disk the aggregate throughput degrades with the number
    of concurrent streams (``thrash``); for a network link ``background`` is the fraction
    of capacity used by traffic outside the simulated cluster.
    """

    __slots__ = (
        "name",
        "capacity",
        "thrash",
        "floor",
        "background",
        "flows",
        "n_writes",
        "host",
        "cur",
        "cur_w",
        "clk",
        "clk_w",
    )

    def __init__(
        self,
        name: str,
        capacity: float,
        thrash: float = 0.0,
        background: float = 0.0,
        host=None,
        floor: float = 0.0,
    ):
        self.name = name
        self.capacity = capacity
        self.thrash = thrash
        self.floor = floor
        self.background = background
        self.flows: dict = {}  # Flow -> None, insertion-ordered for determinism
        self.n_writes = 0  # flows among them that are writes (merged by the page cache)
        self.host = host  # the Host whose disk this is (None for network links)
        self.cur = 0.0  # a read flow's share now (kept by the fluid engine)
        self.cur_w = 0.0  # a write flow's share now (differs on disks only)
        # the virtual clocks of its read and write flows: one on a link without a host,
        # where both classes get the same share
        self.clk = Clock()
        self.clk_w = Clock() if host is not None else self.clk

    def attach(self, host) -> None:
        """Make ``host`` this link's host (a NIC): its writes then share like a disk's.
        Only while building: the write class gets a clock of its own, which flows that
        already run (bound to the shared one) would not follow."""
        if self.flows or self.cur or self.cur_w:
            raise RuntimeError(f"Link.attach: {self.name} has carried flows; attach while building")
        self.host = host
        if self.clk_w is self.clk:
            self.clk_w = Clock()

    def shares(self) -> tuple[float, float]:
        """Rates (MB/s) each read flow and each write flow on this link get.

        A network link is shared fairly by all its flows.  A disk serves its reads and,
        as *one* more stream, all its writes: the page cache's flusher writes dirty pages
        back in sorted batches (writeback.py), so the writes split one stream's share and
        count once in the seek-thrash term, while every read seeks on its own."""
        n = len(self.flows)
        agg = self.capacity * (1.0 - self.background)
        if n == 0:
            return agg, agg
        if self.host is None:
            return agg / n, agg / n
        w = self.n_writes
        k = n - w + (1 if w else 0)  # seeking streams
        if self.thrash and k > 1:
            agg *= self.floor + (1.0 - self.floor) * math.exp(-self.thrash * (k - 1))
        per = agg / k
        return per, (per / w if w else per)

    def __repr__(self) -> str:
        return f"Link({self.name})"


@dataclass(eq=False)
class Site:
    id: int
    name: str
    wan_up: Link | None = None
    wan_down: Link | None = None
    racks: list[Rack] = field(default_factory=list)


@dataclass(eq=False)
class Rack:
    id: int
    name: str
    site: Site
    uplink_up: Link
    uplink_down: Link
    hosts: list[Host] = field(default_factory=list)


@dataclass(eq=False)
class Host:
    """A physical server (or a cloud instance treated as one)."""

    id: int
    name: str
    type: InstanceType
    rack: Rack
    pool: str  # "core", "accelerator", "spot", ...
    virtualized: bool
    disk: Link
    nic_up: Link
    nic_down: Link
    vms: list[VM] = field(default_factory=list)
    alive: bool = True
    evicting: bool = False  # spot notice received: no new tasks
    gone: bool = False  # evicted: the instance never comes back (a repair cannot undo it)
    # Filled by cpu.CpuPool
    cpu: object = None
    # Accounting
    up_since: float = 0.0
    up_seconds: float = 0.0

    @property
    def gpus(self) -> int:
        return self.type.gpus

    @property
    def is_spot(self) -> bool:
        """A spot instance: evictable, billed at the spot price (the one spot test)."""
        return self.type.spot or self.pool == "spot"


@dataclass(eq=False)
class VM:
    """A Hadoop worker: TaskTracker slots, and a DataNode when ``datanode``."""

    id: int
    name: str
    host: Host
    vcpus: float
    map_slots: int
    reduce_slots: int
    datanode: bool
    hb_offset: float = 0.0
    memory_gb: float = 2.0  # its page cache takes the worker's writes (writeback.py)
    # memory its balloon driver holds (HybridMR phase II's memory management; negative:
    # granted above memory_gb, up to the guest's maxmem): only with guest_page_cache on
    balloon_gb: float = 0.0
    interactive: object = None  # InteractiveApp for HybridMR's transactional VMs
    # Mutable state kept by the cluster
    free_map: int = 0
    free_reduce: int = 0
    running: dict = field(default_factory=dict)  # Attempt -> None
    alive: bool = True
    paused: bool = False
    cpu_cap: float | None = None  # control(): throttle the VM's vCPUs

    @property
    def rack(self) -> Rack:
        return self.host.rack

    @property
    def pool(self) -> str:
        return self.host.pool

    @property
    def is_worker(self) -> bool:
        return self.map_slots + self.reduce_slots > 0

    def __repr__(self) -> str:
        return f"VM({self.name})"


class Topology:
    """The built cluster: lookups, distances (hops) and paths between hosts."""

    def __init__(
        self,
        sites: list[Site],
        racks: list[Rack],
        hosts: list[Host],
        vms: list[VM],
        rack_hops: list[list[int]] | None = None,
    ):
        self.sites = sites
        self.racks = racks
        self.hosts = hosts
        self.vms = vms
        self.workers = [v for v in vms if v.is_worker]
        self.datanodes = [v for v in vms if v.datanode]
        self.rack_hops = rack_hops  # optional override of rack-to-rack hop counts
        self._path_cache: PathCache = PathCache()

    # -- distances ---------------------------------------------------------------------
    def hops(self, a: VM, b: VM) -> int:
        """Hops between two VMs: 0 same VM, 1 co-hosted (hypervisor bridge), 2 same rack,
        4 across racks, 6 across sites, or the scenario's rack-to-rack override."""
        if a is b:
            return 0
        if a.host is b.host:
            return 1
        ra, rb = a.host.rack, b.host.rack
        if ra is rb:
            return 2
        if self.rack_hops is not None:
            return self.rack_hops[ra.id][rb.id]
        return 4 if ra.site is rb.site else 6

    def path(self, src: Host, dst: Host) -> tuple[Link, ...]:
        """Network links from ``src`` to ``dst`` (empty for the same host)."""
        key = (src.id, dst.id)
        p = self._path_cache.get(key)
        if p is None:
            p = self._make_path(src, dst)
            self._path_cache[key] = p
        return p

    def _make_path(self, src: Host, dst: Host) -> tuple[Link, ...]:
        if src is dst:
            return ()
        links = [src.nic_up]
        if src.rack is not dst.rack:
            links.append(src.rack.uplink_up)
            if src.rack.site is not dst.rack.site:
                links += [src.rack.site.wan_up, dst.rack.site.wan_down]
            links.append(dst.rack.uplink_down)
        links.append(dst.nic_down)
        return tuple(link for link in links if link is not None)

    def path_bandwidth(self, src: Host, dst: Host) -> float:
        """Available MB/s a new flow from ``src`` to ``dst`` would get now (PNA §II-B.3
        replaces hops by the inverse of this)."""
        p = self.path(src, dst)
        if not p:
            return src.disk.capacity
        return min(link.capacity * (1.0 - link.background) / (len(link.flows) + 1) for link in p)
