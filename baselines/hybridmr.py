"""HybridMR (Sharma, Wood, Das, "HybridMR: A Hierarchical MapReduce Scheduler for Hybrid
Data Centers", ICDCS 2013): a two-phase scheduler for a data center of native hosts and
virtualized hosts that also run interactive applications.

* **Phase I** (§III.A, Algorithms 1-2; ``place_job``).  An arriving MapReduce job is
  profiled (Algorithm 1: :mod:`baselines.hybridmr_profile`, a database of JCTs measured in
  the simulator at several cluster and data sizes on native and virtual training clusters,
  with linear extrapolation in data size and separate map/reduce extrapolation in cluster
  size).  Algorithm 2 places it on the native pool when its estimated JCT on the virtual
  cluster reaches its desired completion time, else on the virtual pool; transactional
  applications always run virtual (they are the interactive VMs of the scenario).
* **Phase II** (§III.B, Algorithm 3; ``control`` and a gate in ``decide``): the DRM and
  the IPS of :mod:`baselines.hybridmr_phase2`, with the IPS's budget from the linear
  regression model of :mod:`baselines.hybridmr_ips`, fitted to a profiling run's
  monitoring (:class:`LearnedPhase2`); the base class's M/M/1-PS budget is not used.
* Task assignment inside a pool is Hadoop's FairScheduler (§IV: "The Hadoop FairScheduler
  [5] scheduling policy is used"), i.e. ``fair`` (:mod:`baselines.classic`), except that
  a VM takes first the task Algorithm 3 reassigned to it.

Registered as ``hybridmr`` (both phases), ``hybridmr-phase1`` (phase I only, FairScheduler
inside the pools) and ``fifo-random`` (§IV's comparator for Fig. 8(a): "random placement of
jobs (i.e., first-come-first-served discipline)": each job goes to a pool drawn uniformly
at random, FIFO inside it).  The Native / Virtual / HybridMR cluster designs of §IV are
scenarios (:func:`design`).

Parameters and defaults
- ``desired_slack`` = 0.08.  Algorithm 2 compares the estimate with ``JCT_desired``, which
  §IV never states.  A job's ``deadline_s`` is used when it has one; otherwise
  ``JCT_desired`` = the native estimate x (1 + 0.08): a job goes native when
  virtualization would cost it more than 8 %, §II's boundary between CPU-bound jobs
  ("within 8 %") and I/O-bound ones ("7-24 % worse"), which is §III.A's "if the overhead
  is not significant, then the job is selected for deployment on the virtual cluster".
- The estimate is for the whole pool (its worker count), the job's input size.
- A profile the database lacks (not one of §IV's six benchmarks) runs anywhere: the paper
  would profile it on its training cluster first; the simulator has no such step.
- Phase II's parameters: :class:`baselines.hybridmr_phase2.Phase2`.

Deviations: see the two modules' docstrings; memory is managed only with the simulator's
guest page caches (``execution.guest_page_cache``), the one guest memory it models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.classic import FairScheduler, FifoScheduler
from baselines.hybridmr_ips import IpsModel, model_for, setup_of
from baselines.hybridmr_phase2 import Phase2
from mrgym.sim.scheduler import DECLINE, Decision, DecisionContext, Scheduler

NATIVE, VIRTUAL = "native", "virtual"


def _pools(view) -> dict[str, int]:
    """Servers with Hadoop workers per pool (the profile database's cluster size)."""
    hosts: dict[str, set[int]] = {}
    for vm in view.topology.workers:
        hosts.setdefault(vm.host.pool, set()).add(vm.host.id)
    return {pool: len(ids) for pool, ids in hosts.items()}


class Phase1:
    """Algorithm 2 over Algorithm 1's estimates (module docstring)."""

    def __init__(self, db: Any = None, desired_slack: float = 0.08):
        if not desired_slack >= 0:
            raise ValueError(f"hybridmr desired_slack: expected >= 0, got {desired_slack!r}")
        self.desired_slack = float(desired_slack)
        self._db = db
        self.placed: dict[int, str] = {}  # job id -> pool
        self.estimates: dict[int, tuple[float, float]] = {}  # job id -> (native, virtual) s

    @property
    def db(self):
        if self._db is None:
            from baselines.hybridmr_profile import ProfileDB

            self._db = ProfileDB.load_default()
        return self._db

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_db"] = None  # read-only and reloadable: snapshots need not copy it
        return state

    def place(self, job, view) -> frozenset[str] | None:
        pools = _pools(view)
        if NATIVE not in pools or VIRTUAL not in pools:
            return None  # nothing to choose between
        app = job.profile.name
        try:
            self.db.lookup(app, VIRTUAL)
        except KeyError:
            return None
        mb = job.spec.input_mb
        native = self.db.estimate(app, mb, pools[NATIVE], NATIVE).jct_s
        virtual = self.db.estimate(app, mb, pools[VIRTUAL], VIRTUAL).jct_s
        self.estimates[job.id] = (native, virtual)
        desired = job.spec.deadline_s or native * (1.0 + self.desired_slack)
        pool = NATIVE if virtual >= desired else VIRTUAL  # Algorithm 2, lines 6-10
        self.placed[job.id] = pool
        return frozenset({pool})


class LearnedPhase2(Phase2):
    """Phase II whose IPS budget comes from the regression model of
    :mod:`baselines.hybridmr_ips`, fitted to a profiling run's monitoring, and live
    monitoring (the measured request rate, Dom0's CPU); never from the simulator's CPU or
    queueing model (§III.B.2: "we stick to a linear regression model")."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._models: dict[tuple[str, str, float], IpsModel | None] = {}

    def _model(self, host, app, view) -> IpsModel | None:
        target = self.target_frac * app.spec.sla_s  # the SLA is the contract: known
        key = (host.type.name, host.pool, target)
        if key not in self._models:
            setup = setup_of(view.scenario, host)
            self._models[key] = None if setup is None else model_for(setup, target)
        return self._models[key]

    def budget(self, host, view) -> float:
        """Cores the host's Hadoop VMs may use: the co-hosted load the interactive VMs
        tolerate at their measured request rate grown by ``headroom`` (the fitted
        ``U*(λ)``), less Dom0's measured CPU; infinite without interactive VMs."""
        tolerated = float("inf")
        for vm in host.vms:
            app = view.interactive_app(vm)
            if app is None:
                continue
            model = self._model(host, app, view)
            if model is not None:
                tolerated = min(tolerated, model.tolerated(app.rps * (1.0 + self.headroom)))
        if tolerated == float("inf"):
            return tolerated
        return tolerated - view.host_metrics(host).dom0_cpu_cores


class HybridMRScheduler(Scheduler):
    """HybridMR: phase I placement, phase II DRM + IPS, FairScheduler inside the pools."""

    name = "hybridmr"

    def __init__(
        self,
        phase1: bool = True,
        phase2: bool = True,
        manage: tuple[str, ...] | list[str] | str = ("cpu", "io", "mem"),
        desired_slack: float = 0.08,
        period_s: float = 3.0,
        headroom: float = 0.2,
        min_cap: float = 0.25,
        io_min_eff: float = 0.5,
        target_frac: float = 0.5,
        resume_frac: float = 0.5,
        downtime_s: float = 1.0,
        migrate: bool = True,
        profiles: Any = None,
    ):
        if isinstance(manage, str):
            manage = tuple(m for m in manage.split("+") if m)
        if not period_s > 0:
            raise ValueError(f"hybridmr period_s: expected > 0, got {period_s!r}")
        self.phase1 = Phase1(profiles, desired_slack) if phase1 else None
        self._params = dict(
            manage=frozenset(manage),
            period_s=float(period_s),
            headroom=float(headroom),
            min_cap=float(min_cap),
            io_min_eff=float(io_min_eff),
            target_frac=float(target_frac),
            resume_frac=float(resume_frac),
            downtime_s=float(downtime_s),
            migrate=bool(migrate),
        )
        self.phase2 = LearnedPhase2(**self._params) if phase2 else None
        self.control_period_s = float(period_s) if phase2 else None
        # Hadoop speculation off: phase II kills and pauses tasks itself (results kept)
        self.inner = FairScheduler(speculation=False)
        self.n_gated = 0
        # (VM, kind, job, task) of the relaunch the last gate() decided: pick_task names it
        self._relaunch: tuple[int, str, int, int] | None = None

    def reset(self, seed: int | None) -> None:
        if self.phase1 is not None:
            self.phase1 = Phase1(self.phase1._db, self.phase1.desired_slack)
        if self.phase2 is not None:
            self.phase2 = LearnedPhase2(**self._params)
        self.n_gated = 0
        self._relaunch = None

    def place_job(self, job, view) -> frozenset[str] | None:
        return self.phase1.place(job, view) if self.phase1 is not None else None

    def control(self, view) -> list:
        return self.phase2.control(view) if self.phase2 is not None else []

    def gate(self, ctx: DecisionContext) -> Decision | None:
        """Phase II's part of the task choice (§III.B): the relaunch of a task Algorithm 3
        reassigned to this VM, or no task on a host under SLA pressure, a paused VM or a
        disk that one more map would thrash; None leaves the slot to the FairScheduler."""
        p2 = self.phase2
        self._relaunch = None
        if p2 is None:
            return None
        mine = p2.reserved_for(ctx)
        if mine is not None:
            self._relaunch = (ctx.vm.id, str(ctx.slot_kind), *mine)
            return Decision(ctx.slot_kind, *mine)
        if not p2.admits(ctx):
            self.n_gated += 1
            return DECLINE
        return None

    def decide(self, ctx: DecisionContext) -> Decision:
        gated = self.gate(ctx)
        return gated if gated is not None else self.inner.decide(ctx)

    def decide_past_gate(self, ctx: DecisionContext) -> Decision:
        # phase II's gate was asked (it may have handed a relaunch back): the Fair inside
        return self.inner.decide(ctx)

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        """The killed task that gate() just handed back to this VM (an environment's action
        names a job and a kind, and would otherwise launch the simulator's pick of the
        job's maps); elsewhere the FairScheduler's."""
        r = self._relaunch
        if r is not None and r[:3] == (ctx.vm.id, str(kind), job.id):
            return r[3]
        return self.inner.pick_task(ctx, job, kind)


class HybridMRPhase1Scheduler(HybridMRScheduler):
    """Phase I only: profile-based native/virtual placement, FairScheduler in the pools."""

    name = "hybridmr-phase1"

    def __init__(self, desired_slack: float = 0.08, profiles: Any = None):
        super().__init__(phase1=True, phase2=False, desired_slack=desired_slack, profiles=profiles)


class FifoRandomScheduler(FifoScheduler):
    """§IV's comparator: each job to a uniformly random pool (native or virtual), FIFO."""

    name = "fifo-random"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def place_job(self, job, view) -> frozenset[str] | None:
        pools = sorted(_pools(view))
        if len(pools) < 2:
            return None
        return frozenset({pools[int(self.rng.integers(len(pools)))]})


# -- §IV's cluster designs -----------------------------------------------------------------

_HOST = {"type": "opteron-2core"}
_SLOTS = {"map_slots": 2, "reduce_slots": 2}


# §IV, Benchmarks: "For transactional workloads, we use three representative applications:
# (i) RUBiS [28] ...; (ii) TPC-W [32] ...; and (iii) Olio [26]": one instance of each
INTERACTIVE_APPS = 3


def design(
    name: str, base: str = "hybrid48", apps: int | None = INTERACTIVE_APPS, in_vm: bool = True
) -> dict[str, Any]:
    """Overrides for §IV's cross-platform comparison (Fig. 9(b)-(c)) on ``base``'s workload:
    ``native`` (24 native PMs), ``virtual`` (12 PMs x 2 VMs) or ``hybrid`` (12 native PMs +
    6 PMs x 2 VMs).  All three have 24 Hadoop workers (§IV: "a 24-node native Hadoop
    cluster", "a 24-node virtual cluster (hosted on 12 PMs, each PM contain 2 VMs)", "a
    24-node hybrid cluster, consisting of 12 PMs + 12 VMs (consolidated on 6 PMs with 2 VMs
    each)"); a Xen PM also has the split architecture's DataNode VM (§II: "We adopt this
    split Hadoop architecture in this paper"; the scenario's ``hdfs.split_architecture``).

    The workload mix is the same in every design (§IV: "the workload mix is scheduled on"
    each): ``apps`` interactive applications (RUBiS, TPC-W, Olio: one each), on the virtual
    servers, one per Xen PM (§III.A: "the interactive applications by default are assigned
    to the virtual cluster"; Algorithm 2, lines 2-3); ``None``: one on every Xen PM.  The
    Native design runs none: the model runs interactive services only in VMs of a Xen host.

    ``in_vm``: an application runs inside its PM's two Hadoop VMs (§IV: "each PM contain 2
    VMs"; "migrate the collocated map/reduce tasks from the VMs running RUBiS and TPC-W").
    The model's interactive service is a VM of its own, so the two Hadoop VMs of its PM keep
    what is left of their vCPUs: (2 x 1 - the service's vCPUs) / 2 each, and the PM's vCPUs
    stay its 2 VMs' 2.  ``False``: the application is a third VM beside them (the PM's
    vCPUs then exceed its cores)."""
    if apps is not None and apps < 0:
        raise ValueError(f"hybridmr design apps: expected >= 0 or None, got {apps!r}")
    interactive = _interactive(base)
    native = {**_HOST, "native": True, "pool": NATIVE, "racks": [0], "vm": dict(_SLOTS)}
    virtual = {**_HOST, "vms_per_host": 2, "pool": VIRTUAL, "racks": [1]}
    virtual["vm"] = {"vcpus": 1, **_SLOTS}
    groups = {
        "native": [{**native, "count": 24}],
        "virtual": [{**virtual, "count": 12}],
        "hybrid": [{**native, "count": 12}, {**virtual, "count": 6}],
    }
    if name not in groups:
        raise ValueError(f"hybridmr design: expected one of {sorted(groups)}, got {name!r}")
    hosts = []
    for g in groups[name]:
        if g.get("native"):
            hosts.append(g)
            continue
        k = g["count"] if apps is None else min(apps, g["count"])
        if k:
            web = {**g, "count": k, "interactive": dict(interactive)}
            if in_vm:
                n = g["vms_per_host"]
                vcpus = (n * g["vm"]["vcpus"] - interactive["vcpus"]) / n
                if vcpus <= 0:
                    raise ValueError(
                        f"hybridmr design: an interactive VM of {interactive['vcpus']} vCPUs "
                        f"leaves nothing of {n} VMs x {g['vm']['vcpus']} vCPU"
                    )
                web["vm"] = {**g["vm"], "vcpus": vcpus}
            hosts.append(web)
        if g["count"] > k:
            hosts.append({**g, "count": g["count"] - k})
    if name != "hybrid":
        hosts = [{**g, "racks": [0]} for g in hosts]
    return {"cluster.hosts": hosts, "cluster.racks": 1 if name != "hybrid" else 2}


def _interactive(base: str) -> dict[str, Any]:
    from mrgym.config import load_scenario

    for g in load_scenario(base).cluster.hosts:
        if g.interactive is not None:
            return g.interactive.model_dump()
    raise ValueError(f"hybridmr design: scenario {base!r} has no interactive VMs")
