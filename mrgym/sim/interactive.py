"""Interactive (transactional) VMs beside the MapReduce workers (HybridMR §IV)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mrgym.sim.topology import VM


class InteractiveApp:
    """A transactional VM (RUBiS, TPC-W, Olio; HybridMR §IV): time-varying request rate,
    processor-sharing response time, SLA threshold."""

    def __init__(self, vm: VM, spec: Any, rng: np.random.Generator):
        self.vm = vm
        self.spec = spec
        self.rng = rng
        self.rps = spec.base_rps
        self.demand = 0.0
        self.granted = 0.0
        self.violation_s = 0.0

    def load_at(self, t: float, noise: float) -> float:
        s = self.spec
        wave = 0.5 - 0.5 * math.cos(2 * math.pi * t / s.period_s)
        return max(0.0, (s.base_rps + (s.peak_rps - s.base_rps) * wave) * noise)

    def set_load(self, rps: float) -> None:
        self.rps = rps
        self.demand = min(self.vm.vcpus, rps * self.spec.service_ms / 1000.0)

    def response_s(self) -> float:
        """M/M/1 processor sharing on the VM's vCPUs, slowed by host contention."""
        svc = self.spec.service_ms / 1000.0
        if self.demand <= 0:
            return svc
        slow = self.granted / self.demand if self.demand > 0 else 1.0
        if slow <= 0:
            return math.inf
        rho = self.rps * svc / (self.vm.vcpus * slow)
        if rho >= 1.0:
            return math.inf
        return (svc / slow) / (1.0 - rho)
