"""The cores of a physical host, shared by compute phases, interactive VMs and Dom0.

Nobody slows down until the demand of all co-hosted compute phases, interactive VMs and
Dom0 (per active I/O stream) exceeds the host's cores; beyond that the cores are shared
in proportion to demand (ILA Fig. 1).

A VM's compute phases all get the same share of a core, so they share one virtual clock
(topology.Clock, as flows limited by the same link do): a change re-times each VM's clock
once instead of re-rating every phase on the host (issue "Speed").
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
        "clocks",
        "vms",
        "granted",
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
        # per VM with phases here: its phases' clock (core-seconds per phase and second,
        # before the phase's factor), the VM and each phase's granted cores
        self.clocks: dict[int, Clock] = {}
        self.vms: dict[int, object] = {}
        self.granted: dict[int, float] = {}

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

    def add_vm_work(self, vm) -> Clock:
        """A compute phase of ``vm`` joined the pool: the clock it binds to."""
        vid = vm.id
        self.vm_count[vid] = self.vm_count.get(vid, 0) + 1
        self.vms[vid] = vm
        c = self.clocks.get(vid)
        if c is None:
            c = self.clocks[vid] = Clock()
        return c

    def remove_vm_work(self, vm) -> None:
        """A compute phase of ``vm`` left the pool."""
        vid = vm.id
        n = self.vm_count[vid] - 1
        if n:
            self.vm_count[vid] = n
        else:
            del self.vm_count[vid]
            del self.vms[vid]
            self.granted.pop(vid, None)

    def cores_of(self, vm) -> float:
        """Cores granted now to each compute phase of ``vm`` (what Xentop would show)."""
        return self.granted.get(vm.id, 0.0)

    def recompute(self, now: float) -> None:
        """Share the cores among current consumers and re-time every VM's phase clock."""
        self.account(now)
        host = self.host
        shares = []
        total = 0.0
        vms = self.vms
        for vid, n in self.vm_count.items():
            vm = vms[vid]
            cap = vm.cpu_cap if vm.cpu_cap is not None else vm.vcpus
            d = min(1.0, cap / n)  # each of the VM's n phases: a core at most
            shares.append((vid, d))
            total += d * n
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
        n = len(self.works)
        pen = (1.0 - self.params.corunner_penalty) ** (n - 1) if n > 1 else 1.0
        speed = host.type.core_speed * scale * pen
        engine = self.engine
        granted = self.granted
        clocks = self.clocks
        for vid, d in shares:
            granted[vid] = d * scale
            engine.set_clock_rate(clocks[vid], d * speed, now)
