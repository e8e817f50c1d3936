"""The simulator: job arrivals, heartbeats, the task lifecycle, spot evictions and failures,
interactive VMs and monitoring.

One SimPy process per real-world actor: the job submitter, the heartbeat dispatcher, each
task attempt ("read the block, compute, write the output"; "shuffle, compute, write to
HDFS"), each spot host's eviction, each host's failures, each interactive VM's load, the
scheduler's control loop and the metric sampler.

Heartbeats follow each VM's fixed grid (``hb_offset + k * heartbeat_s``) plus an
out-of-band heartbeat when a task finishes.  One dispatcher walks the grid in time order
over the VMs that could be given a task; a VM with no free slot, or nothing it could run,
is parked until a slot frees or work appears: the decisions are exactly those of an
always-beating cluster, without the idle events.  A heartbeat is queued and served between
SimPy segments (:meth:`Simulation.advance`), by the scheduler in ``run`` and by the agent in
the Gymnasium environment — one path, identical decisions.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from mrgym.sim.execution import CpuPool, FluidEngine
from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER, Hdfs
from mrgym.sim.jobs import (
    DONE,
    MAP,
    PENDING,
    REDUCE,
    RUNNING,
    Attempt,
    Job,
    JobSpec,
    MapOutput,
    Task,
)
from mrgym.sim.params import ModelParams
from mrgym.sim.rng import Streams
from mrgym.sim.scheduler import (
    SPECULATE,
    Decision,
    DecisionContext,
    Kill,
    Migrate,
    Pause,
    Resume,
    Scheduler,
    Throttle,
)
from mrgym.sim.topology import VM, Host, Link, Topology
from mrgym.sim.writeback import WriteCache


class InvalidDecision(ValueError):
    """A scheduler asked for something the cluster cannot do (names the reason)."""


@dataclass(frozen=True)
class VmMetrics:
    cpu_cores: float  # cores used by the VM's compute phases now
    read_mbps: float
    write_mbps: float
    running_tasks: int


@dataclass(frozen=True)
class HostMetrics:
    vm_cpu_cores: float  # aggregate of all co-hosted VMs (incl. interactive)
    dom0_cpu_cores: float
    cores: float
    disk_util: float  # fraction of the disk's single-stream throughput in use
    disk_streams: int
    io_mbps: float


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


class ClusterView:
    """Read-only facade the scheduler uses (monitoring, metadata, topology)."""

    def __init__(self, sim: Simulation):
        self._sim = sim
        self.topology: Topology = sim.topo
        self.hdfs: Hdfs = sim.hdfs
        self.params: ModelParams = sim.params
        self.heartbeat_s: float = sim.hb

    @property
    def now(self) -> float:
        return self._sim.env.now

    @property
    def jobs(self) -> list[Job]:
        """Active jobs in arrival order."""
        return self._sim.active_list

    def job(self, job_id: int) -> Job:
        return self._sim.active[job_id]

    # -- task selection helpers ---------------------------------------------------------
    def best_map(self, job: Job, vm: VM) -> tuple[Task, int | None] | None:
        return self._sim.best_map(job, vm)

    def can_launch(self, job: Job, kind: str, vm: VM) -> bool:
        return self._sim.can_launch(job, kind, vm)

    def pending_maps(self, job: Job) -> list[Task]:
        return [t for t in job.maps if t.state == PENDING]

    def pending_reduces(self, job: Job) -> list[Task]:
        return [t for t in job.reduces if t.state == PENDING]

    def running_attempts(self, job: Job) -> list[Attempt]:
        return [a for t in job.running_set for a in t.running]

    def reduces_ready(self, job: Job) -> bool:
        return job.reduces_ready(self.params.reduce_slowstart)

    def idle_vms(self, kind: str) -> list[VM]:
        """Alive workers with a free slot of ``kind`` (PNA's N_m / N_r, lsap's idle slots)."""
        attr = "free_map" if kind == MAP else "free_reduce"
        return [
            v
            for v in self._sim.topo.workers
            if v.alive and not v.host.evicting and getattr(v, attr) > 0
        ]

    def locality(self, task: Task, vm: VM) -> int | None:
        return None if task.block is None else Hdfs.locality(task.block, vm)

    def hops(self, a: VM, b: VM) -> int:
        return self.topology.hops(a, b)

    def path_bandwidth(self, a: VM, b: VM) -> float:
        return self.topology.path_bandwidth(a.host, b.host)

    def map_outputs(self, job: Job) -> list[MapOutput]:
        """Intermediate data of finished maps: where it lives and its size (PNA §II-B.2)."""
        return [o for o in job.outputs if not o.lost]

    def attempt_progress(self, att: Attempt) -> float:
        return att.progress(self.now)

    # -- monitoring ----------------------------------------------------------------------
    def vm_metrics(self, vm: VM) -> VmMetrics:
        return self._sim.vm_metrics(vm)

    def host_metrics(self, host: Host) -> HostMetrics:
        return self._sim.host_metrics(host)

    def job_stats(self, job: Job, kind: str) -> dict[str, float] | None:
        """Measured demand of the job's finished tasks of ``kind`` (None before the first)."""
        n, s, cpu, mb = job.stats[kind]
        if not n:
            return None
        return {"tasks": n, "mean_s": s / n, "mean_cpu_s": cpu / n, "mean_mb": mb / n}

    def rate_by_host_type(self, job: Job) -> dict[str, float]:
        """MB/s of the job's finished maps per host type (Lee §4.3 computing rate)."""
        return {k: mb / s for k, (s, mb) in job.rate_by_type.items() if s > 0}

    def node_progress_rates(self) -> dict[int, float]:
        """Per VM, the mean of (job's mean task time / task time) over its finished tasks:
        1 is an average node, below 1 a slow one (LATE's node progress)."""
        return {vid: tot / n for vid, (n, tot) in self._sim.node_speed.items() if n}

    def interactive_apps(self) -> list[InteractiveApp]:
        return self._sim.apps

    def response_time_s(self, vm: VM) -> float | None:
        app = self._sim.app_of.get(vm.id)
        return None if app is None else app.response_s()


class Simulation:
    """One episode of a scenario under one scheduler."""

    def __init__(
        self, scenario: Any, specs: list[JobSpec], scheduler: Scheduler, seed: int, progress=None
    ):
        from mrgym.sim.build import build_topology

        self.scenario = scenario
        self.params = ModelParams(**scenario.execution.model_dump())
        self.seed = seed
        self.rng = Streams(seed)
        self.env = simpy.Environment()
        self.engine = FluidEngine(self.env, self.params)
        self.topo = build_topology(scenario.cluster, scenario.hdfs, self.params, self.rng.placement)
        for h in self.topo.hosts:
            h.cpu = CpuPool(h, self.engine, self.params)
        # one write-back page cache per host's disk (writeback.py)
        self.caches: dict[int, WriteCache] = {
            h.id: WriteCache(
                h, self.engine, self.params.dirty_ratio * 1024.0 * sum(v.memory_gb for v in h.vms)
            )
            for h in self.topo.hosts
        }
        self.hb = scenario.cluster.heartbeat_s
        self.oob = scenario.cluster.oob_heartbeat
        self.hdfs = Hdfs(
            self.topo, scenario.hdfs.block_mb, scenario.hdfs.replication, scenario.hdfs.placement
        )
        self.max_time = scenario.run.max_sim_time_s
        self.scheduler = scheduler
        self.progress = progress
        # state
        self.jobs: list[Job] = []
        self.active: dict[int, Job] = {}
        self.active_list: list[Job] = []
        self.attempts: list[Attempt] = []
        self.n_pending_maps = 0
        self.n_ready_reduces = 0
        self.n_running = 0
        # heartbeat dispatcher state
        self._beats: list[tuple[float, int]] = []
        self._in_heap: set[int] = set()
        self._parked: dict[int, VM] = {}
        self._disp_ev: simpy.Event | None = None
        self._disp_target = math.inf
        self.view = ClusterView(self)
        self.ctx = DecisionContext(self.view)
        self.ctx.jobs = self.active_list
        self._hb_queue: deque[VM] = deque()
        self._queued: set[int] = set()
        self._stop: simpy.Event | None = None
        self._started = False
        self._closed = False
        self.finished = False
        self.truncated = False
        self.n_heartbeats = 0
        self.n_decisions = 0
        self.shuffle_mb = 0.0
        self.shuffle_cross_rack_mb = 0.0
        self.fair_samples: list[tuple[float, float, float]] = []  # (dt, jain, lsap distance)
        self.host_failures = 0  # failure events (a host may fail, be repaired, fail again)
        self.hosts_evicted = 0  # spot hosts evicted (each at most once: it never returns)
        self.outputs_lost = 0  # finished maps' outputs lost with their host
        self.n_failed = 0  # jobs failed (a task failed max_task_attempts times)
        self.n_reexecuted = 0
        self.n_success = 0
        self.job_seconds = 0.0  # integral of the number of active jobs over time
        self._js_t = 0.0
        self.node_speed: dict[int, list] = {}
        self._draw_workload(specs)
        self.total_maps = sum(len(j.maps) for j in self.jobs)
        self.n_arrived = 0
        self.n_completed = 0
        self._draw_dynamics()
        scheduler.reset(seed)

    # ------------------------------------------------------------------ reset-time draws
    def _draw_workload(self, specs: list[JobSpec]) -> None:
        """Create input files and every task's noise now, so all policies share them."""
        p = self.params
        sigma = p.noise_sigma
        m = p.noise_draws_per_task

        def noise(n: int) -> list[tuple[float, ...]]:
            if sigma <= 0:
                return [(1.0,) * m] * n
            arr = self.rng.noise.lognormal(-0.5 * sigma * sigma, sigma, size=(n, m))
            return [tuple(r) for r in arr.tolist()]

        for jid, spec in enumerate(sorted(specs, key=lambda s: s.submit_s)):
            job = Job(jid, spec, [], [])
            prof = spec.profile
            if prof.has_input and spec.input_mb > 0:
                # one map per block (DESIGN §2)
                f = self.hdfs.create_file(
                    f"{spec.name}.in", spec.input_mb, self.rng.placement, n_blocks=spec.n_maps
                )
                job.input_file = f
                draws = noise(len(f.blocks))
                for i, b in enumerate(f.blocks):
                    job.maps.append(Task(job, i, MAP, b.size_mb, draws[i], block=b))
            else:
                per = spec.input_mb / spec.n_maps if spec.n_maps else 0.0
                draws = noise(spec.n_maps)
                for i in range(spec.n_maps):
                    job.maps.append(Task(job, i, MAP, per, draws[i]))
            draws = noise(spec.n_reduces)
            for i in range(spec.n_reduces):
                job.reduces.append(Task(job, i, REDUCE, 0.0, draws[i]))
            self.jobs.append(job)

    def _draw_dynamics(self) -> None:
        dyn = self.scenario.dynamics
        rng = self.rng.failures
        self.evict_at: dict[int, float] = {}
        self.fail_rng: dict[int, np.random.Generator] = {}
        if dyn.spot is not None and dyn.spot.hazard_per_hour > 0:
            for h in self.topo.hosts:
                if h.type.spot or h.pool == "spot":
                    self.evict_at[h.id] = float(rng.exponential(3600.0 / dyn.spot.hazard_per_hour))
        if dyn.failures is not None and dyn.failures.mtbf_hours:
            # One stream per host, spawned now: its failure times are drawn lazily (an
            # unbounded horizon cannot hang the reset) yet do not depend on the policy.
            for h in self.topo.hosts:
                self.fail_rng[h.id] = np.random.default_rng(rng.integers(2**63))
        self.apps: list[InteractiveApp] = []
        self.app_of: dict[int, InteractiveApp] = {}
        for vm, spec in self.topo.interactive_specs:
            app = InteractiveApp(
                vm, spec, np.random.default_rng(self.rng.interactive.integers(2**63))
            )
            app.set_load(app.load_at(0.0, 1.0))
            vm.host.cpu.interactive.append(app)
            self.apps.append(app)
            self.app_of[vm.id] = app
        for h in self.topo.hosts:  # initial shares (interactive demand, utilization)
            h.cpu.recompute(0.0)
        hb_rng = self.rng.placement
        for vm in self.topo.workers:
            vm.hb_offset = float(hb_rng.uniform(0.0, self.hb))

    # ------------------------------------------------------------------ running
    # The simulation advances in segments: SimPy runs until some TaskTracker heartbeats
    # with a free slot, then the heartbeat is served (by the scheduler here, by the agent
    # in the Gymnasium environment) and SimPy resumes.  Both modes share this path, so a
    # policy makes identical decisions under run_sim and run_episode.
    def start(self) -> None:
        """Create the actors' processes (once)."""
        if self._started:
            return
        self._started = True
        env = self.env
        env.process(self._submitter())
        for vm in self.topo.workers:
            self._schedule_beat(vm, vm.hb_offset)
        env.process(self._dispatcher())
        for hid, t in self.evict_at.items():
            env.process(self._spot(self.topo.hosts[hid], t))
        for hid, gen in self.fail_rng.items():
            env.process(self._failures(self.topo.hosts[hid], gen))
        for app in self.apps:
            env.process(self._interactive(app))
        if self.scheduler.control_period_s:
            env.process(self._control_loop(self.scheduler.control_period_s))
        env.process(self._sampler())
        env.timeout(self.max_time).callbacks.append(lambda _e: self._end(truncated=True))
        if not self.jobs:
            self._end(truncated=False)

    def _end(self, truncated: bool) -> None:
        if self.finished:
            return
        self.finished = True
        self.truncated = truncated
        self._stop_now()

    def _all_arrived(self) -> bool:
        return self.n_arrived == len(self.jobs)

    def n_unarrived(self) -> int:
        return len(self.jobs) - self.n_arrived

    def _stop_now(self) -> None:
        ev = self._stop
        if ev is not None and not ev.triggered:
            ev.succeed()

    def _request_heartbeat(self, vm: VM) -> None:
        if vm.id not in self._queued:
            self._queued.add(vm.id)
            self._hb_queue.append(vm)
            self._stop_now()

    def advance(self) -> VM | None:
        """Run until a heartbeat needs serving and return its VM (None: episode over)."""
        self.start()
        env = self.env
        while True:
            if self.finished:
                self._close()
                return None
            if self._hb_queue:
                vm = self._hb_queue.popleft()
                self._queued.discard(vm.id)
                self.n_heartbeats += 1
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

    def next_slot(self, vm: VM, declined: set[str]) -> str | None:
        """The kind of the heartbeat's next free slot that could take work (maps first,
        then reduces, as Hadoop 1 assigns them), or None when the heartbeat is over."""
        if not vm.alive or vm.paused or vm.host.evicting:
            return None
        spec = self.scheduler.speculates and self.n_running > 0
        if MAP not in declined and vm.free_map > 0 and (self.n_pending_maps > 0 or spec):
            return MAP
        if REDUCE not in declined and vm.free_reduce > 0 and (self.n_ready_reduces > 0 or spec):
            return REDUCE
        return None

    def context(self, vm: VM, kind: str) -> DecisionContext:
        ctx = self.ctx
        ctx.now = self.env.now
        ctx.vm = vm
        ctx.slot_kind = kind
        ctx.free_map, ctx.free_reduce = vm.free_map, vm.free_reduce
        return ctx

    def run(self) -> None:
        """Simulate the whole episode with ``self.scheduler`` deciding every slot."""
        while (vm := self.advance()) is not None:
            self._heartbeat(vm)

    def _submitter(self):
        env = self.env
        for job in self.jobs:
            dt = job.spec.submit_s - env.now
            if dt > 0:
                yield env.timeout(dt)
            self._arrive(job)

    def job_seconds_at(self, now: float) -> float:
        """Integral of the active-job count up to ``now`` (the JCT reward's clock)."""
        return self.job_seconds + len(self.active) * (now - self._js_t)

    def _tick_job_seconds(self) -> None:
        now = self.env.now
        self.job_seconds += len(self.active) * (now - self._js_t)
        self._js_t = now

    def _arrive(self, job: Job) -> None:
        self._tick_job_seconds()
        self.n_arrived += 1
        job.arrived_s = self.env.now
        allowed = self.scheduler.place_job(job, self.view)
        job.allowed_pools = frozenset(allowed) if allowed is not None else None
        for t in reversed(job.maps):
            self._index_map(job, t)
        job.pending_reduces = list(reversed(job.reduces))
        job.n_pending_maps = len(job.maps)
        job.n_pending_reduces = len(job.reduces)
        self.n_pending_maps += len(job.maps)
        self.active[job.id] = job
        self.active_list.append(job)
        self._check_ready(job)
        self._wake_all()

    def _index_map(self, job: Job, t: Task) -> None:
        b = t.block
        if b is not None:
            hosts_seen, racks_seen = set(), set()
            for r in b.replicas:
                job.pending_by_vm.setdefault(r.id, []).append(t)
                if r.host.id not in hosts_seen:
                    hosts_seen.add(r.host.id)
                    job.pending_by_host.setdefault(r.host.id, []).append(t)
                if r.host.rack.id not in racks_seen:
                    racks_seen.add(r.host.rack.id)
                    job.pending_by_rack.setdefault(r.host.rack.id, []).append(t)
        job.pending_maps.append(t)

    def _check_ready(self, job: Job) -> None:
        if not job.ready and job.reduces_ready(self.params.reduce_slowstart):
            job.ready = True
            self.n_ready_reduces += job.n_pending_reduces
            if job.n_pending_reduces:
                self._wake_all()

    # ------------------------------------------------------------------ heartbeats
    def _has_work(self, vm: VM) -> bool:
        if vm.free_map > 0 and self.n_pending_maps > 0:
            return True
        if vm.free_reduce > 0 and self.n_ready_reduces > 0:
            return True
        return (
            self.scheduler.speculates and self.n_running > 0 and (vm.free_map + vm.free_reduce) > 0
        )

    def _needs_beat(self, vm: VM) -> bool:
        return vm.alive and not vm.paused and not vm.host.evicting and self._has_work(vm)

    def _next_grid(self, vm: VM, after: float) -> float:
        """The VM's first periodic heartbeat at or after ``after``."""
        hb = self.hb
        k = math.ceil((after - vm.hb_offset) / hb - 1e-9)
        return vm.hb_offset + max(k, 0) * hb

    def _schedule_beat(self, vm: VM, t: float | None = None) -> None:
        """Put a VM with something to do on the heartbeat heap (once)."""
        if vm.id in self._in_heap or not vm.is_worker:
            return
        if not self._needs_beat(vm):
            self._parked[vm.id] = vm
            return
        self._parked.pop(vm.id, None)
        if t is None:
            t = self._next_grid(vm, self.env.now)
        heapq.heappush(self._beats, (t, vm.id))
        self._in_heap.add(vm.id)
        if t < self._disp_target:
            self._poke()

    def _poke(self) -> None:
        ev = self._disp_ev
        if ev is not None and not ev.triggered:
            ev.succeed()

    def _dispatcher(self):
        """Every TaskTracker's periodic heartbeat, in time order, from one heap.

        Only VMs that could be given a task are on the heap; a VM without a free slot, or
        with nothing it could run, is parked (its heartbeats would change nothing) and
        comes back when a slot frees or work appears.  The decisions are those of an
        always-beating cluster, without its idle events."""
        env = self.env
        heap = self._beats
        vms = self.topo.vms
        hb = self.hb
        while True:
            if not heap:
                yield self._wait(None)
                continue
            t, vid = heap[0]
            vm = vms[vid]
            if not self._needs_beat(vm):
                heapq.heappop(heap)
                self._in_heap.discard(vid)
                if vm.alive:
                    self._parked[vid] = vm
                continue
            now = env.now
            if t > now + 1e-9:
                yield self._wait(t - now)
                continue  # re-examine: a poke may have put an earlier beat on top
            heapq.heapreplace(heap, (t + hb, vid))  # parked lazily if idle by then
            self._request_heartbeat(vm)

    def _wait(self, dt: float | None) -> simpy.Event:
        ev = self.env.event()
        self._disp_ev = ev
        self._disp_target = math.inf if dt is None else self.env.now + dt
        if dt is not None:
            self.env.timeout(dt).callbacks.append(lambda _e: None if ev.triggered else ev.succeed())
        return ev

    def _wake_all(self) -> None:
        """New work appeared: parked VMs that can take some of it go back on the heap."""
        if self._parked:
            for vm in list(self._parked.values()):
                if self._needs_beat(vm):
                    self._schedule_beat(vm)

    def _heartbeat(self, vm: VM) -> None:
        """Ask the scheduler about each free slot: maps first, then reduces (Hadoop 1)."""
        sched = self.scheduler
        declined: set[str] = set()
        while (kind := self.next_slot(vm, declined)) is not None:
            self.n_decisions += 1
            d = sched.decide(self.context(vm, kind))
            if d.kind is None:
                declined.add(kind)
            else:
                self.apply(vm, d, kind)

    # ------------------------------------------------------------------ decisions
    def can_launch(self, job: Job, kind: str, vm: VM) -> bool:
        if job.allowed_pools is not None and not self._pool_ok(job, vm):
            return False
        if kind == MAP:
            return job.n_pending_maps > 0
        if kind == REDUCE:
            return job.ready and job.n_pending_reduces > 0
        return False

    def _pool_ok(self, job: Job, vm: VM) -> bool:
        pools = job.allowed_pools
        h = vm.host
        return (
            h.pool in pools
            or ("native" in pools and not h.virtualized)
            or ("virtual" in pools and h.virtualized)
        )

    def best_map(self, job: Job, vm: VM, pick: bool = True) -> tuple[Task, int | None] | None:
        """The pending map of ``job`` a free slot of ``vm`` gets, and its locality level.

        ``execution.task_choice`` (ModelParams) says how: "hadoop" takes the first pending
        node-local task, else the first rack-local one (a co-hosted block is rack-local to
        Hadoop, which does not know VMs), else the first of any; "nodegroup" puts the
        server level between node and rack; "lookahead" is nodegroup's order picking,
        among the first few of a level, the block with the fewest replicas on other idle
        VMs.  ``pick=False`` only finds the level (the look-ahead never changes it)."""
        if job.n_pending_maps == 0:
            return None
        host = vm.host
        rack = host.rack
        choice = self.params.task_choice
        node = (job.pending_by_vm.get(vm.id), NODE, lambda t: vm in t.block.replicas)
        server = (
            job.pending_by_host.get(host.id),
            SERVER,
            lambda t: any(r.host is host for r in t.block.replicas),
        )
        in_rack = (
            job.pending_by_rack.get(rack.id),
            RACK,
            lambda t: any(r.host.rack is rack for r in t.block.replicas),
        )
        anywhere = (job.pending_maps, OFF_RACK, lambda t: True)
        if choice == "hadoop":
            levels = (node, in_rack, anywhere)
        else:
            levels = (node, server, in_rack, anywhere)
        for lst, level, ok in levels:
            if not lst:
                continue
            while lst and not (lst[-1].state == PENDING and ok(lst[-1])):
                lst.pop()
            if not lst:
                continue
            lookahead = choice == "lookahead" and pick
            best = self._least_contended(lst, ok, vm) if lookahead else lst[-1]
            if best.block is None:
                return best, None
            if level >= RACK:  # the task's own level: a rack (or any) pick may be closer
                level = self.hdfs.locality(best.block, vm)
            return best, level
        return None  # pragma: no cover - n_pending_maps said otherwise

    def _least_contended(self, lst: list[Task], ok, vm: VM, window: int = 8) -> Task:
        first = lst[-1]
        if first.block is None or len(lst) == 1:
            return first
        best, best_n = None, 1 << 30
        seen = 0
        for i in range(len(lst) - 1, -1, -1):
            t = lst[i]
            if t.state != PENDING or not ok(t):
                continue
            n = 0
            for r in t.block.replicas:
                if r is not vm and r.free_map > 0 and r.alive:
                    n += 1
            if n < best_n:
                best, best_n = t, n
                if n == 0:
                    break
            seen += 1
            if seen >= window:
                break
        return best

    def apply(self, vm: VM, d: Decision, slot_kind: str) -> Attempt:
        """Carry out a launch decision on ``vm``'s free ``slot_kind`` slot."""
        job = self.active.get(d.job)
        if job is None:
            raise InvalidDecision(f"decision {d}: job {d.job} is not active")
        if job.allowed_pools is not None and not self._pool_ok(job, vm):
            raise InvalidDecision(
                f"decision {d}: job {job.id} may not run on pool {vm.host.pool!r}"
            )
        if d.kind == SPECULATE:
            task = self._speculation_target(job, slot_kind, vm, d.task)
            if task is None:
                raise InvalidDecision(
                    f"decision {d}: job {job.id} has no running {slot_kind} task to speculate on {vm.name}"
                )
            return self._launch(task, vm, speculative=True)
        if d.kind != slot_kind:
            raise InvalidDecision(
                f"decision {d}: a {d.kind} task cannot take a free {slot_kind} slot"
            )
        if d.kind == MAP:
            if d.task is not None:
                task = job.maps[d.task]
                if task.state != PENDING:
                    raise InvalidDecision(
                        f"decision {d}: map {d.task} of job {job.id} is not pending"
                    )
            else:
                best = self.best_map(job, vm)
                if best is None:
                    raise InvalidDecision(f"decision {d}: job {job.id} has no pending map")
                task = best[0]
        elif d.kind == REDUCE:
            if not job.ready:
                raise InvalidDecision(f"decision {d}: job {job.id}'s reduces wait for slow-start")
            if d.task is not None:
                task = job.reduces[d.task]
                if task.state != PENDING:
                    raise InvalidDecision(
                        f"decision {d}: reduce {d.task} of job {job.id} is not pending"
                    )
            else:
                lst = job.pending_reduces
                while lst and lst[-1].state != PENDING:
                    lst.pop()
                if not lst:
                    raise InvalidDecision(f"decision {d}: job {job.id} has no pending reduce")
                task = lst[-1]
        else:
            raise InvalidDecision(
                f"decision {d}: unknown kind {d.kind!r}; expected map, reduce or speculate"
            )
        return self._launch(task, vm)

    def has_speculation_target(self, job: Job, kind: str, vm: VM) -> bool:
        """Cheap check: some running ``kind`` task of the job could get a backup on ``vm``."""
        for t in job.running_set:
            if t.kind == kind and len(t.running) == 1 and t.running[0].vm is not vm:
                return True
        return False

    def cost_so_far(self) -> float:
        now = self.env.now
        spot = self.scenario.dynamics.spot
        total = 0.0
        for h in self.topo.hosts:
            up = h.up_seconds + (now - h.up_since if h.alive else 0.0)
            price = h.type.price_per_hour
            if spot is not None and (h.type.spot or h.pool == "spot"):
                price *= spot.price_factor
            total += price * up / 3600.0
        return total

    def speculation_target(self, job: Job, kind: str, vm: VM) -> Task | None:
        return self._speculation_target(job, kind, vm, None)

    def _speculation_target(self, job: Job, kind: str, vm: VM, index: int | None) -> Task | None:
        """The running task of ``kind`` with the longest estimated time left that has no
        backup copy yet and does not already run on ``vm``."""
        now = self.env.now
        if index is not None:
            t = (job.maps if kind == MAP else job.reduces)[index]
            ok = t.state == RUNNING and len(t.running) == 1 and t.running[0].vm is not vm
            return t if ok else None
        best, best_left = None, -1.0
        for t in job.running_set:
            if t.kind != kind or len(t.running) != 1:
                continue
            a = t.running[0]
            if a.vm is vm:
                continue
            elapsed = now - a.start_s
            p = a.progress(now)
            left = math.inf if p <= 0 else elapsed * (1.0 - p) / p
            if left > best_left:
                best, best_left = t, left
        return best

    def _launch(self, task: Task, vm: VM, speculative: bool = False) -> Attempt:
        job = task.job
        now = self.env.now
        att = Attempt(task, len(task.attempts), vm, now, speculative)
        task.attempts.append(att)
        task.running.append(att)
        self.attempts.append(att)
        vm.running[att] = None
        self.n_running += 1
        if task.kind == MAP:
            vm.free_map -= 1
            job.running_maps += 1
        else:
            vm.free_reduce -= 1
            job.running_reduces += 1
        if task.state == PENDING:
            self._unqueue(task)
            task.state = RUNNING
            job.running_set[task] = None
        if task.kind == MAP and task.block is not None:
            att.locality = Hdfs.locality(task.block, vm)
        gen = self._run_map(att) if task.kind == MAP else self._run_reduce(att)
        att.process = self.env.process(gen)
        return att

    # ------------------------------------------------------------------ task processes
    def _io_factor(self, hosts, job: Job) -> float:
        if any(h.virtualized for h in hosts):
            return 1.0 / (1.0 + self.params.virt_io_overhead * job.profile.virt_sensitivity)
        return 1.0

    def _cpu_factor(self, vm: VM, job: Job) -> float:
        f = 1.0
        if vm.host.virtualized:
            f /= 1.0 + self.params.virt_cpu_overhead * job.profile.virt_sensitivity
        if vm.host.type.gpus > 0:
            f *= job.profile.gpu_speedup
        return f

    def _flow(
        self,
        att: Attempt,
        links: tuple[Link, ...],
        mb: float,
        job: Job,
        extra: float = 1.0,
        tag: str = "read",
    ):
        if tag == "write":
            # a write the host's page cache can take leaves that disk to the flusher
            now = self.env.now
            links = tuple(
                link
                for link in links
                if link.host is None
                or link is not link.host.disk
                or not self.caches[link.host.id].absorb(mb, now)
            )
        hosts = []
        for link in links:
            h = link.host
            if h is not None and h not in hosts:
                hosts.append(h)
        dom0 = tuple(h for h in hosts if h.virtualized)
        w = self.engine.flow(links, mb, self._io_factor(hosts, job) * extra, dom0, tag)
        att.work = w
        return w

    def _hdfs_write_path(self, vm: VM, mb: float) -> tuple[Link, ...]:
        """Pipeline over the replicas of a new output block (one flow, all links)."""
        replicas = self.hdfs.place(self.rng.dynamic, writer=vm)
        path: list[Link] = []
        prev = vm.host
        for r in replicas:
            if r.host is not prev:
                path.extend(self.topo.path(prev, r.host))
            path.append(r.host.disk)
            prev = r.host
        if not replicas:
            path.append(vm.host.disk)
        return tuple(dict.fromkeys(path))

    def _run_map(self, att: Attempt):
        task, vm = att.task, att.vm
        job = task.job
        prof = job.profile
        noise = task.noise[att.number % len(task.noise)]
        if att.outcome != "running":
            return
        mb = task.input_mb
        if task.block is not None:
            src = self.hdfs.nearest_replica(task.block, vm)
            tries = 0
            while src is None:
                # No live replica: the DFS client asks the NameNode again a few times,
                # then the attempt fails (Hadoop's BlockMissingException).
                if tries >= self.params.block_acquire_failures:
                    self._fail(att, "missing_block")
                    return
                tries += 1
                yield self.env.timeout(self.params.block_retry_s)
                if att.outcome != "running":
                    return
                src = self.hdfs.nearest_replica(task.block, vm)
            level = self.hdfs.locality(task.block, vm)
            att.locality = level
            att.src = src
            att.read_mb = mb
            if level == NODE:
                links = (src.host.disk,)
                extra = 1.0
            elif level == SERVER:
                links = (src.host.disk,)
                extra = 1.0 - self.params.server_read_penalty
            else:
                links = (src.host.disk, *self.topo.path(src.host, vm.host))
                extra = 1.0
            yield self._flow(att, links, mb, job, extra).event
        att.phase = 1
        cpu = prof.map_cpu_s_per_mb * mb * noise
        att.cpu_s = cpu
        w = self.engine.compute(vm, cpu, self._cpu_factor(vm, job))
        att.work = w
        yield w.event
        att.phase = 2
        if job.reduces:
            out = mb * prof.map_output_ratio
            yield self._flow(att, (vm.host.disk,), out, job, tag="write").event
        else:
            out = mb * prof.output_ratio
            yield self._flow(att, self._hdfs_write_path(vm, out), out, job, tag="write").event
        att.work = None
        self._succeeded(att, out)

    def _run_reduce(self, att: Attempt):
        task, vm = att.task, att.vm
        job = task.job
        prof = job.profile
        env = self.env
        noise = task.noise[att.number % len(task.noise)]
        n_maps = len(job.maps)
        n_red = len(job.reduces)
        have: set[int] = set()
        att.fetched = 0
        att.n_maps = n_maps
        backlog: list[MapOutput] = []
        cursor = 0
        shuffled = 0.0
        my_rack = vm.host.rack
        last_round = -math.inf
        if att.outcome != "running":
            return
        while len(have) < n_maps:
            # Map-completion events reach a reduce through its TaskTracker's heartbeat, so
            # a copier learns of new outputs at most once per heartbeat period (Hadoop 1).
            wait = last_round + self.hb - env.now
            if wait > 0 and len(job.outputs) - cursor < n_maps - len(have):
                yield env.timeout(wait)
                if att.outcome != "running":
                    return
            outs = job.outputs
            while cursor < len(outs):
                o = outs[cursor]
                cursor += 1
                if not o.lost and o.map_index not in have:
                    backlog.append(o)
            backlog = [o for o in backlog if not o.lost and o.map_index not in have]
            if not backlog:
                if job.output_event is None:
                    job.output_event = env.event()
                yield job.output_event
                if att.outcome != "running":
                    return
                continue
            # group by source: this host (local disk) or a source rack
            groups: dict[tuple, list[MapOutput]] = {}
            for o in backlog:
                h = o.vm.host
                key = ("host",) if h is vm.host else ("rack", h.rack.id)
                groups.setdefault(key, []).append(o)
            order = sorted(groups.items(), key=lambda kv: -sum(o.mb for o in kv[1]))
            take = order[: self.params.parallel_copies]
            works, batch = [], []
            for key, items in take:
                mb = sum(o.mb for o in items) / n_red
                if key[0] == "host":
                    links = (vm.host.disk,)
                else:
                    src = max(items, key=lambda o: o.mb).vm.host
                    # map outputs are served from the page cache: the aggregated copy
                    # crosses the network path minus the source NIC (documented)
                    links = self.topo.path(src, vm.host)[1:] or (vm.host.nic_down,)
                w = self._flow(att, links, mb, job, tag="shuffle")
                works.append(w)
                batch.append((items, mb, key))
            att.works = works
            last_round = env.now
            taken = {id(o) for _, items in take for o in items}
            backlog = [o for o in backlog if id(o) not in taken]
            yield simpy.AllOf(env, [w.event for w in works])
            att.works = []
            att.work = None
            for items, _mb, key in batch:
                got = [o for o in items if not o.lost and o.map_index not in have]
                for o in got:
                    have.add(o.map_index)
                part = sum(o.mb for o in got) / n_red
                shuffled += part
                self.shuffle_mb += part
                if key[0] == "rack" and key[1] != my_rack.id:
                    self.shuffle_cross_rack_mb += part
            att.fetched = len(have)
        att.phase = 1
        att.read_mb = shuffled
        cpu = prof.reduce_cpu_s_per_mb * shuffled * noise
        att.cpu_s = cpu
        w = self.engine.compute(vm, cpu, self._cpu_factor(vm, job))
        att.work = w
        yield w.event
        att.phase = 2
        total_in = sum(t.input_mb for t in job.maps)
        out = total_in * prof.output_ratio / n_red
        yield self._flow(att, self._hdfs_write_path(vm, out), out, job, tag="write").event
        att.work = None
        self._succeeded(att, out)

    # ------------------------------------------------------------------ completion
    def _release(self, att: Attempt) -> None:
        task, vm = att.task, att.vm
        job = task.job
        task.running.remove(att)
        del vm.running[att]
        self.n_running -= 1
        if vm.alive:
            if task.kind == MAP:
                vm.free_map += 1
            else:
                vm.free_reduce += 1
        if task.kind == MAP:
            job.running_maps -= 1
        else:
            job.running_reduces -= 1
        if vm.alive and vm.id not in self._in_heap:
            self._schedule_beat(vm)

    def _succeeded(self, att: Attempt, out_mb: float) -> None:
        now = self.env.now
        task, vm = att.task, att.vm
        job = task.job
        att.end_s = now
        att.outcome = "success"
        self.n_success += 1
        self._release(att)
        for other in list(task.running):
            self._kill(other, "killed", requeue=False)
        task.state = DONE
        task.finish_s = now
        job.running_set.pop(task, None)
        st = job.stats[task.kind]
        st[0] += 1
        st[1] += now - att.start_s
        st[2] += att.cpu_s
        st[3] += att.read_mb
        # node speed score for LATE's SlowNodeThreshold: job's mean task time / this one's
        dur = now - att.start_s
        if dur > 0:
            ns = self.node_speed.setdefault(vm.id, [0, 0.0])
            ns[0] += 1
            ns[1] += (st[1] / st[0]) / dur
        if task.kind == MAP:
            rt = job.rate_by_type.setdefault(vm.host.type.name, [0.0, 0.0])
            rt[0] += now - att.start_s
            rt[1] += task.input_mb
            job.maps_done += 1
            task.output_vm = vm
            if job.reduces:
                job.outputs.append(MapOutput(task.index, vm, out_mb))
                if job.output_event is not None:
                    ev, job.output_event = job.output_event, None
                    ev.succeed()
                self._check_ready(job)
            elif job.maps_done == len(job.maps):
                self._job_done(job)
        else:
            job.reduces_done += 1
            if job.reduces_done == len(job.reduces):
                self._job_done(job)
        if vm.alive and self.oob and not vm.paused and not vm.host.evicting and self._has_work(vm):
            self._request_heartbeat(vm)

    def _job_done(self, job: Job) -> None:
        self._tick_job_seconds()
        self.n_completed += 1
        job.finish_s = self.env.now
        # Tasks still queued or running were re-executions after an output loss (or
        # backup copies) that the reduces no longer need: stop them, and the earlier
        # successful attempt stands.
        for t in job.maps + job.reduces:
            if t.state == DONE:
                continue
            for a in list(t.running):
                self._kill(a, "killed", requeue=False)
            self._unqueue(t)
            for a in reversed(t.attempts):
                if a.outcome == "lost_output":
                    a.outcome = "success"
                    break
            t.state = DONE
        self._retire(job)

    def _unqueue(self, t: Task) -> None:
        """Take a pending task out of the pending counters (it launches, or its job is
        over)."""
        if t.state != PENDING:
            return
        job = t.job
        if t.kind == MAP:
            job.n_pending_maps -= 1
            self.n_pending_maps -= 1
        else:
            job.n_pending_reduces -= 1
            if job.ready:
                self.n_ready_reduces -= 1

    def _retire(self, job: Job) -> None:
        """A completed or failed job leaves the active set."""
        job.running_set.clear()
        del self.active[job.id]
        self.active_list.remove(job)
        if self.progress is not None:
            self.progress(1)
        if not self.active and self._all_arrived():
            self._end(truncated=False)

    def _fail(self, att: Attempt, outcome: str) -> None:
        """The attempt FAILED (counts toward max_task_attempts; a kill does not)."""
        att.outcome = outcome
        att.end_s = self.env.now
        self._release(att)
        task = att.task
        task.failures += 1
        if task.failures >= self.params.max_task_attempts:
            self._job_failed(task.job)
        elif not task.running and task.state == RUNNING:
            self._requeue(task)

    def _job_failed(self, job: Job) -> None:
        """A task failed all its attempts: Hadoop kills the job's other tasks and fails
        it.  The job leaves the cluster; the run goes on."""
        self._tick_job_seconds()
        self.n_failed += 1
        job.failed_s = self.env.now
        for t in job.maps + job.reduces:
            for a in list(t.running):
                self._kill(a, "killed", requeue=False)
            self._unqueue(t)
        self._retire(job)

    def _kill(self, att: Attempt, outcome: str, requeue: bool = True) -> None:
        """End a running attempt now; re-queue its task when no other copy runs."""
        if att.outcome != "running":
            return
        att.outcome = outcome
        att.end_s = self.env.now
        for w in att.works:
            self.engine.cancel(w)
        if att.work is not None:
            self.engine.cancel(att.work)
        att.works = []
        att.work = None
        self._release(att)
        # The attempt's process waits on a cancelled work that never fires: it simply
        # never resumes (no Interrupt, which cannot reach a process not yet started).
        task = att.task
        if requeue and not task.running and task.state == RUNNING:
            self._requeue(task)

    def _requeue(self, task: Task) -> None:
        job = task.job
        if job.over:
            return
        task.state = PENDING
        self.n_reexecuted += 1
        job.running_set.pop(task, None)
        if task.kind == MAP:
            self._index_map(job, task)
            job.n_pending_maps += 1
            self.n_pending_maps += 1
        else:
            job.pending_reduces.append(task)
            job.n_pending_reduces += 1
            if job.ready:
                self.n_ready_reduces += 1
        self._wake_all()

    # ------------------------------------------------------------------ losses
    def _spot(self, host: Host, t_evict: float):
        notice = self.scenario.dynamics.spot.notice_s
        env = self.env
        if t_evict - notice > 0:
            yield env.timeout(t_evict - notice)
        host.evicting = True
        yield env.timeout(min(notice, t_evict))
        self.lose_host(host, "evicted")

    def _failures(self, host: Host, gen: np.random.Generator):
        """A host fails after an exponential up-time (MTBF) and is repaired ``repair_s``
        later, again and again, until the episode ends or the host is evicted."""
        env = self.env
        fail = self.scenario.dynamics.failures
        mtbf = fail.mtbf_hours * 3600.0
        while True:
            yield env.timeout(float(gen.exponential(mtbf)))
            if host.gone:
                return
            self.lose_host(host, "failed")
            yield env.timeout(fail.repair_s)
            if host.gone:
                return
            self._repair(host)

    def lose_host(self, host: Host, outcome: str) -> None:
        """A host is gone (``outcome`` "failed": until repaired; "evicted": for good):
        kill its attempts, lose its map outputs and replicas."""
        if host.gone:
            return
        evicted = outcome == "evicted"
        if evicted:
            host.gone = True
            self.hosts_evicted += 1
            if all(h.gone for h in self.topo.hosts):
                # no worker can ever run again: end now rather than idle to the time cap
                self.env.process(self._end_soon())
        if not host.alive:
            # already down for repair: an eviction now only makes it permanent (its
            # up-time, tasks and outputs were accounted for when it failed)
            host.evicting = False
            for vm in host.vms:
                if vm.datanode:
                    self.hdfs.forget(vm)
            return
        if not evicted:
            self.host_failures += 1
        # a failed host's disk survives the repair unless the scenario says otherwise
        fail = self.scenario.dynamics.failures
        durable = not evicted and (fail is None or fail.keeps_disk)
        now = self.env.now
        host.cpu.account(now)
        host.alive = False
        host.evicting = False
        host.up_seconds += now - host.up_since
        self.caches[host.id].drop()
        for vm in host.vms:
            vm.alive = False
            self._parked.pop(vm.id, None)
            for att in list(vm.running):
                self._kill(att, outcome)
            for job in self.active_list:
                if not job.reduces or job.reduces_done == len(job.reduces):
                    continue
                for o in job.outputs:
                    if o.vm is vm and not o.lost:
                        o.lost = True
                        self.outputs_lost += 1
                        t = job.maps[o.map_index]
                        if t.state == DONE:
                            for a in t.attempts:
                                if a.outcome == "success":
                                    a.outcome = "lost_output"
                            job.maps_done -= 1
                            t.state = RUNNING  # so _requeue accepts it
                            self._requeue(t)
        self.hdfs.invalidate()
        moved = []
        for vm in host.vms:
            if vm.datanode:
                moved += self.hdfs.rereplicate(vm, self.rng.dynamic, durable=durable)
        self._reindex(moved)
        self._wake_all()

    def _end_soon(self):
        yield self.env.timeout(0)  # after the eviction's own bookkeeping
        if self.active or not self._all_arrived():
            self._end(truncated=True)

    def _reindex(self, moved: list) -> None:
        """Pending maps whose blocks gained a replica can now be local there."""
        if not moved:
            return
        blocks = {b.id for b, _ in moved}
        for job in self.active_list:
            for t in job.maps:
                if t.state == PENDING and t.block is not None and t.block.id in blocks:
                    self._index_map(job, t)

    def _repair(self, host: Host) -> None:
        if host.gone or host.alive:
            return
        now = self.env.now
        host.alive = True
        host.up_since = now
        host.cpu.t_energy = now
        # a spot host repaired during its eviction notice still takes no new tasks
        t_evict = self.evict_at.get(host.id)
        if t_evict is not None:
            host.evicting = t_evict - self.scenario.dynamics.spot.notice_s <= now
        self.hdfs.invalidate()
        moved = []
        for vm in host.vms:
            vm.alive = True
            vm.free_map = vm.map_slots
            vm.free_reduce = vm.reduce_slots
            if vm.datanode:
                moved += self.hdfs.restore(vm, self.rng.dynamic)
        self._reindex(moved)
        for vm in host.vms:
            self._schedule_beat(vm)
        self._wake_all()

    # ------------------------------------------------------------------ interactive, control
    def _interactive(self, app: InteractiveApp):
        env = self.env
        spec = app.spec
        while True:
            yield env.timeout(spec.update_s)
            noise = float(app.rng.lognormal(0.0, spec.noise_sigma)) if spec.noise_sigma > 0 else 1.0
            app.set_load(app.load_at(env.now, noise))
            if app.vm.host.alive:
                app.vm.host.cpu.recompute(env.now)
                self.engine.kick()

    def _control_loop(self, period: float):
        env = self.env
        while True:
            yield env.timeout(period)
            for action in self.scheduler.control(self.view) or ():
                self.apply_control(action)

    def apply_control(self, action: Any) -> None:
        vms = self.topo.vms
        if isinstance(action, Pause):
            vm = vms[action.vm]
            if not vm.paused:
                vm.paused = True
                for att in vm.running:
                    for w in ([att.work] if att.work else []) + att.works:
                        self.engine.suspend(w)
        elif isinstance(action, Resume):
            vm = vms[action.vm]
            if vm.paused:
                vm.paused = False
                for att in vm.running:
                    for w in ([att.work] if att.work else []) + att.works:
                        self.engine.resume(w)
                self._schedule_beat(vm)
        elif isinstance(action, Throttle):
            vm = vms[action.vm]
            vm.cpu_cap = action.cpu_cap
            vm.host.cpu.recompute(self.env.now)
            self.engine.kick()
        elif isinstance(action, Kill):
            job = self.active.get(action.job)
            if job is None:
                return
            task = (job.maps if action.kind == MAP else job.reduces)[action.task]
            for a in list(task.running):
                self._kill(a, "killed")
        elif isinstance(action, Migrate):
            self.env.process(
                self._migrate(vms[action.vm], self.topo.hosts[action.host], action.downtime_s)
            )
        else:
            raise InvalidDecision(f"unknown control action {action!r}")

    def _migrate(self, vm: VM, target: Host, downtime: float):
        """Live-migrate a worker VM: paused for ``downtime``, then its running compute and
        local I/O continue on ``target``.  Its DataNode blocks move with its disk image."""
        self.apply_control(Pause(vm.id))
        yield self.env.timeout(downtime)
        if not vm.alive or not target.alive:
            return
        vm.host.vms.remove(vm)
        vm.host = target
        target.vms.append(vm)
        for att in vm.running:
            for w in ([att.work] if att.work else []) + att.works:
                if w.kind == "compute":
                    w.host = target
        self.topo._path_cache.clear()
        for job in self.active_list:  # host/rack locality of its replicas changed
            for t in job.maps:
                if t.state == PENDING and t.block is not None and vm in t.block.replicas:
                    self._index_map(job, t)
        self.apply_control(Resume(vm.id))

    def _sampler(self):
        """Fairness over time (Jain's index and lsap's distance) and interactive SLA."""
        env = self.env
        dt = self.params.sample_s
        while True:
            yield env.timeout(dt)
            jobs = [
                j
                for j in self.active_list
                if j.running_tasks or j.n_pending_maps or j.n_pending_reduces
            ]
            if len(jobs) >= 1:
                run = np.array([j.running_tasks for j in jobs], dtype=float)
                w = np.array([j.weight for j in jobs], dtype=float)
                tot = run.sum()
                if tot > 0:
                    s = run / tot
                    f = w / w.sum()
                    x = s / f
                    jain = (
                        float(x.sum() ** 2 / (len(x) * (x**2).sum())) if (x**2).sum() > 0 else 1.0
                    )
                    dist = float(np.mean(np.abs(s - f) / f))
                    self.fair_samples.append((dt, jain, dist))
            for app in self.apps:
                if app.vm.host.alive and app.response_s() > app.spec.sla_s:
                    app.violation_s += dt

    # ------------------------------------------------------------------ monitoring
    def vm_metrics(self, vm: VM) -> VmMetrics:
        cpu = rd = wr = 0.0
        for att in vm.running:
            for w in ([att.work] if att.work else []) + att.works:
                if w.kind == "compute":
                    cpu += w.cores
                elif w.tag == "write":
                    wr += w.rate
                else:
                    rd += w.rate
        app = self.app_of.get(vm.id)
        if app is not None:
            cpu += app.granted
        return VmMetrics(cpu, rd, wr, len(vm.running))

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
            io += f.rate
        return HostMetrics(
            vm_cpu,
            pool.dom0_demand(),
            host.type.cores,
            min(1.0, io / disk.capacity) if disk.capacity else 0.0,
            len(disk.flows),
            io,
        )
