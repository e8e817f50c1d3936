"""What the cluster's monitors see (Xentop/iostat-like VM and host metrics), the fairness
sampler, and the one pricing rule for cost (metrics and rewards share both formulas).

Billing (``dynamics.billing``): ``seconds`` (the default) bills each host's up-time at its
hourly price, pro rata.  ``hourly`` is EC2's rule of 2011 (Lee §4.4.1: a round "takes more
than 2 hours ..., which requires paying charges for 3 hours"): each start of an instance
opens a session, and every instance-hour a session has begun is charged in full (at least
one); a spot instance is charged at the spot price, and a session the provider ends by an
eviction is not charged for its last partial hour (EC2's spot rule of the time; the thesis
is silent).  A session runs from the start (t = 0, or a ``Commission``) to a
``Decommission``, the eviction or the end of the episode; a host failure does not stop the
meter (the instance keeps running while it is repaired).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from mrgym.sim.part import Part
from mrgym.sim.topology import VM, Host

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.jobs import Job
    from mrgym.sim.simulation import Simulation


@dataclass(frozen=True)
class VmMetrics:
    cpu_cores: float  # cores used by the VM's compute phases now
    read_mbps: float
    # its tasks' writes that wait for a disk or the network now; a write the page cache
    # took is the host's flusher's (host_metrics), as iostat would show it
    write_mbps: float
    running_tasks: int
    # the guest's own page cache (guest_page_cache on; 0 off), as the guest's
    # /proc/meminfo "Dirty" and its dirty threshold show them, and the MB its writers wrote
    # to the disk since boot because the cache was full (balance_dirty_pages)
    dirty_mb: float = 0.0
    dirty_limit_mb: float = 0.0
    throttled_mb: float = 0.0


@dataclass(frozen=True)
class HostMetrics:
    vm_cpu_cores: float  # aggregate of all co-hosted VMs (incl. interactive)
    dom0_cpu_cores: float
    cores: float
    disk_util: float  # fraction of the disk's single-stream throughput in use
    disk_streams: int  # flows on the disk (its seeking streams count all writes as one)
    io_mbps: float
    # iostat's %util: whether a request is outstanding on the disk (1) or not (0).  Unlike
    # disk_util it does not fall when seeks thrash the disk: a thrashing disk is busy
    disk_busy: float = 0.0


def price_per_hour(host: Host, spot: Any) -> float:
    """A host's hourly price: its instance type's, spot hosts at the spot price factor."""
    price = host.type.price_per_hour
    if spot is not None and host.is_spot:
        price *= spot.price_factor
    return price


def session_hours(seconds: float, running: bool, evicted: bool) -> int:
    """Instance-hours charged for a session of ``seconds`` under hourly billing:
    every begun hour (at least one; a running session has begun its current hour), but
    not the partial hour of a spot session the provider ended."""
    if evicted:
        return math.floor(seconds / 3600.0 + 1e-9)
    if running:
        return math.floor(seconds / 3600.0 + 1e-9) + 1
    return max(1, math.ceil(seconds / 3600.0 - 1e-9))


def fairness(jobs: Sequence[Job]) -> tuple[float, float] | None:
    """Jain's index of the jobs' running-task shares over their weight shares, and lsap's
    fairness distance (mean of |share - weight share| / weight share), over the jobs
    that have work; None when no task runs.  The metric and the fairness reward use it."""
    busy = [j for j in jobs if j.running_tasks or j.n_pending_maps or j.n_pending_reduces]
    if not busy:
        return None
    run = np.array([j.running_tasks for j in busy], dtype=float)
    tot = run.sum()
    if tot <= 0:
        return None
    w = np.array([j.weight for j in busy], dtype=float)
    s = run / tot
    f = w / w.sum()
    x = s / f
    sq = (x**2).sum()
    jain = float(x.sum() ** 2 / (len(x) * sq)) if sq > 0 else 1.0
    return jain, float(np.mean(np.abs(s - f) / f))


def last_tick_before(t: float, dt: float, until: float) -> float | None:
    """The last time before ``until`` of the float sequence ``t, t + dt, (t + dt) + dt ...``
    (each sum rounded, as SimPy's repeated ``timeout(dt)`` computes it), in O(binades)
    steps instead of one per tick; None if ``dt`` is lost to rounding (the clock would
    stand still).

    Within one binade ``[2^(e-1), 2^e)`` every sum rounds to a multiple of the same ulp, so
    the rounded step is one constant ``d`` until a sum leaves the binade (ties to even
    included: after one step every point is an even multiple and the step is constant)."""
    x = t
    while True:
        nxt = x + dt
        if nxt >= until:
            return x
        if x <= 0.0:
            x = nxt
            continue
        top = Fraction(2) ** math.frexp(x)[1]  # the binade's end (exclusive)
        ulp = Fraction(math.ulp(x))
        ratio = Fraction(dt) / ulp
        fx = Fraction(x)
        if ratio.denominator == 2:
            # every sum ties and rounds to an even multiple of the ulp: from an even
            # multiple on, the step is the even one of floor(ratio) and floor(ratio) + 1
            if (fx / ulp) % 2:
                x = nxt
                continue
            n = math.floor(ratio)
            d = (n + n % 2) * ulp
        else:
            d = round(ratio) * ulp
        if d == 0:
            return None  # a step lost to rounding: SimPy's clock would stand still
        # steps whose exact sum stays inside the binade, and steps that stay before until
        in_binade = math.ceil((top - fx - Fraction(dt)) / d)
        before = math.ceil((Fraction(until) - fx) / d) - 1
        k = min(in_binade, before)
        # k steps at once (exact: a multiple of the binade's ulp, at most its end), or the
        # one step that leaves the binade, rounded as SimPy rounds it
        x = float(fx + k * d) if k >= 1 else nxt


def delay_to(now: float, at: float) -> float | None:
    """The ``timeout`` delay that lands exactly on ``at`` (``now + delay`` rounds), or None
    where no float does: when ``at`` lies in a higher binade than ``now``, ``now``'s finer
    bits can make every sum round past it (ties to even)."""
    delay = at - now
    for _ in range(8):
        landed = now + delay
        if landed == at:
            return delay
        delay = math.nextafter(delay, math.inf if landed < at else -math.inf)
    return None


class Monitor(Part):
    """Samples fairness and SLA; answers the schedulers' monitoring queries."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self.fair_samples: list[tuple[float, float, float]] = []  # (dt, jain, lsap distance)
        # billing sessions per host, [start, end or None while it runs]; every host starts
        # at t = 0 but a standby one (dynamics._draw_standby clears its list)
        self.sessions: dict[int, list[list]] = {h.id: [[0.0, None]] for h in self.topo.hosts}
        self.n_samples = 0  # sampler ticks with a job active or an interactive VM
        self.n_idle_ticks = 0  # sampler ticks with neither (each one sleeps, or ends)
        self.n_idle_skips = 0  # idle stretches slept through in one wait

    def bind(self, tracker, dynamics) -> None:
        self.tracker = tracker
        self.dynamics = dynamics

    def sampler(self):
        """Fairness over time (Jain's index and lsap's distance) and interactive SLA.

        Idle time costs nothing: with no interactive VM, a tick while no job is active
        samples nothing, so the sampler sleeps to the last tick of its grid before the next
        arrival or other event (:func:`last_tick_before`, the very times its ticks would
        have had) and resumes ticking from there."""
        env = self.env
        dt = self.params.sample_s
        tracker = self.tracker
        while True:
            yield env.timeout(dt)
            if not tracker.active and not self.dynamics.apps:
                self.n_idle_ticks += 1
                delay = self._idle_delay(dt)
                if delay is None:
                    return  # no job will ever be active again
                if delay > 0:
                    self.n_idle_skips += 1
                    yield env.timeout(delay)
                continue
            self.n_samples += 1
            jobs = tracker.active_list
            f = fairness(jobs)
            if f is not None:
                self.fair_samples.append((dt, *f))
            for app in self.dynamics.apps:
                if app.vm.host.alive and app.response_s() > app.spec.sla_s:
                    app.violation_s += dt

    def _idle_delay(self, dt: float) -> float | None:
        """The wait from now to the sampler's last grid tick before anything else happens
        (0: none before it; None: no job arrives any more), exact to the bit.

        "Anything else" is the next job arrival and the next event already in SimPy's queue
        (a control period, a failure, a parked process): stopping before it keeps every
        same-time event in the order the tick-by-tick sampler gave them, since nothing runs
        during the wait.  A tick that no float delay reaches exactly (:func:`delay_to`) is
        replaced by the one before it."""
        tracker = self.tracker
        if tracker.n_arrived >= len(tracker.jobs):
            return None
        env = self.env
        now = env.now
        arrival = max(tracker.jobs[tracker.n_arrived].spec.submit_s, now)  # arrivals in order
        target = last_tick_before(now, dt, min(arrival, env.peek()))
        while target is not None and target > now:
            delay = delay_to(now, target)
            if delay is not None:
                return delay
            target = last_tick_before(now, dt, target)  # the tick before it
        return 0.0

    def vm_metrics(self, vm: VM) -> VmMetrics:
        cpu = rd = wr = 0.0
        for att in vm.running:
            for w in ([att.work] if att.work else []) + att.works:
                if w.kind == "compute":
                    cpu += w.cores
                elif w.tag == "write":
                    wr += w.rate_now()
                else:
                    rd += w.rate_now()
        app = self.dynamics.app_of.get(vm.id)
        if app is not None:
            cpu += app.granted
        g = self.caches[vm.host.id].guests
        c = g.get(vm.id) if g else None
        if c is None:
            return VmMetrics(cpu, rd, wr, len(vm.running))
        now = self.env.now
        return VmMetrics(cpu, rd, wr, len(vm.running), c.dirty_mb(now), c.budget_mb, c.throttled_mb)

    def host_metrics(self, host: Host) -> HostMetrics:
        pool = host.cpu
        vm_cpu = 0.0
        for w in pool.works:
            vm_cpu += w.cores
        for app in pool.interactive:
            vm_cpu += app.granted
        disk = host.disk
        io = 0.0
        for f in disk.flows:
            io += f.rate_now()
        return HostMetrics(
            vm_cpu,
            pool.dom0_busy(),
            host.type.cores,
            min(1.0, io / disk.capacity) if disk.capacity else 0.0,
            len(disk.flows),
            io,
            1.0 if disk.flows else 0.0,
        )

    def cost_so_far(self) -> float:
        """Dollars billed so far (the billing rule of the module docstring)."""
        if self.scenario.dynamics.billing == "hourly":
            return sum(self.bill_hourly(final=False).values())
        now = self.env.now
        spot = self.scenario.dynamics.spot
        total = 0.0
        for h in self.topo.hosts:
            up = h.up_seconds + (now - h.up_since if h.alive else 0.0)
            total += price_per_hour(h, spot) * up / 3600.0
        return total

    def final_cost(self) -> float:
        """The episode's bill once it is over (``metrics.cost_usd``): up-time accounted at
        the end, or hourly with every running session stopped now."""
        if self.scenario.dynamics.billing == "hourly":
            return sum(self.bill_hourly(final=True).values())
        spot = self.scenario.dynamics.spot
        cost = 0.0
        for h in self.topo.hosts:
            cost += price_per_hour(h, spot) * h.up_seconds / 3600.0
        return cost

    def bill_hourly(self, final: bool, until: float | None = None) -> dict[int, float]:
        """Dollars per host under hourly billing at ``until`` (default now); ``final``:
        the sessions still running stop then (the episode, or the period, is over)."""
        now = self.env.now if until is None else until
        spot = self.scenario.dynamics.spot
        evict_at = self.dynamics.evict_at
        out = {}
        for h in self.topo.hosts:
            hours = 0
            for start, end in self.sessions[h.id]:
                if start > now:
                    continue
                evicted = False
                if end is None and h.gone:  # the provider ended its last session
                    end, evicted = evict_at[h.id], True
                running = end is None or end > now
                stop = now if running else end
                evicted = evicted and not running
                hours += session_hours(stop - start, running and not final, evicted)
            out[h.id] = price_per_hour(h, spot) * hours
        return out
