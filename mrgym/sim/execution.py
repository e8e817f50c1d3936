"""The fluid resource model: the ground truth of how fast every phase runs.

Two kinds of work share resources:

* a :class:`Work` of kind ``flow`` moves MB over a path of :class:`~mrgym.sim.topology.Link`
  (disks and network links).  Its rate is the minimum over its links of the link's share
  (bottleneck fair share); a disk's aggregate throughput also degrades exponentially with
  its number of seeking streams (seek thrash), which yields ILA Fig. 2's exponential I/O
  interference without a lookup table.  On a disk every read is a stream, while all
  writes together are one (the page cache writes dirty pages back in sorted batches,
  writeback.py) and split that stream's share;
* a :class:`Work` of kind ``compute`` burns reference core-seconds on a host's
  :class:`CpuPool`.  Nobody slows down until the demand of all co-hosted compute phases,
  interactive VMs and Dom0 (per active I/O stream) exceeds the host's cores; beyond that
  the cores are shared in proportion to demand (ILA Fig. 1).

Rates are recomputed only when the set of consumers of a resource changes, and only for
the consumers of that resource.  Completions are kept in one heap with lazy invalidation
and a single pending SimPy timeout for the earliest one: no polling.
"""

from __future__ import annotations

import heapq
import math

import simpy

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Host, Link

EPS = 1e-9
INF = math.inf
# Flows whose disk traffic the page cache's elevator merges into one stream (writeback.py).
WRITE_TAGS = frozenset({"write", "writeback"})


class Work:
    """An amount of work (MB or core-seconds) progressing at a rate set by the model."""

    __slots__ = (
        "kind",
        "total",
        "remaining",
        "rate",
        "t_last",
        "version",
        "event",
        "links",
        "base",
        "cores",
        "due",
        "host",
        "vm",
        "factor",
        "active",
        "dom0_hosts",
        "tag",
    )

    def __init__(self, kind: str, total: float, event: simpy.Event, factor: float):
        self.kind = kind
        self.total = total
        self.remaining = total
        self.rate = 0.0
        self.t_last = 0.0
        self.version = 0
        self.event = event
        self.links: tuple[Link, ...] = ()
        self.base = 0.0  # a flow's bottleneck share before its factor
        self.cores = 0.0  # a compute phase's granted cores (what Xentop would show)
        self.due = INF  # time of its live completion-heap entry
        self.host: Host | None = None
        self.vm = None
        self.factor = factor
        self.active = False
        self.dom0_hosts: tuple[Host, ...] = ()
        self.tag = None

    def remaining_at(self, now: float) -> float:
        if not self.active:
            return self.remaining
        return max(0.0, self.remaining - self.rate * (now - self.t_last))


class CpuPool:
    """The cores of one physical host, shared by compute phases, interactive VMs and Dom0."""

    __slots__ = (
        "host",
        "engine",
        "works",
        "vm_count",
        "interactive",
        "io_streams",
        "used",
        "t_energy",
        "energy_j",
        "busy_core_s",
        "params",
        "_demand",
    )

    def __init__(self, host: Host, engine: FluidEngine, params: ModelParams):
        self.host = host
        self.engine = engine
        self.params = params
        self.works: dict[Work, None] = {}
        self.vm_count: dict[int, int] = {}
        self.interactive: list = []  # InteractiveApp objects with .demand and .granted
        self.io_streams = 0
        self.used = 0.0  # cores in use now
        self.t_energy = 0.0
        self.energy_j = 0.0
        self.busy_core_s = 0.0
        self._demand = 0.0

    def dom0_demand(self) -> float:
        return self.io_streams * self.params.dom0_cores_per_stream if self.host.virtualized else 0.0

    def power_w(self, used: float) -> float:
        t = self.host.type
        util = min(1.0, used / t.cores) if t.cores > 0 else 0.0
        return t.power_idle_w + (t.power_max_w - t.power_idle_w) * util

    def account(self, now: float) -> None:
        dt = now - self.t_energy
        if dt > 0 and self.host.alive:
            self.energy_j += self.power_w(self.used) * dt
            self.busy_core_s += self.used * dt
        self.t_energy = now

    def add_io_stream(self, delta: int, now: float) -> None:
        """An I/O stream of this host started (+1) or ended (-1): Dom0's CPU changes.

        While the host's demand stays within its cores before and after, no compute rate
        moves, so only the utilization (for energy) is updated, not every phase."""
        before = self.used
        self.io_streams += delta
        cores = self.host.type.cores
        if before < cores and self.host.virtualized:
            demand = self._demand + self.dom0_demand()
            if demand <= cores:
                self.account(now)
                self.used = demand
                return
        self.recompute(now)

    def recompute(self, now: float) -> None:
        """Share the cores among current consumers and update every compute rate."""
        self.account(now)
        host = self.host
        demands = []
        total = 0.0
        for w in self.works:
            vm = w.vm
            cap = vm.cpu_cap if vm.cpu_cap is not None else vm.vcpus
            d = min(1.0, cap / self.vm_count[vm.id])
            demands.append(d)
            total += d
        inter = 0.0
        for app in self.interactive:
            inter += app.demand
        self._demand = total + inter  # everything but Dom0 (see add_io_stream)
        dom0 = self.dom0_demand()
        demand = total + inter + dom0
        cores = host.type.cores
        scale = 1.0 if demand <= cores else cores / demand
        self.used = min(demand, cores)
        for app in self.interactive:
            app.granted = app.demand * scale
        n = len(demands)
        pen = (1.0 - self.params.corunner_penalty) ** (n - 1) if n > 1 else 1.0
        speed = host.type.core_speed * scale * pen
        engine = self.engine
        for w, d in zip(self.works, demands):
            w.cores = d * scale
            engine.set_rate(w, d * speed * w.factor, now)


class FluidEngine:
    """Owns every running :class:`Work` and turns rates into completion events."""

    def __init__(self, env: simpy.Environment, params: ModelParams):
        self.env = env
        self.params = params
        self._heap: list = []
        self._seq = 0
        self._token = 0
        self._wake_at = INF
        self.n_rate_updates = 0

    # -- starting work -------------------------------------------------------------------
    def flow(
        self,
        links: tuple[Link, ...],
        mb: float,
        factor: float = 1.0,
        dom0_hosts: tuple[Host, ...] = (),
        tag: str = "read",
    ) -> Work:
        """Move ``mb`` over ``links`` (a disk read is the path ``(disk,)``).  ``tag`` says
        what the flow is for monitoring: read, write or shuffle."""
        w = Work("flow", mb, self.env.event(), factor)
        w.tag = tag
        w.links = links
        w.dom0_hosts = dom0_hosts
        if mb <= EPS or not links:
            w.remaining = 0.0
            w.event.succeed(w)
            return w
        self._add_flow(w)
        self._arm()
        return w

    def compute(self, vm, core_s: float, factor: float = 1.0) -> Work:
        """Burn ``core_s`` reference core-seconds on ``vm``'s host."""
        w = Work("compute", core_s, self.env.event(), factor)
        w.vm = vm
        w.host = vm.host
        if core_s <= EPS:
            w.remaining = 0.0
            w.event.succeed(w)
            return w
        self._add_compute(w)
        self._arm()
        return w

    def _add_flow(self, w: Work) -> None:
        now = self.env.now
        w.active = True
        w.t_last = now
        writes = w.tag in WRITE_TAGS
        for link in w.links:
            link.flows[w] = None
            if writes:
                link.n_writes += 1
        self._refresh_links(w.links, now, w)
        for h in w.dom0_hosts:
            h.cpu.add_io_stream(1, now)

    def _add_compute(self, w: Work) -> None:
        now = self.env.now
        w.active = True
        w.t_last = now
        pool = w.host.cpu
        pool.works[w] = None
        pool.vm_count[w.vm.id] = pool.vm_count.get(w.vm.id, 0) + 1
        pool.recompute(now)

    # -- stopping work -------------------------------------------------------------------
    def _detach(self, w: Work) -> None:
        """Take ``w`` off its resources and re-share them among the others."""
        now = self.env.now
        w.remaining = w.remaining_at(now)
        w.t_last = now
        w.active = False
        w.version += 1
        w.rate = 0.0
        w.due = INF
        if w.kind == "flow":
            writes = w.tag in WRITE_TAGS
            for link in w.links:
                del link.flows[w]
                if writes:
                    link.n_writes -= 1
            self._refresh_links(w.links, now)
            for h in w.dom0_hosts:
                h.cpu.add_io_stream(-1, now)
        else:
            pool = w.host.cpu
            del pool.works[w]
            c = pool.vm_count[w.vm.id] - 1
            if c:
                pool.vm_count[w.vm.id] = c
            else:
                del pool.vm_count[w.vm.id]
            pool.recompute(now)

    def cancel(self, w: Work) -> None:
        """Abort ``w`` (a killed attempt); its event never fires."""
        if w.active:
            self._detach(w)
        self._arm()

    def suspend(self, w: Work) -> None:
        """Pause ``w`` keeping its progress (HybridMR phase II pause)."""
        if w.active:
            self._detach(w)
            self._arm()

    def resume(self, w: Work) -> None:
        if not w.active and not w.event.triggered and w.remaining > EPS:
            if w.kind == "flow":
                self._add_flow(w)
            else:
                self._add_compute(w)
            self._arm()

    def extend(self, w: Work, mb: float) -> None:
        """Add ``mb`` to a running flow (the page-cache flusher): its rate is unchanged,
        so its heap entry is only found late and moved (lazy heap, see ``_arm``)."""
        now = self.env.now
        w.remaining = w.remaining_at(now) + mb
        w.total += mb
        w.t_last = now

    # -- rates ---------------------------------------------------------------------------
    def _refresh_links(self, links: tuple[Link, ...], now: float, new: Work | None = None) -> None:
        """Re-share ``links`` after their flow count changed (exact bottleneck fair share).

        Only flows whose bottleneck can move are re-rated: when a link's share falls, the
        flows on it running faster than the new share; when it rises, the flows it was
        limiting.  Flows limited elsewhere keep their rate without a recomputation."""
        affected: dict[Work, None] = {}
        for link in links:
            old, old_w = link.cur, link.cur_w
            s, sw = link.shares()
            link.cur, link.cur_w = s, sw
            if s == old and sw == old_w:
                continue
            if s != sw or old != old_w:
                # a disk with writes: reads and writes have shares of their own; the same
                # rule as below, per flow with its class's share
                lim, lim_w = old * (1.0 - 1e-12), old_w * (1.0 - 1e-12)
                for f in link.flows:
                    if f.tag in WRITE_TAGS:
                        if (sw < old_w and f.base > sw) or (sw > old_w and f.base >= lim_w):
                            affected[f] = None
                    elif (s < old and f.base > s) or (s > old and f.base >= lim):
                        affected[f] = None
            elif s < old:
                for f in link.flows:
                    if f.base > s:
                        affected[f] = None
            elif s > old:
                lim = old * (1.0 - 1e-12)
                for f in link.flows:
                    if f.base >= lim:
                        affected[f] = None
        if new is not None:
            affected[new] = None
        set_rate = self.set_rate
        for f in affected:
            rate = INF
            if f.tag in WRITE_TAGS:
                for link in f.links:
                    c = link.cur_w
                    if c < rate:
                        rate = c
            else:
                for link in f.links:
                    c = link.cur
                    if c < rate:
                        rate = c
            f.base = rate
            set_rate(f, rate * f.factor, now)

    def set_rate(self, w: Work, rate: float, now: float) -> None:
        if rate == w.rate and w.version:
            return
        if w.rate:
            w.remaining -= w.rate * (now - w.t_last)
            if w.remaining < 0.0:
                w.remaining = 0.0
        w.t_last = now
        w.rate = rate
        w.version += 1
        self.n_rate_updates += 1
        if rate > 0.0:
            t = now + w.remaining / rate
            # Lazy heap: a new entry only when the work now finishes earlier than its entry
            # says; a later finish is found when the early entry reaches the top.
            if t < w.due:
                w.due = t
                self._seq += 1
                heapq.heappush(self._heap, (t, self._seq, w))

    def _true_due(self, w: Work) -> float:
        return w.t_last + w.remaining / w.rate if w.rate > 0.0 else INF

    # -- completion events ---------------------------------------------------------------
    def _arm(self) -> None:
        heap = self._heap
        while heap:
            t, _, w = heap[0]
            if not w.active or t != w.due:
                heapq.heappop(heap)  # superseded by an earlier entry, or finished
                continue
            f = self._true_due(w)
            if f > t + EPS:  # slowed down since: move its entry to the true finish
                w.due = f
                if f < INF:
                    self._seq += 1
                    heapq.heapreplace(heap, (f, self._seq, w))
                else:
                    heapq.heappop(heap)
                continue
            if t < self._wake_at - EPS:
                self._wake_at = t
                self._token += 1
                ev = self.env.timeout(max(0.0, t - self.env.now))
                token = self._token
                ev.callbacks.append(lambda _ev, token=token: self._fire(token))
            return

    def _fire(self, token: int) -> None:
        if token != self._token:
            return  # superseded by an earlier wake-up
        self._wake_at = INF
        now = self.env.now
        heap = self._heap
        while heap and heap[0][0] <= now + EPS:
            t, _, w = heapq.heappop(heap)
            if not w.active or t != w.due:
                continue
            f = self._true_due(w)
            if f > now + EPS:
                w.due = f
                if f < INF:
                    self._seq += 1
                    heapq.heappush(heap, (f, self._seq, w))
                continue
            self._detach(w)
            w.remaining = 0.0
            w.event.succeed(w)
        self._arm()

    def kick(self) -> None:
        """Make sure the earliest completion has a wake-up (call after starting work)."""
        self._arm()
