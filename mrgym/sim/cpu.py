"""The cores of a physical host, shared by compute phases, interactive VMs and Dom0.

Nobody slows down until the demand of all co-hosted compute phases, interactive VMs and
Dom0 (per active I/O stream) exceeds the host's cores; beyond that the cores are shared
in proportion to demand (ILA Fig. 1).

All compute phases on a host follow one virtual clock (topology.Clock, as flows limited by
the same link do), which runs at the host's speed per granted core; a phase moves at that
rate times its share of a core and its factor.  A change re-times the clock once; only the
phases of a VM whose share of a core changed (its phase count or cap passed its vCPUs) are
re-bound (issue "Speed").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Clock, Host

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.execution import FluidEngine
    from mrgym.sim.work import Work


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
        self.engine.set_pool_rate(self, host.type.core_speed * scale * pen, moved, now)
