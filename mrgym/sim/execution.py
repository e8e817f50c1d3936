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
  the cores are shared in proportion to demand (ILA Fig. 1).  Below the cores, memory
  contention slows a phase beside memory-heavy co-runners (cpu.py; off with membw_alpha
  0): its memory class then has a clock of its own.

With Dom0 as its own pool (``dom0_cores`` > 0, cpu.py) a flow of a virtualized host also
crosses its Dom0's link, and with ``credit_coupling`` > 0 a flow's factor carries the
credit scheduler's delay of its end hosts (``recouple`` re-binds it on the same clock when
that changes).

Rates are recomputed only when the set of consumers of a resource changes, and only for
the consumers of that resource.  Flows limited by the same link share its virtual clock
(topology.Clock, one per flow class): a share change re-times the clock once, and only
flows whose bottleneck moves are re-bound, so the work per change scales with bottleneck
switches, not with flows (issue "Speed").  The compute phases on a host share one clock
likewise (cpu.py).  Completions are kept in one heap of clocks, each clock with a heap of
its works, with lazy invalidation and a single pending SimPy timeout for the earliest one:
no polling.

Exactness: a work's remaining MB or core-seconds is (its finish reading - the clock's
reading) x its clock factor rather than a running sum over its rate changes, so times
differ from the per-work model in the last bits, and completions that fall on the same
instant may be taken in another order (tests/golden_cases.py records this model's results).
"""

from __future__ import annotations

import heapq
import math

import simpy

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Clock, Host, Link
from mrgym.sim.work import Work

EPS = 1e-9
INF = math.inf
# Flows whose disk traffic the page cache's elevator merges into one stream (writeback.py).
WRITE_TAGS = frozenset({"write", "writeback"})


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
        self.dom0_own = params.dom0_cores > 0.0
        self.coupling = params.credit_coupling
        self.membw = params.membw_alpha > 0.0

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
        if dom0_hosts and self.dom0_own:  # Dom0's CPU is a link on the path (cpu.py)
            links = links + tuple(h.cpu.dom0_link for h in dom0_hosts if h.cpu.dom0_link)
        w = Work("flow", mb, self.env.event(), factor)
        w.tag = tag
        w.write = tag in WRITE_TAGS
        w.links = links
        # the clocks of its class on its links: one of them limits it
        w.clks = (
            tuple(link.clk_w for link in links) if w.write else tuple(link.clk for link in links)
        )
        w.dom0_hosts = dom0_hosts
        if mb <= EPS or not links:
            w.remaining = 0.0
            w.event.succeed(w)
            return w
        self._add_flow(w)
        self._arm()
        return w

    def compute(self, vm, core_s: float, factor: float = 1.0, profile=None) -> Work:
        """Burn ``core_s`` reference core-seconds on ``vm``'s host; ``profile`` (a
        JobProfile) gives its memory pressure and sensitivity (cpu.py)."""
        w = Work("compute", core_s, self.env.event(), factor)
        w.vm = vm
        if self.membw:  # its memory character (cpu.py); none without a profile
            w.mp = profile.mem_pressure if profile is not None else 0.0
            w.ms = profile.mem_sensitivity if profile is not None else 0.0
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
        writes = w.write
        for link in w.links:
            link.flows[w] = None
            if writes:
                link.n_writes += 1
        if self.coupling and w.dom0_hosts:
            self._couple(w)
        self._refresh_links(w.links, now, w)
        for h in w.dom0_hosts:
            h.cpu.add_io_stream(1, now)

    def _add_compute(self, w: Work) -> None:
        now = self.env.now
        w.active = True
        pool = w.host.cpu
        pool.works[w] = None
        pool.add_vm_work(w.vm)
        pool.recompute(now)  # the clock runs at its new rate from now
        self._bind_phase(w, pool, pool.share[w.vm.id], w.remaining, now)

    # -- stopping work -------------------------------------------------------------------
    def _detach(self, w: Work) -> None:
        """Take ``w`` off its resources and re-share them among the others."""
        now = self.env.now
        if w.clk is not None:
            w.remaining = self._unbind(w, now)
        else:  # a stalled compute phase (cpu.py): its remaining is current
            w.host.cpu.stalled.pop(w, None)
        w.active = False
        if w.kind == "flow":
            writes = w.write
            for link in w.links:
                del link.flows[w]
                if writes:
                    link.n_writes -= 1
            self._refresh_links(w.links, now)
            for h in w.dom0_hosts:
                h.cpu.add_io_stream(-1, now)
            if self.coupling:
                for h in w.dom0_hosts:
                    h.cpu.io_flows.pop(w, None)
        else:
            pool = w.host.cpu
            del pool.works[w]
            pool.remove_vm_work(w.vm)
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
        if w.active or w.event.triggered:
            return
        if w.remaining <= EPS:  # suspended at the instant it finished: it is done
            w.remaining = 0.0
            w.event.succeed(w)
            return
        if w.kind == "flow":
            self._add_flow(w)
        else:
            self._add_compute(w)
        self._arm()

    def extend(self, w: Work, mb: float) -> None:
        """Add ``mb`` to a running flow (the page-cache flusher): its rate is unchanged,
        so its heap entry is only found late and moved (lazy heap, see ``_arm``)."""
        w.total += mb
        c = w.clk
        if c is not None:  # a later finish: a new entry in its clock's heap
            w.vfin += mb / w.cf
            self._seq += 1
            w.vseq = self._seq
            heapq.heappush(c.heap, (w.vfin, self._seq, w))
            return
        w.remaining += mb  # suspended: nothing runs

    def shrink(self, w: Work, mb: float) -> None:
        """Take ``mb`` off a running flow (a killed writer's unsent data leaves the
        flusher); a flow left with nothing is cancelled."""
        now = self.env.now
        rem = w.remaining_at(now) - mb
        if rem <= EPS:
            self.cancel(w)
            return
        w.total -= mb
        c = w.clk
        if c is not None:  # an earlier finish: a new entry, and maybe the clock's
            w.vfin -= mb / w.cf
            self._seq += 1
            w.vseq = self._seq
            heapq.heappush(c.heap, (w.vfin, self._seq, w))
            self._reschedule(c)
            self._arm()
            return
        w.remaining = rem  # suspended: nothing runs

    # -- rates ---------------------------------------------------------------------------
    def _refresh_links(self, links: tuple[Link, ...], now: float, new: Work | None = None) -> None:
        """Re-share ``links`` after their flow count changed (exact bottleneck fair share).

        A flow is bound to the clock of its bottleneck link (its class's clock on a disk or
        a NIC) and moves at that clock's rate times its factor.  A share change re-times the
        link's clock once; only flows whose bottleneck moves are re-bound: when a share
        falls, the flows on the link limited elsewhere at a higher rate; when it rises, the
        flows bound to it whose other links now limit them more.  Flows limited elsewhere
        keep their binding without a computation.

        One function on purpose: it runs at every flow's start and end, and split into its
        three steps (re-time, find moves, re-bind) it cost 0.5-0.8 % more instructions."""
        changed = []
        for link in links:
            old, old_w = link.cur, link.cur_w
            s, sw = link.shares()
            link.cur, link.cur_w = s, sw
            c, cw = link.clk, link.clk_w
            if c is cw:  # no host: one class
                if s != old:
                    self._retime(c, s, now)
                    changed.append((link, c, s > old, None))
                continue
            if s != old:
                self._retime(c, s, now)
                changed.append((link, c, s > old, False))
            if sw != old_w:
                self._retime(cw, sw, now)
                changed.append((link, cw, sw > old_w, True))
        moves: dict[Work, Clock | None] = {}
        get = moves.get
        for link, c, rose, cls in changed:
            if rose:  # flows limited here may now be limited elsewhere (not on one link)
                for f in c.bound:
                    if len(f.clks) > 1:
                        moves[f] = None
                continue
            # every flow of the link bound to one of its clocks (``new`` has none yet):
            # none is limited elsewhere, and the scan below would find nothing
            here = len(link.clk.bound)
            if link.clk_w is not link.clk:
                here += len(link.clk_w.bound)
            if len(link.flows) - here <= (new is not None and new in link.flows):
                continue
            # the flows limited elsewhere at more than the new share (flows bound here
            # run at exactly ``s``, and ``new`` has no clock yet)
            s = c.rate
            for f in link.flows:
                b = f.clk
                if b is None or b.rate <= s or (cls is not None and f.write is not cls):
                    continue
                b = get(f, b)
                if b is not None and b.rate > s:  # None: a full recomputation is due
                    moves[f] = c
        if new is not None:
            moves[new] = None
        n = 0
        for f, c in moves.items():
            if c is None:  # the bottleneck over all its links; ties keep the binding
                cur = f.clk
                r = cur.rate if cur is not None else INF
                for k in f.clks:
                    if k.rate < r:
                        r, c = k.rate, k
                if c is None:
                    if cur is not None:
                        continue
                    c = f.clks[0]  # every share infinite
            if f.clk is c:
                continue
            rem = f.remaining if f is new else self._unbind(f, now)
            self._bind(f, c, rem, now)
            n += 1
        for _link, c, rose, _cls in changed:
            if rose and c.bound:
                self._reschedule(c)
        self.n_rate_updates += n

    def _retime(self, c: Clock, rate: float, now: float) -> None:
        """Set a clock's rate from ``now`` on: every flow bound to it follows."""
        if c.bound:
            c.v += c.rate * (now - c.t)
        else:
            c.v = 0.0
        c.t = now
        c.rate = rate
        self.n_rate_updates += 1

    def _bind(self, f: Work, c: Clock, rem: float, now: float) -> None:
        """Bind flow ``f`` with ``rem`` MB left to clock ``c``."""
        v = c.v + c.rate * (now - c.t)
        f.clk = c
        c.bound[f] = None
        vfin = v + rem / f.cf
        f.vfin = vfin
        self._seq += 1
        f.vseq = self._seq
        heapq.heappush(c.heap, (vfin, self._seq, f))
        rate = c.rate
        if rate > 0.0:
            t = now + rem / (rate * f.cf)
            if t < c.due:  # finishes before the clock's entry says (lazy heap)
                c.due = t
                self._seq += 1
                heapq.heappush(self._heap, (t, self._seq, c))

    def _unbind(self, f: Work, now: float) -> float:
        """Take work ``f`` off its clock; returns the MB (core-seconds) it has left."""
        c = f.clk
        rem = (f.vfin - c.v - c.rate * (now - c.t)) * f.cf
        del c.bound[f]
        if not c.bound:
            c.heap.clear()  # every entry left is stale
        f.clk = None
        return rem if rem > 0.0 else 0.0

    def _clock_due(self, c: Clock) -> float:
        """When the clock's first bound flow finishes (stale heap entries dropped)."""
        h = c.heap
        while h:
            vfin, seq, f = h[0]
            if f.clk is not c or f.vseq != seq:
                heapq.heappop(h)
                continue
            return c.t + (vfin - c.v) / c.rate if c.rate > 0.0 else INF
        return INF

    def _reschedule(self, c: Clock) -> None:
        """Give the clock an earlier completion entry if its first flow now finishes
        before its live entry says (a share rose, a flow was bound or shrunk)."""
        t = self._clock_due(c)
        if t < c.due:
            c.due = t
            self._seq += 1
            heapq.heappush(self._heap, (t, self._seq, c))

    def _couple(self, w: Work) -> None:
        """Register a starting flow with its virtualized end hosts and give it the credit
        scheduler's factor (cpu.py): it must be set before the flow is bound."""
        excess = 0.0
        for h in w.dom0_hosts:
            pool = h.cpu
            if pool.coupled:
                pool.io_flows[w] = None
                excess += pool.excess
        w.cf = w.factor / (1.0 + self.coupling * excess)

    def recouple(self, pool, now: float) -> None:
        """The runnable demand's excess of ``pool`` changed: re-factor the I/O flows
        through its host (each keeps its clock; its finish moves)."""
        k = self.coupling
        for f in pool.io_flows:
            excess = 0.0
            for h in f.dom0_hosts:
                excess += h.cpu.excess
            cf = f.factor / (1.0 + k * excess)
            if cf == f.cf:
                continue
            c = f.clk
            if c is None:  # not bound yet (_add_flow binds it with this factor)
                f.cf = cf
                continue
            rem = self._unbind(f, now)
            f.cf = cf
            self._bind(f, c, rem, now)
            self.n_rate_updates += 1

    def set_pool_rate(self, pool, rate: float, moved: set | None, now: float) -> None:
        """Set a CpuPool's clock rate (``CpuPool.recompute``) and re-bind the phases of the
        VMs in ``moved``, whose share of a core changed."""
        c = pool.clock
        rose = rate > c.rate
        if rate != c.rate:
            self._retime(c, rate, now)
        if pool.membw and (pool.mem_total, rate) != pool.mem_seen:
            pool.mem_seen = (pool.mem_total, rate)
            self._retime_classes(pool, now)
        if moved:
            share, stalled = pool.share, pool.stalled
            for w in pool.works:
                if w.vm.id not in moved:
                    continue
                if w.clk is not None:
                    rem = self._unbind(w, now)
                elif w in stalled:
                    del stalled[w]
                    rem = w.remaining
                else:
                    continue  # the phase being added: _add_compute binds it
                self._bind_phase(w, pool, share[w.vm.id], rem, now)
        if rose and c.bound:
            self._reschedule(c)

    def _retime_classes(self, pool, now: float) -> None:
        """Re-time the clocks of the pool's memory classes that have phases (cpu.py)."""
        for key, k in pool.classes.items():
            if not k.bound:
                continue  # stale until a phase binds to it (CpuPool.clock_of)
            r = pool.class_rate(key)
            if r != k.rate:
                rose = r > k.rate
                self._retime(k, r, now)
                if rose:
                    self._reschedule(k)

    def _bind_phase(self, w: Work, pool, share: float, rem: float, now: float) -> None:
        """Bind compute phase ``w`` with ``rem`` core-seconds left to its pool's clock; a
        share of 0 (a cap of 0 cores) or a factor of 0 stalls it unbound instead."""
        cf = w.factor * share
        if cf > 0.0:
            w.cf = cf
            self._bind(w, pool.clock_of(w, share) if pool.membw else pool.clock, rem, now)
        else:
            w.remaining = rem
            pool.stalled[w] = None

    # -- completion events ---------------------------------------------------------------
    def _arm(self) -> None:
        heap = self._heap
        while heap:
            t, _, c = heap[0]
            if t != c.due:
                heapq.heappop(heap)  # superseded by an earlier entry
                continue
            f = self._clock_due(c)
            if f > t + EPS:  # slowed down since: move its entry to the true finish
                c.due = f
                if f < INF:
                    self._seq += 1
                    heapq.heapreplace(heap, (f, self._seq, c))
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
            t, _, c = heapq.heappop(heap)
            if t != c.due:
                continue  # superseded by an earlier entry
            f = self._clock_due(c)
            if f > now + EPS:  # slowed down since: its entry moves to the true finish
                c.due = f
                if f < INF:
                    self._seq += 1
                    heapq.heappush(heap, (f, self._seq, c))
                continue
            w = heapq.heappop(c.heap)[2]  # its first work (_clock_due dropped stale ones)
            c.due = INF
            self._detach(w)
            w.remaining = 0.0
            w.event.succeed(w)
            # the clock's next work: the detach's re-share may have bound a work to it
            # (setting c.due to that work's finish) without looking at the others
            self._reschedule(c)
        self._arm()

    def kick(self) -> None:
        """Make sure the earliest completion has a wake-up (call after starting work)."""
        self._arm()
