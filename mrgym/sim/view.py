"""``ClusterView``: the one read-only interface to a running simulation.

Schedulers (``Scheduler.decide`` / ``place_job`` / ``control``), the environment's
observation, action mask and rewards, and the renderer all read the cluster through it.
It hands out live simulator objects for speed; callers must treat them as read-only and
policies may use only what Hadoop's master could see: job and HDFS metadata, the topology,
monitoring (:meth:`vm_metrics`, :meth:`host_metrics`) and the measured demand of finished
tasks — never the hidden rates of tasks not yet run.  Changing the cluster goes through
decisions (``Heartbeat.answer``) and control actions only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mrgym.sim.hdfs import Hdfs
from mrgym.sim.interactive import InteractiveApp
from mrgym.sim.jobs import MAP, PENDING, Attempt, Job, MapOutput, Task
from mrgym.sim.monitoring import HostMetrics, VmMetrics
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import VM, Host, Topology

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class ClusterView:
    """Read-only facade over one :class:`~mrgym.sim.simulation.Simulation`."""

    def __init__(self, sim: Simulation):
        self._sim = sim
        self.scenario: Any = sim.scenario
        self.seed: int = sim.seed
        self.topology: Topology = sim.topo
        self.hdfs: Hdfs = sim.hdfs
        self.params: ModelParams = sim.params
        self.heartbeat_s: float = sim.hb
        self.max_time_s: float = sim.max_time

    def bind(self, tracker, monitor, dynamics) -> None:
        """The parts it reads (built after it); direct references keep queries cheap."""
        self._tracker = tracker
        self._choice = tracker.choice
        self._monitor = monitor
        self._dynamics = dynamics
        # the queries asked per decision and per job slot go straight to the part that
        # answers them (the methods below document them; these bound methods are them)
        choice = tracker.choice
        self.best_map = choice.best_map
        self.can_launch = choice.can_launch
        self.has_speculation_target = choice.has_speculation_target
        self.vm_metrics = monitor.vm_metrics
        self.host_metrics = monitor.host_metrics

    # -- time and episode state ----------------------------------------------------------
    @property
    def now(self) -> float:
        return self._sim.env.now

    @property
    def finished(self) -> bool:
        return self._sim.finished

    @property
    def truncated(self) -> bool:
        return self._sim.truncated

    # -- jobs and counters ---------------------------------------------------------------
    @property
    def jobs(self) -> list[Job]:
        """Active jobs in arrival order."""
        return self._tracker.active_list

    @property
    def all_jobs(self) -> list[Job]:
        """Every job of the episode (arrived or not), in submission order."""
        return self._tracker.jobs

    def job(self, job_id: int) -> Job:
        return self._tracker.active[job_id]

    @property
    def n_pending_maps(self) -> int:
        return self._tracker.n_pending_maps

    @property
    def n_ready_reduces(self) -> int:
        """Pending reduces of jobs past their slow-start."""
        return self._tracker.n_ready_reduces

    @property
    def n_running(self) -> int:
        return self._tracker.n_running

    @property
    def n_arrived(self) -> int:
        return self._tracker.n_arrived

    @property
    def n_unarrived(self) -> int:
        return self._tracker.n_unarrived()

    @property
    def n_completed(self) -> int:
        return self._tracker.n_completed

    @property
    def n_success(self) -> int:
        """Successful task attempts so far."""
        return self._tracker.n_success

    @property
    def total_maps(self) -> int:
        return self._tracker.total_maps

    def job_seconds_at(self, now: float) -> float:
        """Integral of the active-job count up to ``now`` (the JCT reward's clock)."""
        return self._tracker.job_seconds_at(now)

    # -- task selection helpers ----------------------------------------------------------
    def best_map(self, job: Job, vm: VM, pick: bool = True) -> tuple[Task, int | None] | None:
        """The pending map a slot of ``vm`` gets from ``job`` and its locality level
        (``execution.task_choice``); ``pick=False`` only finds the level."""
        return self._choice.best_map(job, vm, pick)

    def can_launch(self, job: Job, kind: str, vm: VM) -> bool:
        return self._choice.can_launch(job, kind, vm)

    def pool_ok(self, job: Job, vm: VM) -> bool:
        """May ``job`` run on ``vm``'s pool (``place_job``'s answer)?"""
        return job.allowed_pools is None or self._choice.pool_ok(job, vm)

    def has_speculation_target(self, job: Job, kind: str, vm: VM) -> bool:
        return self._choice.has_speculation_target(job, kind, vm)

    def speculation_target(self, job: Job, kind: str, vm: VM) -> Task | None:
        return self._choice.speculation_target(job, kind, vm)

    def pending_maps(self, job: Job) -> list[Task]:
        return [t for t in job.maps if t.state == PENDING]

    def pending_reduces(self, job: Job) -> list[Task]:
        return [t for t in job.reduces if t.state == PENDING]

    def running_attempts(self, job: Job) -> list[Attempt]:
        return [a for t in job.running_set for a in t.running]

    def reduces_ready(self, job: Job) -> bool:
        return job.reduces_ready(self.params.reduce_slowstart)

    def idle_vms(self, kind: str) -> list[VM]:
        """Alive, unpaused workers with a free slot of ``kind`` (PNA's N_m / N_r, lsap's idle
        slots): the ones that will heartbeat for it."""
        attr = "free_map" if kind == MAP else "free_reduce"
        return [
            v
            for v in self.topology.workers
            if v.alive and not v.paused and not v.host.evicting and getattr(v, attr) > 0
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
        return self._monitor.vm_metrics(vm)

    def host_metrics(self, host: Host) -> HostMetrics:
        return self._monitor.host_metrics(host)

    def cost_so_far(self) -> float:
        return self._monitor.cost_so_far()

    def job_stats(self, job: Job, kind: str) -> dict[str, float] | None:
        """Measured demand of the job's finished tasks of ``kind`` (None before the first)."""
        n, s, cpu, mb, out = job.stats[kind]
        if not n:
            return None
        return {
            "tasks": n,
            "mean_s": s / n,
            "mean_cpu_s": cpu / n,
            "mean_mb": mb / n,
            "mean_out_mb": out / n,
        }

    def rate_by_host_type(self, job: Job) -> dict[str, float]:
        """MB/s of the job's finished maps per host type (Lee §4.3 computing rate)."""
        return {k: mb / s for k, (s, mb) in job.rate_by_type.items() if s > 0}

    def node_progress_rates(self) -> dict[int, float]:
        """Per VM, the mean of (job's mean task time / task time) over its finished tasks:
        1 is an average node, below 1 a slow one (LATE's node progress)."""
        return {vid: tot / n for vid, (n, tot) in self._tracker.node_speed.items() if n}

    def interactive_apps(self) -> list[InteractiveApp]:
        return self._dynamics.apps

    def interactive_app(self, vm: VM) -> InteractiveApp | None:
        return self._dynamics.app_of.get(vm.id)

    def response_time_s(self, vm: VM) -> float | None:
        app = self._dynamics.app_of.get(vm.id)
        return None if app is None else app.response_s()
