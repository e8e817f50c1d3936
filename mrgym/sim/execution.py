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
  :class:`~mrgym.sim.cpu.CpuPool` (cpu.py).  Nobody slows down until the demand of all co-hosted compute phases,
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
        "write",
        "absorbed",
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
        self.write = False  # tag in WRITE_TAGS (kept with the tag by FluidEngine.flow)
        self.absorbed: tuple = ()  # page caches that took this write (writeback.py)

    def remaining_at(self, now: float) -> float:
        if not self.active:
            return self.remaining
        return max(0.0, self.remaining - self.rate * (now - self.t_last))


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
        w.write = tag in WRITE_TAGS
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
        writes = w.write
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
            writes = w.write
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

    def shrink(self, w: Work, mb: float) -> None:
        """Take ``mb`` off a running flow (a killed writer's unsent data leaves the
        flusher); a flow left with nothing is cancelled."""
        now = self.env.now
        rem = w.remaining_at(now) - mb
        if rem <= EPS:
            self.cancel(w)
            return
        w.remaining = rem
        w.total -= mb
        w.t_last = now
        if w.rate > 0.0:
            t = now + rem / w.rate
            if t < w.due:  # finishes earlier: a new heap entry (lazy heap)
                w.due = t
                self._seq += 1
                heapq.heappush(self._heap, (t, self._seq, w))
        self._arm()

    # -- rates ---------------------------------------------------------------------------
    def _refresh_links(self, links: tuple[Link, ...], now: float, new: Work | None = None) -> None:
        """Re-share ``links`` after their flow count changed (exact bottleneck fair share).

        Only flows whose bottleneck can move are re-rated: when a link's share falls, the
        flows on it running faster than the new share; when it rises, the flows it was
        limiting.  Flows limited elsewhere keep their rate without a recomputation.

        When every changed share fell (a flow started), a flow's new bottleneck is the
        smallest fallen share below its old one: its other links were at or above its old
        share, which exceeds that one.  So the minimum is kept while scanning and taken as
        is -- the same float the scan of its links would pick.  After a rise (a flow
        ended) and for ``new``, the minimum over the flow's links is taken as before."""
        affected: dict[Work, float] = {}
        get = affected.get
        rose = False
        for link in links:
            old, old_w = link.cur, link.cur_w
            s, sw = link.shares()
            link.cur, link.cur_w = s, sw
            if s == old and sw == old_w:
                continue
            if s > old or sw > old_w:
                rose = True
            if s != sw or old != old_w:
                # a disk with writes: reads and writes have shares of their own; the same
                # rule as below, per flow with its class's share
                lim, lim_w = old * (1.0 - 1e-12), old_w * (1.0 - 1e-12)
                for f in link.flows:
                    if f.write:
                        if sw < old_w and f.base > sw:
                            if get(f, INF) > sw:
                                affected[f] = sw
                        elif sw > old_w and f.base >= lim_w:
                            affected[f] = INF
                    elif s < old and f.base > s:
                        if get(f, INF) > s:
                            affected[f] = s
                    elif s > old and f.base >= lim:
                        affected[f] = INF
            elif s < old:
                for f in link.flows:
                    if f.base > s and get(f, INF) > s:
                        affected[f] = s
            elif s > old:
                lim = old * (1.0 - 1e-12)
                for f in link.flows:
                    if f.base >= lim:
                        affected[f] = INF
        if new is not None and new not in affected:
            affected[new] = INF
        # set_rate(f, base * factor, now) for each, inlined (the hottest loop of a run):
        # the same operations in the same order, so the results are bit for bit the same
        heap = self._heap
        push = heapq.heappush
        seq = self._seq
        n = 0
        for f, rate in affected.items():
            if rose or f is new:
                rate = INF
                if f.write:
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
            rate = rate * f.factor
            r0 = f.rate
            if rate == r0 and f.version:
                continue
            if r0:
                rem = f.remaining - r0 * (now - f.t_last)
                f.remaining = 0.0 if rem < 0.0 else rem
            f.t_last = now
            f.rate = rate
            f.version += 1
            n += 1
            if rate > 0.0:
                t = now + f.remaining / rate
                if t < f.due:
                    f.due = t
                    seq += 1
                    push(heap, (t, seq, f))
        self._seq = seq
        self.n_rate_updates += n

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
