"""The one protocol every policy implements (docs/model.md §4).

The simulator asks a :class:`Scheduler` three kinds of question:

* ``place_job(job, view)`` when a job arrives: may restrict the job to some pools
  (HybridMR phase I: ``{"native"}`` or ``{"virtual"}``; Lee: ``{"core", "accelerator"}``);
* ``decide(ctx)`` for each free slot of a heartbeat: launch one task or decline;
* ``control(view)`` every ``control_period_s``: pause, resume, throttle, kill, migrate.

Contexts and views hand out live simulator objects for speed; policies must treat them as
read-only and may use only what Hadoop's master could see: job and HDFS metadata, the
topology, monitoring (:meth:`ClusterView.vm_metrics`, :meth:`ClusterView.host_metrics`) and
the measured demand of finished tasks — never the hidden rates of tasks not yet run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mrgym.sim.jobs import MAP, REDUCE  # one definition of the task kinds

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.jobs import Job, Task
    from mrgym.sim.topology import VM
    from mrgym.sim.view import ClusterView

SPECULATE = "speculate"
__all__ = ["MAP", "REDUCE", "SPECULATE"]


@dataclass(frozen=True)
class Decision:
    """Launch a ``kind`` task of job ``job`` (optionally the named ``task`` index), or
    decline (``kind is None``).  ``speculate`` launches a backup copy of the job's running
    task of the slot's kind with the longest estimated time left (or of ``task``)."""

    kind: str | None
    job: int | None = None
    task: int | None = None

    @property
    def declines(self) -> bool:
        return self.kind is None


DECLINE = Decision(None)


def launch_map(job: int, task: int | None = None) -> Decision:
    return Decision(MAP, job, task)


def launch_reduce(job: int, task: int | None = None) -> Decision:
    return Decision(REDUCE, job, task)


def speculate(job: int, task: int | None = None) -> Decision:
    return Decision(SPECULATE, job, task)


# -- control actions (HybridMR phase II) ----------------------------------------------------
@dataclass(frozen=True)
class Pause:
    vm: int


@dataclass(frozen=True)
class Resume:
    vm: int


@dataclass(frozen=True)
class Throttle:
    vm: int
    cpu_cap: float | None  # cores; None lifts the cap


@dataclass(frozen=True)
class Balloon:
    """Set a worker VM's balloon: ``balloon_gb`` of its memory held by the balloon driver
    (negative: granted above its configured memory).  Only the guest page caches
    (``guest_page_cache``) see guest memory."""

    vm: int
    balloon_gb: float


@dataclass(frozen=True)
class Kill:
    job: int
    kind: str
    task: int


@dataclass(frozen=True)
class Migrate:
    vm: int
    host: int
    downtime_s: float = 1.0


class DecisionContext:
    """What ``decide`` sees for one free slot.  Reused between calls (no allocation)."""

    __slots__ = ("now", "vm", "slot_kind", "jobs", "view", "free_map", "free_reduce")

    def __init__(self, view: ClusterView):
        self.view = view
        self.now = 0.0
        self.vm: VM | None = None
        self.slot_kind = MAP
        self.jobs: list[Job] = []
        self.free_map = 0
        self.free_reduce = 0

    # convenience pass-throughs
    def best_map(self, job: Job) -> tuple[Task, int | None] | None:
        """The job's best-locality pending map for this VM and its level (0 node ..
        3 off-rack; None for a map without input), or None."""
        return self.view.best_map(job, self.vm)

    def can_launch(self, job: Job, kind: str) -> bool:
        return self.view.can_launch(job, kind, self.vm)


class Scheduler:
    """Base class: override ``decide``; the other hooks have working defaults."""

    name: ClassVar[str] = "scheduler"
    #: True when the policy may speculate: VMs then keep heartbeating while tasks run.
    speculates: bool = False
    #: Period of ``control`` calls in seconds (None: never called).
    control_period_s: float | None = None
    #: True when its decisions draw random numbers (from ``reset(seed)``): ``mrgym
    #: benchmark`` then runs K samples per seed, each with its own policy seed.
    stochastic: ClassVar[bool] = False

    def reset(self, seed: int | None) -> None:
        """Called once before a run; all randomness of the policy must come from ``seed``."""

    def place_job(self, job: Job, view: ClusterView) -> frozenset[str] | None:
        """Pools the job may run in (None: anywhere)."""
        return None

    def decide(self, ctx: DecisionContext) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError

    def control(self, view: ClusterView) -> list:
        return []

    def gate(self, ctx: DecisionContext) -> Decision | None:
        """A decision this scheduler imposes on the slot whoever picks its tasks (None:
        none).  Around an agent (``MRCluster-v0(hooks_gate=True)`` with these hooks) a
        gated slot is answered without asking the agent: HybridMR keeps its SLA and I/O
        gate."""
        return None

    def decide_past_gate(self, ctx: DecisionContext) -> Decision:
        """``decide`` for a slot whose ``gate`` was already asked and imposed nothing
        (around an agent with ``hooks_gate``, where the environment asks it): the same
        decision without asking the gate a second time, whose state a second call would
        move (ILA's IASM thresholds, baselines/ila.py).  A scheduler whose ``decide`` asks
        its own ``gate`` overrides this (the compositions, ``hostcap``, ``hybridmr``).  ILA,
        IAO and LAO run the admission test inside ``decide`` too, so around their own gate
        this default runs it a second time."""
        return self.decide(ctx)

    def pick_task(self, ctx: DecisionContext, job: Job, kind: str) -> int | None:
        """The index of the task this scheduler's rule launches when it launches a ``kind``
        (map, reduce or speculate) task of ``job`` on ``ctx``'s slot; None: the
        simulator's own choice (a decision without a task).  A pure function of the
        state.  With these hooks deciding (``EnvPolicy``), the environment's actions, which
        name a job and a kind, launch this task: Hadoop's and LATE's backups are not the
        simulator's longest-time-left task."""
        return None


# -- control actions (Lee ch. 4 cloud driver) -----------------------------------------------
@dataclass(frozen=True)
class Commission:
    """Start a switched-off host (a ``standby`` host, or one decommissioned earlier): its
    workers join the cluster now, empty, and its billing starts (Lee §4.2: the cloud
    driver "decides when to add/remove what type of nodes to/from which pool")."""

    host: int


@dataclass(frozen=True)
class Decommission:
    """Release (terminate) a host that holds no HDFS data.  ``drain=False``: at once, as
    an instance termination: its running attempts and the map outputs still needed are
    lost and re-executed, like a failure.  ``drain=True``: it takes no new task and is
    released once it runs none and no active job needs its map outputs."""

    host: int
    drain: bool = False
