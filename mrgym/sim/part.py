"""The base of a simulation's parts (tracker, heartbeats, attempts, dynamics, monitor):
the handles every part reads, taken once from the composing Simulation."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class Part:
    """Shared handles: the SimPy clock, the model constants, HDFS, the fluid engine, the
    topology, the random streams, the scenario, the scheduler, the view and the caches."""

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.env = sim.env
        self.params = sim.params
        self.hdfs = sim.hdfs
        self.engine = sim.engine
        self.topo = sim.topo
        self.rng = sim.rng
        self.scenario = sim.scenario
        self.scheduler = sim.scheduler
        self.view = sim.view
        self.caches = sim.caches
        self.hb = sim.hb
