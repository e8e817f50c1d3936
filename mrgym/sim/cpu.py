"""The cores of a physical host, shared by compute phases, interactive VMs and Dom0.

Nobody slows down until the demand of all co-hosted compute phases, interactive VMs and
Dom0 (per active I/O stream) exceeds the host's cores; beyond that the cores are shared
in proportion to demand (ILA Fig. 1).

All compute phases on a host follow one virtual clock (topology.Clock, as flows limited by
the same link do), which runs at the host's speed per granted core; a phase moves at that
rate times its share of a core and its factor.  A change re-times the clock once; only the
phases of a VM whose share of a core changed (its phase count or cap passed its vCPUs) are
re-bound (issue "Speed").

Three mechanisms below, at and beside the cores, each on by default at its fitted value and
off at 0 (params.py):

* **Contention below the cores** (Mars et al., Bubble-Up, MICRO 2011; Delimitrou &
  Kozyrakis, Paragon, ASPLOS 2013): co-located phases share the last-level cache and the
  memory bandwidth, so a phase slows before the cores are full.  Each running phase
  presses the memory system with its profile's ``mem_pressure`` per granted core
  (interactive VMs with ``INTERACTIVE_PRESSURE``); a phase's factor is
  1 / (1 + membw_alpha x mem_sensitivity x g(u)), u = the *other* phases' pressure /
  (membw_capacity x cores) and g(u) = u / (1 - min(u, U_MAX)), the M/M/1 queueing delay
  of a memory controller at load u: linear when the memory system is idle, super-linear
  near saturation (Bubble-Up's sensitivity curves are convex in the bubble's pressure), and linear again past
  U_MAX, where bandwidth is shared and no longer queues.  A phase alone is never slowed,
  so the profiles' solo times stay as calibrated.  Memory stalls still occupy the core:
  the granted cores (Xentop) do not change.  The phases of one memory class (profile and
  share of a core) slow alike, so each class has its own clock, running at the pool's rate
  times its factor: a change re-times one clock per class, and re-binds no phase.
* **vCPU overcommit** (Xen's credit scheduler; ``credit_overcommit`` > 0): past the
  cores, a virtualized host's phases run slower than their fair share, by
  1 + credit_overcommit x (demand / cores - 1): 30 ms time slices over more runnable vCPUs
  than cores cost a guest more than its share (lock-holder preemption, cache and TLB
  refills; Uhlig et al., VM'04; Kang et al., HPDC'11), and ILA §2.2 Fig. 1 finds a
  CPU-bound task's time growing exponentially, not in proportion, past the cores.  A
  host within its cores is untouched, so a scheduler that keeps the demand at the cores
  avoids it.
* **Dom0 as its own pool, and the credit scheduler's coupling** (ILA §3.1; Ongaro, Cox &
  Rixner, VEE 2008): with ``dom0_cores`` > 0, Dom0 has that many cores of its own (pinned,
  outside the guests' cores) and every MB of a virtualized host's guest I/O costs
  ``dom0_core_s_per_mb`` of them; Dom0 is then a link of capacity
  dom0_cores / dom0_core_s_per_mb MB/s on each of the host's I/O flows (``dom0_link``,
  fair share like a network link), so a saturated Dom0 caps the host's I/O through the
  fluid model's bottleneck sharing.  With ``credit_coupling`` > 0, a guest's I/O completes
  late when the host's runnable vCPU demand exceeds its cores: Xen's credit scheduler
  makes a domain woken by an I/O completion wait for a time slice behind CPU-bound
  domains once it has used its credits (Ongaro et al.), so each request's time grows by
  that wait, about one slice per excess runnable vCPU per core.  An I/O stream's rate is
  divided by 1 + credit_coupling x the sum over its virtualized end hosts of ``excess``
  = max(0, runnable / cores - 1), runnable = the host's CPU demand rounded to whole vCPUs
  (the scheduler queues vCPUs; this also spares re-factoring the host's flows at every
  tenth of a core Dom0's demand moves): credit_coupling is the slice in units of a
  request's own service time.  The engine re-factors the host's flows when ``excess`` changes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Clock, Host, Link

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.execution import FluidEngine
    from mrgym.sim.work import Work

# Memory pressure per granted core of an interactive VM (a web or database tier: small,
# cache-resident requests; Bubble-Up finds web search moderate, not a bandwidth hog)
INTERACTIVE_PRESSURE = 0.1
# Load past which the memory controller's queueing delay stops growing super-linearly:
# bandwidth is then shared (g grows linearly), so a heavy overload slows but never stalls
U_MAX = 0.9
# Demonstration values of probe-membw and probe-dom0 (the model's defaults are fitted:
# docs/calibration.md).  membw: with the
# pressures of jobs.MEMORY_CHARACTER, a KMeans map beside 3 Matrix maps on a 10-core host
# slows ~1.2x and beside 7 ~1.9x, the range of Bubble-Up's and Paragon's co-location
# slowdowns of sensitive codes; ILA Fig. 1's PiEst background (pressure 0.05) stays
# under 4 %.  dom0: one pinned Dom0 core at 0.01 core-s/MB serves
# 100 MB/s, about one disk plus a NIC's share (ILA §3.1; Cherkasova & Gardner, USENIX
# ATC 2005, measure Dom0 CPU of this order per MB of guest I/O); it matches today's
# 0.1 core per stream at ~10 MB/s per contended stream.  credit_coupling 0.5: a 30 ms
# credit slice, waited by about one request in ten (the BOOST state lets most wake-ups
# preempt, Ongaro et al.), against ~6 ms per 64 KB request of a 10 MB/s contended stream.
# With all of these on, ILA Fig. 1-3 stay reproduced (Fig. 1: <= 8.0 % below the knee).
PROPOSED: dict[str, float] = {
    "membw_alpha": 1.0,
    "membw_capacity": 0.8,
    "dom0_cores": 1.0,
    "dom0_core_s_per_mb": 0.01,
    "credit_coupling": 0.5,
}


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
        "clock",
        "vms",
        "share",
        "scale",
        "stalled",
        "dom0_own",
        "dom0_link",
        "io_flows",
        "excess",
        "membw",
        "coupled",
        "classes",
        "mem_total",
        "mem_seen",
        "extra",
        "dom0_busy",
        "overcommit",
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
        # the phases' clock: reference core-seconds per second of a phase with a whole
        # core and factor 1; per VM with phases here, the VM and each phase's share of a
        # core before scaling (min(1, cap / phases)); the scaling of every share
        self.clock = Clock()
        self.vms: dict[int, object] = {}
        self.share: dict[int, float] = {}
        self.scale = 1.0
        # running phases with no progress (a VM capped at 0 cores): off the clock until
        # their share is positive again
        self.stalled: dict = {}
        # Dom0's own cores: its CPU is a link on the host's I/O flows (module docstring)
        self.dom0_own = params.dom0_cores > 0.0
        self.dom0_link: Link | None = None
        if self.dom0_own and host.virtualized:
            cap = params.dom0_cores / params.dom0_core_s_per_mb
            self.dom0_link = Link(f"dom0-{host.name}", cap)
        self.membw = params.membw_alpha > 0.0
        # memory contention: every running phase's pressure, and one clock per memory class
        self.mem_total = 0.0
        self.mem_seen = (0.0, 0.0)  # (mem_total, the pool's rate) at the last re-timing
        self.classes: dict[tuple[float, float, float], Clock] = {}
        # credit coupling: the running I/O flows through this host's Dom0, and the runnable
        # demand's excess over the cores that slows them
        self.coupled = params.credit_coupling > 0.0 and host.virtualized
        self.overcommit = params.credit_overcommit > 0.0 and host.virtualized
        self.io_flows: dict[Work, None] = {}
        self.excess = 0.0
        self.extra = self.membw or self.coupled
        # Dom0's cores in use now (what Xentop shows for Domain-0): its demand on the
        # host's pool, or with cores of its own the CPU its I/O flows cost
        self.dom0_busy = self.dom0_demand if self.dom0_link is None else self._dom0_own_busy

    def dom0_demand(self) -> float:
        if self.dom0_own or not self.host.virtualized:
            return 0.0
        return self.io_streams * self.params.dom0_cores_per_stream

    def _dom0_own_busy(self) -> float:
        """Dom0's busy cores when it has cores of its own: the CPU of its flows' MB/s."""
        link = self.dom0_link
        mb_s = 0.0
        for f in link.flows:
            mb_s += f.rate_now()
        return min(self.params.dom0_cores, mb_s * self.params.dom0_core_s_per_mb)

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
        if self.dom0_own:  # Dom0 has cores of its own: the guests' pool does not move
            self.io_streams += delta
            return
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

    def add_vm_work(self, vm) -> None:
        """A compute phase of ``vm`` joined the pool."""
        vid = vm.id
        self.vm_count[vid] = self.vm_count.get(vid, 0) + 1
        self.vms[vid] = vm

    def remove_vm_work(self, vm) -> None:
        """A compute phase of ``vm`` left the pool."""
        vid = vm.id
        n = self.vm_count[vid] - 1
        if n:
            self.vm_count[vid] = n
        else:
            del self.vm_count[vid]
            del self.vms[vid]
            self.share.pop(vid, None)  # none if no recompute ran since it joined

    def cores_of(self, vm) -> float:
        """Cores granted now to each compute phase of ``vm`` (what Xentop would show)."""
        d = self.share.get(vm.id)
        return 0.0 if d is None else d * self.scale

    def recompute(self, now: float) -> None:
        """Share the cores among current consumers: re-time the phases' clock, and re-bind
        the phases of VMs whose share of a core changed."""
        self.account(now)
        host = self.host
        total = 0.0
        vms = self.vms
        share = self.share
        moved = None
        for vid, n in self.vm_count.items():
            vm = vms[vid]
            cap = vm.cpu_cap if vm.cpu_cap is not None else vm.vcpus
            d = min(1.0, cap / n)  # each of the VM's n phases: a core at most
            if share.get(vid) != d:
                share[vid] = d
                if moved is None:
                    moved = set()
                moved.add(vid)
            total += d * n
        inter = 0.0
        for app in self.interactive:
            inter += app.demand
        self._demand = total + inter  # everything but Dom0 (see add_io_stream)
        dom0 = self.dom0_demand()
        demand = total + inter + dom0
        cores = host.type.cores
        scale = 1.0 if demand <= cores else cores / demand
        self.scale = scale
        self.used = min(demand, cores)
        for app in self.interactive:
            app.granted = app.demand * scale
        n = len(self.works)
        pen = (1.0 - self.params.corunner_penalty) ** (n - 1) if n > 1 else 1.0
        if demand > cores and self.overcommit:  # the credit scheduler's overcommit cost
            pen /= 1.0 + self.params.credit_overcommit * (demand / cores - 1.0)
        if self.extra:  # memory contention or credit coupling on (module docstring)
            self._recompute_extra(
                inter, demand, cores, host.type.core_speed * scale * pen, moved, now
            )
            return
        self.engine.set_pool_rate(self, host.type.core_speed * scale * pen, moved, now)

    def _recompute_extra(
        self, inter: float, demand: float, cores: float, rate: float, moved, now: float
    ) -> None:
        """``recompute``'s end with memory contention or credit coupling on."""
        if self.membw:
            self._mem_total(inter)
        self.engine.set_pool_rate(self, rate, moved, now)
        if self.coupled:
            # the credit scheduler queues whole vCPUs: the runnable ones, demand rounded
            runnable = math.floor(demand + 0.5)
            excess = runnable / cores - 1.0 if runnable > cores else 0.0
            if excess != self.excess:
                self.excess = excess
                self.engine.recouple(self, now)

    def _mem_total(self, inter: float) -> None:
        """The memory pressure of everything running here (module docstring)."""
        share = self.share
        total = inter * INTERACTIVE_PRESSURE
        for w in self.works:
            total += w.mp * share[w.vm.id]
        self.mem_total = total * self.scale

    def class_rate(self, key: tuple[float, float, float]) -> float:
        """The clock rate of the phases of memory class ``key`` = (pressure, sensitivity,
        share of a core): the pool's rate slowed by the *other* phases' pressure."""
        mp, ms, d = key
        u = (self.mem_total - mp * d * self.scale) / (
            self.params.membw_capacity * self.host.type.cores
        )
        rate = self.clock.rate
        if u <= 1e-12:
            return rate
        return rate / (1.0 + self.params.membw_alpha * ms * u / (1.0 - min(u, U_MAX)))

    def clock_of(self, w: Work, share: float) -> Clock:
        """The clock phase ``w`` follows at ``share`` of a core: the pool's, or with memory
        contention on, its memory class's (all phases of one profile and share slow alike,
        so a change re-times one clock per class instead of re-binding every phase)."""
        if not self.membw or w.ms == 0.0:
            return self.clock
        key = (w.mp, w.ms, share)
        c = self.classes.get(key)
        if c is None:
            c = self.classes[key] = Clock()
        if not c.bound:  # an idle class's clock is not kept up to date
            c.rate = self.class_rate(key)
        return c
