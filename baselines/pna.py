"""PNA: probabilistic network-aware placement of map and reduce tasks (Shen, Sarker, Yu,
Deng — the PNA paper, §II), and the Coupling scheduler it is compared with (Tan, Meng,
Zhang, INFOCOM 2013, as PNA §I, §II-B.2, §II-C, §III and §IV describe it).

* **Costs** (§II-B). Map M_j on node D_i: C_m_ij = B_j · min_{l: L_lj = 1} h_il (eq. 1),
  B_j the block size, h the hop count (:meth:`ClusterView.hops`; a scenario's
  ``cluster.rack_hops`` gives a hop matrix). Reduce R_f on D_i: C_r_if = Σ_j Σ_p x_jp ·
  h_pi · A_jf · B_j / d_read_j (eq. 3), the intermediate data a placed map M_j holds (or
  will hold) for R_f estimated from its progress: a finished map's output is known
  (d_read = B_j), a running map's is A_jf · B_j / d_read_j.
* **Map placement** (§II-C, Algorithm 1). For the job the Fair scheduler picks (§III: "we
  used the default fair scheduling method of Hadoop for job scheduling"), every pending map
  gets P_mj = 1 − exp(−C_m_ave / C_m_ij) (eq. 4; P = 1 when C_m_ij = 0), C_m_ave the mean
  of C_m_kj over the N_m nodes with a free map slot (``view.idle_vms(MAP)``, the asking node
  included). The map with the largest P is taken; if P < P_min the job is skipped (line
  11), else it launches with probability P (lines 13-16).
* **Reduce placement** (§II-D, Algorithm 2): the same rule with eq. 3's cost over the N_r
  nodes with a free reduce slot, and never two reduces of a job on one node (line 1).
* **Coupling** (comparator). Reduces launched gradually: a job may have launched at most
  ⌈map progress × its reduces⌉ (its map progress = Σ map progress / maps, as Hadoop
  reports it); a reduce goes to the "data centrality" node — the free node (without a
  reduce of the job) with the least transmission cost to the *current* intermediate data
  (finished outputs plus each running map's output so far, §II-B.2: "Coupling Scheduler
  uses the current in-progress intermediate data size"); each reduce the map progress
  allows waits at most ``wait_beats`` = 3 heartbeats (§III) for it, then takes whatever
  node asks. Maps: a node-local map launches at once; otherwise "random peeking" launches
  a remote map with probability 1 − ρ, ρ the share of the other free map nodes that hold a
  node-local map of the job (coarse granularity: only node locality is looked at, §II-C).

Parameters: ``p_min`` = 0.4 (§III: "we set P_min to 0.4"), ``wait_beats`` = 3.

Choices where the paper is silent, and deviations:
* A job skipped by Algorithm 1/2 (P < P_min, or the coin said no) passes the slot to the
  next job in fair order, as Hadoop 1's FairScheduler.assignTasks does when a job returns
  no task. Deviation: §II-C says the algorithm "skips the current node D_i and then
  randomly selects another node" — in Hadoop the node is the one heartbeating, so the
  slot can only go to another job or stay free; it stays free only when every job declines (``next_job=False``: the
  slot is declined at the first skip; on pna60's three batches, seeds 0-1, mean JCT 254 s
  against 267 s: the idle reduce slots curb reduce-slot hogging).
* N_m / N_r are the nodes with a free slot at the decision. With out-of-band heartbeats a
  freed slot is offered at once, so the asking node is often the only one: then C_ave =
  C_ij and P = 1 − 1/e whatever the cost. pna60 runs Hadoop 1.2.1's defaults (none out of
  band, 3 s heartbeats): the asking node is alone in 0.7 % of PNA's P evaluations (72.3 %
  with out-of-band heartbeats and three racks; ``mrgym reproduce --claims pna-jct``, seeds
  0-2).
* pna60 is one rack (§III.C), so every remote map is one switch away: eq. 1's hop counts
  then separate node-local (0) from remote only, as Coupling's coarse levels do; PNA's
  fine-grained distances act on the reduces' eq. 3 through the map outputs' placement.
* Among maps of equal P the one Hadoop's task choice (``best_map``) would pick wins, so a
  local launch is the environment's "launch a map of job j" action. A remote map whose P
  beats that pick is named; MRCluster-v0 cannot express it (EnvPolicy counts it inexact).
* Reduce partitions are equal in the simulator (I_jf = output / reduces), so all pending
  reduces of a job have the same P: the job's next pending reduce is launched.
* d_read and A_jf are not separate counters here: a running map's estimate A·B/d_read
  is B_j times the job's measured output/input ratio (Hadoop's counters of its finished
  maps; 1 before any finished, where it cancels out). A map that has not progressed
  (d_read = 0) has no estimate and is left out. Coupling's "current" size is that
  estimate times the map's progress.
* §II-B.3's network-condition variant (h replaced by 1 / path rate) is
  ``distance="rate"``: s per MB of ``view.path_bandwidth`` between the nodes (0 on the
  same node). Default ``"hops"`` (eqs. 1-5 as written, and the worked example).
* Coupling: the INFOCOM paper was not available; the launch rule (reduces launched ≤
  map progress), the centrality test (the asking node's cost is the least among the free
  candidate nodes) and random peeking's probability 1 − ρ are reconstructions from PNA's
  description; a remote map is Hadoop's choice (rack-local first), ``remote_pick=
  "random"`` takes a random pending map instead (PNA §III: "a randomly picked map task";
  dl-sched's pick: the first pending map from a uniformly random start, so maps after a
  run of launched ones are likelier), which the environment cannot express. Job order is Fair's, as PNA's.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

import numpy as np

from baselines.classic import fair_order, random_pending_map
from mrgym.sim.hdfs import NODE
from mrgym.sim.jobs import Job, Task
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    REDUCE,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
    launch_reduce,
)
from mrgym.sim.topology import VM
from mrgym.sim.view import ClusterView

P_MIN = 0.4  # §III: "we set P_min to 0.4"


# -- §II-B: transmission costs and eqs. 4-5 ----------------------------------------------------
def accept_probability(c_ave: float, c_ij: float) -> float:
    """Eqs. 4-5: P = 1 − exp(−C_ave / C_ij), and 1 when C_ij = 0 (Algorithm 1, line 7)."""
    if c_ij <= 0.0:
        return 1.0
    return 1.0 - math.exp(-c_ave / c_ij)


def _probabilities(c_ave: np.ndarray, c_ij: np.ndarray) -> np.ndarray:
    """``accept_probability`` over arrays."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 1.0 - np.exp(-c_ave / c_ij)
    return np.where(c_ij > 0.0, p, 1.0)


def map_cost(view: ClusterView, task: Task, vm: VM) -> float:
    """Eq. 1: C_m_ij = B_j · min hops from ``vm`` to a replica of the task's block (0 for a
    map without input, or whose block has no live replica: nothing to transfer)."""
    block = task.block
    if block is None or not block.replicas:
        return 0.0
    return task.input_mb * min(view.hops(vm, r) for r in block.replicas)


def reduce_cost(view: ClusterView, sources: Iterable[tuple[VM, float]], vm: VM) -> float:
    """Eqs. 2-3: Σ over (node D_p holding map output, MB I_jf for this reduce) of
    h_pi · I_jf for a reduce on ``vm``."""
    return sum(view.hops(p, vm) * mb for p, mb in sources)


def estimated_output(a_jf: float, b_j: float, d_read: float) -> float | None:
    """§II-B.2: the map's final output for R_f predicted as A_jf · B_j / d_read (None
    before it has read anything)."""
    if d_read <= 0.0:
        return None
    return a_jf * b_j / d_read


class Distances:
    """PNA's distance matrix H between VMs, one row per node on first use (hops are static
    unless a control action migrates a VM: the rows are not refreshed then, a limitation
    for HybridMR-style migration), or §II-B.3's inverse path rates, fresh per query."""

    def __init__(self, view: ClusterView, distance: str = "hops"):
        if distance not in ("hops", "rate"):
            raise ValueError(f"pna.distance: expected 'hops' or 'rate', got {distance!r}")
        self.view, self.distance = view, distance
        self.vms = view.topology.vms
        self._rows: dict[int, np.ndarray] = {}

    def row(self, vm: VM) -> np.ndarray:
        """Distances from every VM (by id) to ``vm``."""
        if self.distance == "rate":
            bw = self.view.path_bandwidth
            return np.array([0.0 if v is vm else 1.0 / max(bw(v, vm), 1e-9) for v in self.vms])
        r = self._rows.get(vm.id)
        if r is None:
            hops = self.view.hops
            r = self._rows[vm.id] = np.array([hops(v, vm) for v in self.vms], dtype=float)
        return r

    def rows(self, vms: list[VM]) -> np.ndarray:
        if not vms:
            return np.zeros((0, len(self.vms)))
        return np.stack([self.row(v) for v in vms])


class _CachesDistances(Scheduler):
    """The distance cache reads the live cluster: it is left out of copies and pickles
    (environment snapshots deep-copy the scheduler) and rebuilt on next use."""

    _dist: Distances | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_dist": None}


def _runs_reduce_of(vm: VM, job: Job) -> bool:
    return any(a.task.job is job and a.task.kind == REDUCE for a in vm.running)


def _output_ratio(view: ClusterView, job: Job) -> float:
    """Measured map output / input of the job's finished maps (1 before the first)."""
    st = view.job_stats(job, MAP)
    return st["mean_out_mb"] / st["mean_mb"] if st and st["mean_mb"] > 0 else 1.0


def intermediate(view: ClusterView, job: Job, estimate: bool) -> tuple[list[int], np.ndarray]:
    """Per node holding (or building) map output of ``job``: VM ids and MB per reduce.
    ``estimate``: PNA's A·B/d_read for running maps; else their current size (Coupling)."""
    n_red = max(1, len(job.reduces))
    w: dict[int, float] = {}
    for o in view.map_outputs(job):
        w[o.vm.id] = w.get(o.vm.id, 0.0) + o.mb / n_red
    ratio = _output_ratio(view, job)
    now = view.now
    for t in job.running_set:
        if t.kind != MAP or not t.running:
            continue
        a = t.running[0]
        p = a.progress(now)  # Hadoop's progress stands in for d_read / B_j
        if p <= 0.0:
            continue  # nothing read yet: no estimate (and no output)
        full = ratio * t.input_mb / n_red
        w[a.vm.id] = w.get(a.vm.id, 0.0) + (full if estimate else full * p)
    ids = list(w)
    return ids, np.array([w[i] for i in ids], dtype=float)


class PnaScheduler(_CachesDistances):
    """PNA §II-C/D: probabilistic network-aware map and reduce placement under Fair."""

    name = "pna"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self, p_min: float = P_MIN, next_job: bool = True, distance: str = "hops"):
        if not 0.0 <= p_min <= 1.0:
            raise ValueError(f"pna.p_min: must be in [0, 1], got {p_min}")
        self.p_min, self.next_job, self.distance = p_min, next_job, distance
        if distance not in ("hops", "rate"):
            raise ValueError(f"pna.distance: expected 'hops' or 'rate', got {distance!r}")
        self.rng = np.random.default_rng(0)
        self._dist: Distances | None = None
        self.n_skipped = 0  # jobs passed over: Algorithm 2 line 1, P < P_min, or the coin
        self.n_named = 0  # remote maps named that Hadoop's task choice would not pick
        # P computations, and those where the asking node was the only free one (N = 1:
        # C_ave = C_ij, so P = 1 - 1/e whatever the cost)
        self.n_prob = self.n_alone = 0
        self.n_below = 0  # P computations under P_min (job skipped without a draw)

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self._dist = None
        self.n_skipped = self.n_named = self.n_prob = self.n_alone = self.n_below = 0

    def _distances(self, view: ClusterView) -> Distances:
        if self._dist is None or self._dist.view is not view:
            self._dist = Distances(view, self.distance)
        return self._dist

    def decide(self, ctx: DecisionContext) -> Decision:
        kind = ctx.slot_kind
        place = self._map if kind == MAP else self._reduce
        for job in fair_order(ctx):
            if not ctx.can_launch(job, kind):
                continue
            d = place(ctx, job)
            if d is not None:
                return d
            self.n_skipped += 1
            if not self.next_job:
                break
        return DECLINE

    def _count(self, n_idle: int) -> None:
        self.n_prob += 1
        self.n_alone += n_idle <= 1

    def _accept(self, p: float) -> bool:
        """Lines 10-16: skip under P_min, else launch with probability P."""
        if p < self.p_min:
            self.n_below += 1
            return False
        return p >= 1.0 or self.rng.random() < p

    def map_probabilities(self, ctx: DecisionContext, job: Job) -> tuple[list[Task], np.ndarray]:
        """Algorithm 1 lines 2-8: the job's pending maps and their P_mj on ``ctx.vm``."""
        view = ctx.view
        pend = view.pending_maps(job)
        dist = self._distances(view)
        reps = max(len(t.block.replicas) if t.block is not None else 0 for t in pend)
        # replica VM ids, padded by repeating the last (the min is unchanged); -1: none
        idx = np.full((len(pend), max(reps, 1)), -1, dtype=np.int64)
        for i, t in enumerate(pend):
            r = t.block.replicas if t.block is not None else ()
            for k in range(idx.shape[1]):
                idx[i, k] = r[min(k, len(r) - 1)].id if r else -1
        none = idx[:, 0] < 0
        idx[none] = 0
        b = np.array([t.input_mb for t in pend])
        b[none] = 0.0  # nothing to transfer: cost 0 (map_cost)
        idle = view.idle_vms(MAP)
        self._count(len(idle))
        c_ij = b * dist.row(ctx.vm)[idx].min(axis=1)
        c_kj = b * dist.rows(idle)[:, idx].min(axis=2)  # N_m x maps
        return pend, _probabilities(c_kj.mean(axis=0), c_ij)

    def _map(self, ctx: DecisionContext, job: Job) -> Decision | None:
        best = ctx.best_map(job)
        if best is None:
            return None
        task, level = best
        if level is None or level == NODE:
            return launch_map(job.id)  # C_m_ij = 0: P = 1, always assigned
        pend, p = self.map_probabilities(ctx, job)
        top = float(p.max())
        pick = next(i for i, t in enumerate(pend) if t is task)
        if p[pick] < top - 1e-12:
            pick = int(p.argmax())
        if not self._accept(top):
            return None
        if pend[pick] is task:
            return launch_map(job.id)
        self.n_named += 1
        return launch_map(job.id, pend[pick].index)

    def reduce_probability(self, ctx: DecisionContext, job: Job) -> float:
        """Algorithm 2 lines 2-8 for any of the job's (identical) pending reduces."""
        view = ctx.view
        ids, w = intermediate(view, job, estimate=True)
        if not ids:
            return 1.0  # no intermediate data placed yet: every node costs 0
        dist = self._distances(view)
        idle = view.idle_vms(REDUCE)
        self._count(len(idle))
        c_kf = dist.rows(idle)[:, ids] @ w
        c_if = float(dist.row(ctx.vm)[ids] @ w)
        return accept_probability(float(c_kf.mean()), c_if)

    def _reduce(self, ctx: DecisionContext, job: Job) -> Decision | None:
        if _runs_reduce_of(ctx.vm, job):  # Algorithm 2, line 1
            return None
        if not self._accept(self.reduce_probability(ctx, job)):
            return None
        return launch_reduce(job.id)


class CouplingScheduler(_CachesDistances):
    """Coupling (Tan et al., as PNA describes it): reduces launched with map progress at
    the data centrality node (waiting ≤ 3 heartbeats); maps by random peeking."""

    name = "coupling"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self, wait_beats: float = 3.0, remote_pick: str = "closest"):
        if remote_pick not in ("closest", "random"):
            raise ValueError(
                f"coupling.remote_pick: expected 'closest' or 'random', got {remote_pick!r}"
            )
        if wait_beats < 0:
            raise ValueError(f"coupling.wait_beats: must be >= 0, got {wait_beats}")
        self.wait_beats, self.remote_pick = wait_beats, remote_pick
        self.rng = np.random.default_rng(0)
        self._dist: Distances | None = None
        # per job, when each reduce allowed by the map progress (not launched) began to wait
        self._waiting: dict[int, deque[float]] = {}

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self._dist = None
        self._waiting.clear()

    def decide(self, ctx: DecisionContext) -> Decision:
        kind = ctx.slot_kind
        place = self._map if kind == MAP else self._reduce
        for job in fair_order(ctx):
            if ctx.can_launch(job, kind):
                d = place(ctx, job)
                if d is not None:
                    return d
        return DECLINE

    # -- maps: random peeking --------------------------------------------------------------
    def _map(self, ctx: DecisionContext, job: Job) -> Decision | None:
        best = ctx.best_map(job)
        if best is None:
            return None
        if best[1] is None or best[1] == NODE:
            return launch_map(job.id)
        view = ctx.view
        others = [v for v in view.idle_vms(MAP) if v is not ctx.vm]
        local = 0
        for v in others:
            b = view.best_map(job, v, pick=False)
            local += b is not None and b[1] == NODE
        p = 1.0 - local / len(others) if others else 1.0
        if p <= 0.0 or (p < 1.0 and self.rng.random() >= p):
            return None  # another free node can run one of the job's maps locally
        if self.remote_pick == "random":
            return launch_map(job.id, random_pending_map(job, self.rng))
        return launch_map(job.id)

    # -- reduces: wait scheduling ------------------------------------------------------------
    @staticmethod
    def map_progress(view: ClusterView, job: Job) -> float:
        """The job's map progress as Hadoop reports it: Σ task progress / maps."""
        now = view.now
        run = sum(
            t.running[0].progress(now) for t in job.running_set if t.kind == MAP and t.running
        )
        return (job.maps_done + run) / max(1, len(job.maps))

    def _reduce(self, ctx: DecisionContext, job: Job) -> Decision | None:
        view, vm = ctx.view, ctx.vm
        launched = len(job.reduces) - job.n_pending_reduces
        allowed = math.ceil(self.map_progress(view, job) * len(job.reduces) - 1e-9) - launched
        allowed = min(allowed, job.n_pending_reduces)
        waiting = self._waiting.setdefault(job.id, deque())
        while len(waiting) > max(allowed, 0):  # progress fell back (lost map outputs)
            waiting.pop()
        while len(waiting) < allowed:  # newly allowed reduces start their wait now
            waiting.append(ctx.now)
        if allowed <= 0 or _runs_reduce_of(vm, job):
            return None  # reduces do not run ahead of the maps; one per node (line 1)
        ids, w = intermediate(view, job, estimate=False)
        if ids and ctx.now - waiting[0] < self.wait_beats * view.heartbeat_s:
            if self._dist is None or self._dist.view is not view:
                self._dist = Distances(view)
            cands = [v for v in view.idle_vms(REDUCE) if not _runs_reduce_of(v, job)]
            best = float((self._dist.rows(cands)[:, ids] @ w).min())
            here = float(self._dist.row(vm)[ids] @ w)
            if here > best * (1 + 1e-9) + 1e-12:
                return None  # wait for the centrality node's heartbeat
        waiting.popleft()  # the longest-waiting allowed reduce launches here
        return launch_reduce(job.id)
