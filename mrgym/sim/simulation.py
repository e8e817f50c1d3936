"""One episode of a scenario under one scheduler: the parts, composed.

::

    Simulation ── owns the random streams, the SimPy clock, the fluid engine, the topology,
    │             HDFS and the page caches; draws the workload at reset
    ├── tracker    JobTracker   (tracker.py)    jobs, pending indices, counters, task choice,
    │                                           launch / success / failure / kill / requeue
    ├── beats      Dispatcher   (heartbeats.py) heartbeat grid, parked VMs, serving slots
    ├── tasks      AttemptRunner (attempts.py)  map and reduce attempt processes
    ├── dynamics   Dynamics     (dynamics.py)   spot, failures, interactive load, control
    ├── monitor    Monitor      (monitoring.py) VM/host metrics, fairness sampler, pricing
    └── view       ClusterView  (view.py)       the read-only interface for policies and
                                                the environment

The simulation advances in segments: SimPy runs until some TaskTracker heartbeats with a
free slot, then the heartbeat is served — by the scheduler in :meth:`run`, by the agent in
the Gymnasium environment — and SimPy resumes.  Both modes share this path, so a policy
makes identical decisions under ``run_sim`` and ``run_episode``.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import simpy

from mrgym.sim.attempts import AttemptRunner
from mrgym.sim.cpu import CpuPool
from mrgym.sim.dynamics import Dynamics
from mrgym.sim.execution import FluidEngine
from mrgym.sim.hdfs import Hdfs
from mrgym.sim.heartbeats import Dispatcher, Heartbeat
from mrgym.sim.jobs import MAP, REDUCE, Job, JobSpec, Task
from mrgym.sim.monitoring import Monitor
from mrgym.sim.rng import Streams, job_keys
from mrgym.sim.scheduler import DecisionContext, Scheduler
from mrgym.sim.topology import VM
from mrgym.sim.tracker import InvalidDecision, JobTracker
from mrgym.sim.view import ClusterView
from mrgym.sim.writeback import WriteCache, guest_caches

__all__ = ["InvalidDecision", "Simulation"]


def heavy_tail(
    rng: np.random.Generator, shape: tuple[int, int], p: float, alpha: float
) -> np.ndarray:
    """Factors >= 1 of a heavy-tailed outlier: Pareto(``alpha``, x_m = 1) with probability
    ``p``, else 1 (Mantri, Dolly: outlier durations are heavy-tailed).  Both variates are
    drawn for every entry, so a draw's luck does not depend on the others' outcomes."""
    hit = rng.random(shape) < p
    pareto = 1.0 + rng.pareto(alpha, shape)  # numpy's pareto is Lomax: shift to x_m = 1
    return np.where(hit, pareto, 1.0)


# gc thresholds during ``run`` (generation 0 allocations, then 1 and 2 collections)
GC_THRESHOLD = (20000, 50, 50)


class Simulation:
    """One episode of ``scenario`` under ``scheduler`` with random streams from ``seed``.

    ``specs`` (the jobs) are drawn from the scenario's workload with the episode's
    ``workload`` stream unless given."""

    def __init__(
        self,
        scenario: Any,
        scheduler: Scheduler,
        seed: int,
        specs: list[JobSpec] | None = None,
        progress=None,
    ):
        from mrgym.sim.build import build_topology, model_params
        from mrgym.workloads import generate

        self.scenario = scenario
        self.params = model_params(scenario)
        self.seed = seed
        self.rng = Streams(seed)
        if specs is None:
            specs = generate(scenario, self.rng)
        self.env = simpy.Environment()
        self.engine = FluidEngine(self.env, self.params)
        self.topo = build_topology(
            scenario.cluster, scenario.hdfs, self.params, self.rng.stream("provision")
        )
        for h in self.topo.hosts:
            h.cpu = CpuPool(h, self.engine, self.params)
        # one write-back page cache per host's disk, or per guest VM (writeback.py)
        p = self.params
        guests = None
        if p.guest_page_cache:
            guests = guest_caches(self.topo.vms, self.engine, p.dirty_ratio, p.task_heap_mb)
        # a native host has no guest kernel: its worker writes through the host's one cache
        self.caches: dict[int, WriteCache] = {
            h.id: WriteCache(h, self.engine, p.dirty_ratio, guests if h.virtualized else None)
            for h in self.topo.hosts
        }
        self.hb = scenario.cluster.heartbeat_s
        self.oob = scenario.cluster.oob_heartbeat
        self.hdfs = Hdfs(
            self.topo,
            scenario.hdfs.block_mb,
            scenario.hdfs.replication,
            scenario.hdfs.placement,
            rack_aware=scenario.cluster.rack_aware,
        )
        self.max_time = scenario.run.max_sim_time_s
        self.scheduler = scheduler
        self.progress = progress
        self.view = ClusterView(self)
        self.ctx = DecisionContext(self.view)
        self._stop: simpy.Event | None = None
        self._started = False
        self._closed = False
        self.finished = False
        self.truncated = False
        # the parts, then their references to each other
        self.tracker = JobTracker(self)
        self.beats = Dispatcher(self)
        self.tasks = AttemptRunner(self)
        self.dynamics = Dynamics(self)
        self.monitor = Monitor(self)
        self.tracker.bind(self.beats, self.tasks)
        self.beats.bind(self.tracker)
        self.tasks.bind(self.tracker)
        self.dynamics.bind(self.tracker, self.beats)
        self.monitor.bind(self.tracker, self.dynamics)
        self.view.bind(self.tracker, self.monitor, self.dynamics)
        self.ctx.jobs = self.tracker.active_list
        # reset-time draws, in a fixed order: every policy meets the same episode
        self._draw_workload(specs)
        self.tasks.draw_slow_vms(self.rng)
        self.dynamics.draw()
        self.beats.draw_offsets(self.rng)
        scheduler.reset(seed)

    # ------------------------------------------------------------------ reset-time draws
    def _draw_workload(self, specs: list[JobSpec]) -> None:
        """Create the jobs and their tasks now; their luck and input blocks are drawn when
        each arrives (:meth:`materialize`), from the job's own streams."""
        tracker = self.tracker
        ordered = sorted(specs, key=lambda s: s.submit_s)
        for jid, (spec, key) in enumerate(zip(ordered, job_keys([s.name for s in ordered]))):
            job = Job(jid, spec, [], [], key=key)
            # a map's input: its block's size, set again when the blocks exist (arrival)
            per = spec.input_mb / spec.n_maps if spec.n_maps else 0.0
            job.maps = [Task(job, i, MAP, per, ()) for i in range(spec.n_maps)]
            job.reduces = [Task(job, i, REDUCE, 0.0, ()) for i in range(spec.n_reduces)]
            tracker.jobs.append(job)
        tracker.total_maps = sum(len(j.maps) for j in tracker.jobs)

    def materialize(self, job: Job) -> None:
        """Draw ``job``'s tasks' noise and place its input file's blocks, from streams keyed
        by the job (rng.py), once: at its arrival, so nothing before it arrives depends on
        it; earlier only where a tool or a test must see them (other jobs draw the same
        luck, though their file and block ids and the DataNodes alive then may differ)."""
        if job.drawn:
            return
        job.drawn = True
        tasks = job.maps + job.reduces
        p = self.params
        sigma = p.noise_sigma
        m = p.noise_draws_per_task
        tail_p = p.noise_tail_p
        n = len(tasks)
        if sigma <= 0 and tail_p <= 0:
            draws = [(1.0,) * m] * n
        else:
            if sigma > 0:
                arr = self.rng.keyed("noise", job.key).lognormal(
                    -0.5 * sigma * sigma, sigma, size=(n, m)
                )
            else:
                arr = np.ones((n, m))
            if tail_p > 0:
                arr *= heavy_tail(
                    self.rng.keyed("tail", job.key), (n, m), tail_p, p.noise_tail_alpha
                )
            draws = [tuple(r) for r in arr.tolist()]
        for t, d in zip(tasks, draws):
            t.noise = d
        spec = job.spec
        if spec.profile.has_input and spec.input_mb > 0 and job.maps:
            # one map per block (docs/model.md §2)
            f = self.hdfs.create_file(
                f"{spec.name}.in",
                spec.input_mb,
                self.rng.keyed("placement", job.key),
                n_blocks=spec.n_maps,
            )
            job.input_file = f
            for t, b in zip(job.maps, f.blocks):
                t.block = b
                t.input_mb = b.size_mb

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        """Create the actors' processes (once)."""
        if self._started:
            return
        self._started = True
        env = self.env
        env.process(self._submitter())
        self.beats.start()
        self.dynamics.start()
        env.process(self.monitor.sampler())
        env.timeout(self.max_time).callbacks.append(lambda _e: self.end(truncated=True))
        if not self.tracker.jobs:
            self.end(truncated=False)

    def _submitter(self):
        env = self.env
        for job in self.tracker.jobs:
            dt = job.spec.submit_s - env.now
            if dt > 0:
                yield env.timeout(dt)
            self.materialize(job)
            self.tracker.arrive(job)

    def end(self, truncated: bool) -> None:
        """The episode is over (``truncated``: by the time cap or with no host left)."""
        if self.finished:
            return
        self.finished = True
        self.truncated = truncated
        self.stop_segment()

    def stop_segment(self) -> None:
        """End the current SimPy segment: a heartbeat is due or the episode ended."""
        ev = self._stop
        if ev is not None and not ev.triggered:
            ev.succeed()

    def advance(self) -> VM | None:
        """Run until a heartbeat needs serving and return its VM (None: episode over)."""
        self.start()
        env = self.env
        while True:
            if self.finished:
                self._close()
                return None
            vm = self.beats.due()
            if vm is not None:
                return vm
            self._stop = env.event()
            env.run(until=self._stop)

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        now = self.env.now
        for h in self.topo.hosts:
            h.cpu.account(now)
            if h.alive:
                h.up_seconds += now - h.up_since

    def context(self, vm: VM, kind: str) -> DecisionContext:
        """What ``Scheduler.decide`` sees for ``vm``'s free ``kind`` slot."""
        ctx = self.ctx
        ctx.now = self.env.now
        ctx.vm = vm
        ctx.slot_kind = kind
        ctx.free_map, ctx.free_reduce = vm.free_map, vm.free_reduce
        return ctx

    def set_progress(self, callback) -> None:
        """``callback(1)`` whenever a job completes or fails (progress bars)."""
        self.progress = self.tracker.progress = callback

    # the episode's records, for metrics and analysis (policies read the ClusterView)
    @property
    def jobs(self) -> list[Job]:
        """Every job of the episode, in submission order."""
        return self.tracker.jobs

    @property
    def attempts(self) -> list:
        """Every task attempt launched so far, in launch order."""
        return self.tracker.attempts

    def open_heartbeat(self, vm: VM) -> Heartbeat:
        """Serve ``vm``'s heartbeat slot by slot (the environment: one slot per step)."""
        return self.beats.open(vm)

    def run(self) -> None:
        """Simulate the whole episode with ``self.scheduler`` deciding every slot.

        The cyclic garbage collector only costs time here (nothing is decided by it): the
        built cluster is frozen out of its scans, and its young-generation threshold is
        raised for the run, cutting full collections from ~13 to ~2 on ila2400 (the
        process's settings are restored after)."""
        decide = self.scheduler.decide
        old = gc.get_threshold()
        mine = gc.get_freeze_count() == 0  # leave a caller's own frozen objects frozen
        if mine:
            gc.freeze()
        gc.set_threshold(max(old[0], GC_THRESHOLD[0]), *GC_THRESHOLD[1:])
        try:
            while (vm := self.advance()) is not None:
                self.beats.serve(vm, decide)
        finally:
            gc.set_threshold(*old)
            if mine:
                gc.unfreeze()
