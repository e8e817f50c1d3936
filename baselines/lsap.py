"""lsap-sched and lsap-fair-sched: data-locality-optimal map scheduling by the linear sum
assignment problem (the lsap paper, "Investigation of Data Locality and Fairness in
MapReduce", §III.C-D; §IV.B evaluates them).

* **lsap-sched** (§III.C.2, "Algorithm skeleton of lsap-sched"). All unscheduled tasks TS
  and idle map slots ISS are considered at once: C_ij = 0 when a replica of task i's block
  is on slot j's node (``collocate``), else 1 (eq. 5); a non-square C is padded to a square
  one with dummy rows (T < IS, Fig. 3(a)) or dummy columns (T > IS, Fig. 3(b)) filled with
  1 (``expandToSquare``), solved by ``scipy.optimize.linear_sum_assignment`` (``lsap``),
  and the pairs with a dummy are dropped (``filterDummy``).  A map without input is local
  anywhere (cost 0).  Reduces as dl-sched: the oldest job whose slow-start is reached.
* **lsap-fair-sched** (§III.D, "Algorithm skeleton of lsap-fair-sched").  Groups are the
  jobs' pools (``job.spec.pool``) with rations w (``weights``, normalised to sum 1, eq. 8;
  default equal).  s_i = rt_i / Σ rt (eq. 9, rt = running maps), GFC_i = s_i / w_i (eq.
  10), sto_i = max(0, min(⌊AS·w_i − rt_i⌋, ut_i)) (eq. 12, lines 13-16; AS = all map
  slots of alive workers, ut = pending maps).  FC: β·w_i for every task of group i, then
  GFC_i for sto_i of them, the ones that could be local on an idle slot (DLT) first (lines
  18-27).  DLC = α for a (task, slot) pair that is not collocated, 0 otherwise (eq. 11,
  lines 29-33).  C = FC + DLC, padded with 1 and solved as above.  The fairness distance
  of §IV.B is d_i = |s_i − w_i| / w_i, d = mean over groups (eqs. 14-15).

The extraction of the paper lost formulas (2)-(4) and (8)-(15); the ones above are the
reconstruction from the text and the algorithm skeletons.

Parameters: lsap-sched ``round_s`` (default None: the heartbeat period); lsap-fair-sched
adds ``alpha`` = 1.0 (DLC of a non-local pair; the paper gives no value: 1 equals the GFC
of a group exactly at its ration, between Table II's "fairness-favored" and "locality-
favored" regimes), ``beta`` = 10.0 (FC of a task beyond its group's ration is β·w; no
value in the paper either: 10 puts it above the GFC of any group below its ration for
rations ≥ 0.1 — with rations under 0.1, e.g. more than 10 equal pools, set β ≥ 1 / the
smallest ration, or an over-ration group costs less than an under-ration one),
``weights`` (pool -> ration; default equal). Rations are normalised over the pools that
have active jobs (eq. 8 covers the configured groups: an idle pool's share goes to the
others here, a choice).

Rounds (the paper's model is one snapshot; Hadoop asks one slot at a time):
* A **round** starts at the first map request at sim time ≥ the last round's start +
  ``round_s``, or when the set of active jobs changed.  It solves the LSAP over every idle
  map slot of the cluster (``view.idle_vms(MAP)`` × ``free_map``, the asking slot
  included) and caches the plan {VM -> [(job, task)]}.  Each later map request of the
  round is answered from the plan, naming the task index, while that task is pending.
* A slot with no planned task left (freed after the round started, or its task was taken)
  falls back to dl-sched's rule (node-local, else rack-local, else dl-sched's random
  pick: the first pending map from a uniformly random start) over the tasks not reserved for other slots of the plan; only when every pending map
  is reserved does it take a reserved one (work-conserving).  With no plan for the job
  this is exactly dl-sched.
* Job order: §III.C.2's TS is "the set of unscheduled tasks", every job's, and so is the
  matrix: one LSAP over all pending maps of all jobs and all idle slots.  The paper's cost
  has no job term (lsap-sched has no priorities; only lsap-fair-sched's FC orders groups,
  §III.D).  A choice: ε · the job's FIFO rank is added to each row, ε so small that the
  most local assignment still wins, so only among equally local assignments do the older
  jobs' tasks go first (Hadoop's JobQueueTaskScheduler order); without it scipy's tie-break
  would pick the jobs.  A (task, slot) pair the job may not use (``can_launch``: pools,
  reduce-only VMs) gets a cost above any allowed assignment and is dropped.  Of a job's
  tasks not collocated with any idle slot only the first IS enter the matrix (their rows
  are equal, no more can be used), so T stays bounded by the local candidates + IS per job.
  Measured on ila72 (seeds 0-2): node-local maps 77.6 % (one LSAP per job in FIFO order,
  the former reading) -> 82.0 % (one LSAP), mean JCT 363 -> 361 s; without the FIFO
  tie-break 81.5 %, 360 s.  On pna60 94.6 -> 95.7 %, 124 -> 125 s.
* "Node" is the VM (mrgym's node locality); a replica on a co-hosted VM is not local.
* lsap-fair-sched's ⌊·⌋ in sto (the skeleton indexes sto tasks, so it is an integer).
* The cost of a round is one O(n³) assignment of n = max(T, IS); lsap-fair-sched's T is
  every pending map of every job, so large backlogs make rounds slow (lsap-sched's T is
  pruned as above).

MRCluster-v0 launches Hadoop's choice for "a map of job j": a planned task that is not the
one ``best_map`` would pick is counted inexact by ``EnvPolicy`` and the episode diverges
from ``run_sim`` (tests/test_lsap_sched.py measures it).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment

from baselines.classic import first_reduce, random_pending_map
from mrgym.sim.hdfs import NODE, OFF_RACK
from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
)

DUMMY_COST = 1.0  # Fig. 3: any constant keeps the optimum; the paper uses 1


# -- the paper's functions (pure, on matrices) ---------------------------------------------
def expand_to_square(c: np.ndarray, value: float = DUMMY_COST) -> np.ndarray:
    """``expandToSquare``: dummy rows (T < IS) or dummy columns (T > IS) filled with value."""
    c = np.asarray(c, dtype=float)
    t, s = c.shape
    n = max(t, s)
    out = np.full((n, n), float(value))
    out[:t, :s] = c
    return out


def lsap_assign(c: np.ndarray) -> list[tuple[int, int]]:
    """``lsap`` + ``filterDummy``: the optimal (task, slot) pairs of the T x IS cost matrix
    ``c`` (Fig. 3's padding, solved as the equivalent rectangular problem), in task order."""
    c = np.asarray(c, dtype=float)
    t, s = c.shape
    if t == 0 or s == 0:
        return []
    # Padding with a constant adds the same cost to every full matching, so the rectangular
    # problem has the padded one's optimum; scipy solves it without the n x n matrix
    # (0.5 s -> 1.4 ms per round at T = 5 000 pending maps, IS = 60; same cost)
    rows, cols = linear_sum_assignment(c)
    return [(int(i), int(j)) for i, j in zip(rows, cols)]


def greedy_assign(local: np.ndarray) -> list[tuple[int, int]]:
    """dl-sched's task-by-task choice on a snapshot (§III.C.1, Fig. 2(b)): slots in order,
    each takes the first unassigned task local to it, else the first unassigned task."""
    local = np.asarray(local, dtype=bool)
    t, s = local.shape
    taken = np.zeros(t, dtype=bool)
    pairs = []
    for j in range(s):
        free = np.flatnonzero(~taken)
        if not free.size:
            break
        loc = free[local[free, j]]
        i = int(loc[0] if loc.size else free[0])
        taken[i] = True
        pairs.append((i, j))
    return sorted(pairs)


def fair_costs(
    local: np.ndarray,
    group: np.ndarray,
    w: np.ndarray,
    rt: np.ndarray,
    all_slots: int,
    alpha: float,
    beta: float,
) -> np.ndarray:
    """lsap-fair-sched's cost matrix FC + DLC (lines 9-35 of its skeleton): ``local`` T x IS
    collocation, ``group`` the group index of each task (FIFO order within a group), ``w``
    the rations (sum 1), ``rt`` running tasks per group, ``all_slots`` = AS."""
    local = np.asarray(local, dtype=bool)
    group = np.asarray(group, dtype=int)
    w = np.asarray(w, dtype=float)
    rt = np.asarray(rt, dtype=float)
    total = rt.sum()
    s = rt / total if total > 0 else np.zeros_like(rt)  # eq. 9
    gfc = s / w  # eq. 10
    dlt = local.any(axis=1)  # tasks that can be local on some idle slot
    fc = np.empty(len(group))
    for g in range(len(w)):
        tasks = np.flatnonzero(group == g)
        ut = len(tasks)
        sto = max(0, min(math.floor(all_slots * w[g] - rt[g] + 1e-9), ut))  # eq. 12
        fc[tasks] = beta * w[g]
        chosen = np.concatenate([tasks[dlt[tasks]], tasks[~dlt[tasks]]])[:sto]
        fc[chosen] = gfc[g]
    dlc = np.where(local, 0.0, float(alpha))  # eq. 11
    return fc[:, None] + dlc


def fairness_distance(s: np.ndarray, w: np.ndarray) -> float:
    """Eqs. 14-15: the mean over groups of |s_i − w_i| / w_i."""
    s, w = np.asarray(s, dtype=float), np.asarray(w, dtype=float)
    return float(np.mean(np.abs(s - w) / w))


def lsap_sched_costs(local: np.ndarray, rank: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """lsap-sched's T x IS cost over every job's tasks: eq. 5's 0 (collocated) / 1, plus
    ε · the job's FIFO rank, ε small enough that the ranks' total over any assignment stays
    under 1 -- so the most local assignment wins and only its ties go to the older jobs.
    A pair ``allowed`` forbids costs more than any assignment of allowed pairs (dropped)."""
    local = np.asarray(local, dtype=bool)
    t, s = local.shape
    rank = np.asarray(rank, dtype=float)
    eps = 1.0 / ((rank.max(initial=0.0) + 1.0) * min(t, s) + 1.0)
    c = np.where(local, 0.0, DUMMY_COST) + eps * rank[:, None]
    return np.where(np.asarray(allowed, dtype=bool), c, 2.0 * (min(t, s) + 1.0))


def _rows_worth_solving(local: np.ndarray, n_slots: int) -> np.ndarray:
    """The job's tasks that can change the optimum: every task local to some idle slot,
    and the first ``n_slots`` of the others (their rows are equal; no more can be used)."""
    anywhere = local.any(axis=1)
    return anywhere | (np.cumsum(~anywhere) <= n_slots)


# -- the schedulers ------------------------------------------------------------------------
def _slots(view) -> list:
    """The idle map slots: each idle VM once per free map slot (topology order)."""
    return [v for v in view.idle_vms(MAP) for _ in range(v.free_map)]


def _collocated(tasks: list, slots: list) -> np.ndarray:
    """T x IS: True when a replica of the task's block is on the slot's VM (or no input)."""
    local = np.zeros((len(tasks), len(slots)), dtype=bool)
    cols: dict[int, list[int]] = {}
    for j, v in enumerate(slots):
        cols.setdefault(v.id, []).append(j)
    for i, t in enumerate(tasks):
        if t.block is None:
            local[i, :] = True
            continue
        for r in t.block.replicas:
            for j in cols.get(r.id, ()):
                local[i, j] = True
    return local


class LsapScheduler(Scheduler):
    """lsap-sched: one LSAP per round over all idle map slots (module docstring)."""

    name = "lsap-sched"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self, round_s: float | None = None):
        if round_s is not None and not (isinstance(round_s, (int, float)) and round_s > 0):
            raise ValueError(f"{self.name}.round_s: must be a number > 0 or None, got {round_s!r}")
        self.round_s = round_s
        self.rng = np.random.default_rng(0)
        self._reset_state()

    def _reset_state(self) -> None:
        self.plan: dict[int, list[tuple[int, int]]] = {}
        self._reserved: dict[int, set[int]] = {}
        self._round_at = -math.inf
        self._jobs: tuple[int, ...] = ()
        self.rounds = 0  # LSAPs solved
        self.from_plan = 0  # map launches answered from a plan
        self.fallbacks = 0  # map launches by the dl-sched fallback

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self._reset_state()

    # a round's plan --------------------------------------------------------------------
    def _assign(self, ctx: DecisionContext, slots: list) -> list[tuple[object, int, object]]:
        """(job, task, slot) triples of one round: one LSAP over every job's pending maps
        (§III.C.2's TS) and all idle slots, FIFO order breaking ties (module docstring)."""
        view = ctx.view
        pairs, rows, ranks, allowed = [], [], [], []
        for rank, job in enumerate(ctx.jobs):
            tasks = view.pending_maps(job)
            ok = np.array([view.can_launch(job, MAP, v) for v in slots], dtype=bool)
            if not tasks or not ok.any():
                continue
            local = _collocated(tasks, slots)
            keep = _rows_worth_solving(local, len(slots))
            for i in np.flatnonzero(keep):
                pairs.append((job, tasks[i]))
                rows.append(local[i])
                ranks.append(rank)
                allowed.append(ok)
        if not pairs:
            return []
        c = lsap_sched_costs(np.array(rows), np.array(ranks), np.array(allowed))
        out = []
        for i, j in lsap_assign(c):
            if allowed[i][j]:
                job, t = pairs[i]
                out.append((job, t.index, slots[j]))
        return out

    def _new_round(self, ctx: DecisionContext) -> None:
        self.plan, self._reserved = {}, {}
        self._round_at = ctx.now
        self._jobs = tuple(j.id for j in ctx.jobs)
        slots = _slots(ctx.view)
        if not slots:
            return
        self.rounds += 1
        for job, idx, vm in self._assign(ctx, slots):
            self.plan.setdefault(vm.id, []).append((job.id, idx))
            self._reserved.setdefault(job.id, set()).add(idx)

    def _due(self, ctx: DecisionContext) -> bool:
        period = self.round_s if self.round_s is not None else ctx.view.heartbeat_s
        return ctx.now >= self._round_at + period or self._jobs != tuple(j.id for j in ctx.jobs)

    # answering a slot ------------------------------------------------------------------
    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, ctx.jobs)
        if self._due(ctx):
            self._new_round(ctx)
        mine = self.plan.get(ctx.vm.id)
        while mine:
            jid, idx = mine.pop(0)
            self._reserved.get(jid, set()).discard(idx)
            job = next((j for j in ctx.jobs if j.id == jid), None)
            if job is not None and job.maps[idx].state == PENDING and ctx.can_launch(job, MAP):
                self.from_plan += 1
                return launch_map(jid, idx)
        return self._fallback(ctx)

    def _fallback(self, ctx: DecisionContext) -> Decision:
        """dl-sched over the maps no other slot of the plan reserves (module docstring)."""
        for job in ctx.jobs:
            if not ctx.can_launch(job, MAP):
                continue
            reserved = self._reserved.get(job.id)
            d = self._unreserved(ctx, job, reserved) if reserved else None
            if d is None:
                d = self._dl_sched(ctx, job)
            if d is not None:
                self.fallbacks += 1
                if reserved:
                    reserved.discard(d.task)
                return d
        return DECLINE

    def _dl_sched(self, ctx: DecisionContext, job) -> Decision | None:
        best = ctx.best_map(job)
        if best is None:
            return None
        task, level = best
        if level is not None and level < OFF_RACK:
            return launch_map(job.id, task.index)
        return launch_map(job.id, random_pending_map(job, self.rng))

    def _unreserved(self, ctx: DecisionContext, job, reserved: set[int]) -> Decision | None:
        view, vm = ctx.view, ctx.vm
        free = [t for t in job.maps if t.state == PENDING and t.index not in reserved]
        if not free:
            return None
        levels = [view.locality(t, vm) for t in free]
        lv = [NODE if x is None else x for x in levels]
        k = int(np.argmin(lv))
        if lv[k] < OFF_RACK:
            return launch_map(job.id, free[k].index)
        return launch_map(job.id, free[int(self.rng.integers(len(free)))].index)


class LsapFairScheduler(LsapScheduler):
    """lsap-fair-sched: FC + DLC over all pending maps of all groups (module docstring)."""

    name = "lsap-fair-sched"
    costs = staticmethod(fair_costs)  # reachable through the registry (the claims use it)
    distance = staticmethod(fairness_distance)
    assign = staticmethod(lsap_assign)

    def __init__(
        self,
        alpha: float = 1.0,
        beta: float = 10.0,
        weights: dict[str, float] | None = None,
        round_s: float | None = None,
    ):
        super().__init__(round_s)
        for key, v in (("alpha", alpha), ("beta", beta)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{self.name}.{key}: must be a finite number >= 0, got {v!r}")
        if weights is not None:
            bad = {k: v for k, v in weights.items() if not (isinstance(v, (int, float)) and v > 0)}
            if not weights or bad:
                raise ValueError(
                    f"{self.name}.weights: must map pools to rations > 0, got {weights!r}"
                )
        self.alpha, self.beta, self.weights = float(alpha), float(beta), weights

    def _assign(self, ctx: DecisionContext, slots: list) -> list[tuple[object, int, object]]:
        view = ctx.view
        groups = list(dict.fromkeys(j.spec.pool for j in ctx.jobs))
        if self.weights is not None:
            missing = [g for g in groups if g not in self.weights]
            if missing:
                raise ValueError(f"{self.name}.weights: no ration for pool(s) {missing}")
            w = np.array([self.weights[g] for g in groups], dtype=float)
        else:
            w = np.ones(len(groups))
        w = w / w.sum()  # eq. 8
        gi = {g: i for i, g in enumerate(groups)}
        rt = np.zeros(len(groups))
        pairs, gidx = [], []
        for job in ctx.jobs:
            rt[gi[job.spec.pool]] += job.running_maps
            for t in view.pending_maps(job):
                pairs.append((job, t))
                gidx.append(gi[job.spec.pool])
        if not pairs:
            return []
        all_slots = sum(v.map_slots for v in view.topology.workers if v.alive)
        local = _collocated([t for _, t in pairs], slots)
        c = fair_costs(local, np.array(gidx), w, rt, all_slots, self.alpha, self.beta)
        big = float(c.max()) + self.alpha + 1.0  # a pool the job may not use: never chosen
        for i, (job, _) in enumerate(pairs):
            if job.allowed_pools is not None:
                for j, v in enumerate(slots):
                    if not view.pool_ok(job, v):
                        c[i, j] = big * len(slots)
        out = []
        for i, j in lsap_assign(c):
            job, t = pairs[i]
            if job.allowed_pools is None or view.pool_ok(job, slots[j]):
                out.append((job, t.index, slots[j]))
        return out
