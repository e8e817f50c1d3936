"""The cores of a physical host, shared by compute phases, interactive VMs and Dom0.

Nobody slows down until the demand of all co-hosted compute phases, interactive VMs and
Dom0 (per active I/O stream) exceeds the host's cores; beyond that the cores are shared
in proportion to demand (ILA Fig. 1).  Each phase's rate is set on the fluid engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Host

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
