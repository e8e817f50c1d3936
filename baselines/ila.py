"""ILA: interference- and locality-aware scheduling (Bu, Rao, Xu — the ILA paper, §4), and
its two ablations IAO and LAO (§5.1).

* **IASM** (§4.1, §4.4, Algorithm 1). For each job, in fair-share order, the interference
  model (:mod:`baselines.ila_model`, eqs. 1-3) predicts the slowdown Ŝ_j of one more task
  of the job on the requesting VM from N_info (Table 2: the VM's, its co-hosted VMs' and
  Dom0's CPU, read/write rates, the server's I/O utilization) and the job's estimated task
  demand D̂_j (the profiler, eq. 7, :mod:`baselines.ila_profile`). Static threshold
  H = 1: accept iff Ŝ_j ≤ H. When the server has had more than one idle slot (Z_I > 1)
  for k = 20 s, the dynamic threshold H_d: accept if (Z_R + 1)/Ŝ_j > Z_R/H_d and
  Ŝ_j > H_d (then H_d = Ŝ_j), or if Ŝ_j ≤ H_d (then H_d = min(H_d − 1, Ŝ_j)); reject
  otherwise. A rejected job is skipped; if no job is accepted the VM stays idle until its
  next heartbeat (Algorithm 3's "reject node n").
* **Model** trained offline in the simulator (§4.1 "Model Training",
  :func:`baselines.ila_training.training_set` on a one-server copy of the scenario) and
  refitted online by Gauss-Newton-family least squares every ``refit_every`` = 100 new
  observations (the slowdowns of ILA's own finished maps: duration over the application's
  profiled alone time, scaled by input size).
* **LASM** (§4.2, Algorithm 2, eq. 4). Levels L0 node, L1 server, L2 rack, L3 off-rack; a
  job keeps its allowed level L_j (initially 0, set to the level of its last launch) and
  its accumulated wait W_j (time since it was first skipped after its last launch). The
  closest pending map of the job is accepted if its level L_jmin ≤ L_j or
  W_j ≥ Σ_{l=L_j}^{L_jmin−1} T̂_lj, with T̂_ij = F_j T_i / F_b (eq. 4) and T = (0.5, 5, 5) s
  ("level 0 delay ... 0.5 second. The delay intervals of other levels were all set to 5
  seconds"), F_j the job's task input size (≤ F_b, the block size); no delay at all when
  F_j/F_b ≤ 1 %.  On ila72 the KMeans and Bayes maps read 1 MB (``ila-table4``, ILA §5.2):
  48 of ILA's 789 LASM evaluations take that branch (seed 0; ``n_no_delay`` / ``n_lasm``).
* **ILA** (Algorithm 3, §4.4): fair-share job order (fewest running tasks per weight, as
  PureFair), IASM first, then LASM. **IAO** = IASM + PureFair's greedy locality (the
  simulator's task choice, no delay); **LAO** = LASM only.
* **Gate** (``IlaScheduler.gate``, the ``Scheduler`` hook): IASM alone, DECLINE where it
  admits no job (where IAO idles the slot), None elsewhere; ``ila-gate+<order>``
  (``baselines/simple.py``) composes it with another job order.  ILA's own decisions do
  not go through it.

Parameter defaults: H = 1, k = 20 s, dynamic threshold on (``dynamic=False``: §5.5's
static policies), α = 0.8 (eq. 7), refit every 100 observations,
T = (0.5, 5, 5) s, F_b = the scenario's HDFS block size.

Deviations and choices where the paper is silent:
* Ŝ is the model's prediction relative to its prediction for the same task on an idle
  server (``relative=True``): "H = 1, which means no task slowdown due to interference"
  (§4.4).  The fitted model does not predict exactly 1 without interference (its
  constants and the task-demand term give 1.0-1.4 on an idle server), and compared with
  H = 1 as it is (``relative=False``) almost every request is rejected until the dynamic
  threshold's 20 s have passed: measured on ila72 seeds 0-4, mean JCT 283 s literal vs
  159 s relative (PureFair 160 s; ``mrgym reproduce``, row ila-ablation).
* Reduce slots are served in fair order without IASM/LASM (as PureFair): the paper's
  slowdown S = T_real/T is defined on tasks with an alone time, and a reduce's time is
  mostly its wait for map outputs. Running reduces still count in N_info.
* Z_R and Z_I count the server's map slots (the slot kind being decided).
* H_d is kept per server ("Within one physical server ...") and never below H: Algorithm
  1's min(H_d − 1, Ŝ_j) could drop it under 1, a slowdown no task can have.
* The server-local map is found on the job's per-server pending list (HDFS metadata the
  master has) even when the simulator's task choice is Hadoop's VM-unaware one; in the gym
  loop ``pick_task`` names it, so ILA's and LAO's episodes equal ``run_sim``'s.
* Task demand is kept as fractions of the first worker's server (``TaskProfiler``), the
  system metrics as fractions of the requesting VM's: on a cluster of mixed host types
  the two are in different units (a limitation: every ILA scenario has one host type).
* eq. 7's *init* ("a high value") is the most demanding profiled application's demand,
  component by component (CPU, read, write) — high, but inside the range the model was
  trained on; its update interval is one heartbeat.
* The online refit's sample y = T_real / (alone time per MB × F_j) takes the training
  set's alone time of a full-block map per MB; a map under eq. 4's 1 % of a block
  (ila-table4's KMeans and Bayes, which do a block's CPU work on a small input) is left
  out of the refit, its time not being proportional to its input.
* The model's inputs are held to the training set's range before predicting: the fitted
  exponentials extrapolate without bound (measured: predictions of 10^6 and below 0 for
  inputs outside it).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from baselines.classic import fair_order, first_reduce
from baselines.ila_model import (
    InterferenceModel,
    LinearModel,
    QuadraticModel,
    prediction_error,
    r2,
)
from baselines.ila_profile import FEATURES, Demand, TaskProfiler, features, node_info
from baselines.ila_training import (
    N_COMBOS,
    TrainingSet,
    neighbour_r2,
    training_set,
    within_profile_r2,
)
from mrgym.sim.hdfs import NODE, SERVER
from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import DECLINE, MAP, Decision, DecisionContext, Scheduler, launch_map

WAITS_S = (0.5, 5.0, 5.0)  # T_0 (node -> server), T_1 (server -> rack), T_2 (rack -> any)


#: N_info's columns of a model input row: the server's state, after the task's demand
STATE = slice(FEATURES.index("c_u"), None)

SMALL_INPUT = 0.01  # eq. 4: "When the input size less than 1% of the block size" -> no delay


def adaptive_waits(input_mb: float, block_mb: float, waits=WAITS_S) -> tuple[float, ...]:
    """eq. 4: T̂_ij = F_j T_i / F_b, or 0 when F_j / F_b ≤ 0.01 (F_j capped at F_b)."""
    frac = min(input_mb, block_mb) / block_mb if block_mb > 0 else 0.0
    if frac <= SMALL_INPUT:
        return tuple(0.0 for _ in waits)
    return tuple(frac * w for w in waits)


def closest_map(ctx: DecisionContext, job):
    """The job's pending map closest to the requesting VM and its level, with the server
    level of its own (§4.2 "Server Locality-Aware Scheduling"), or None."""
    best = ctx.best_map(job)
    if best is None:
        return None
    task, level = best
    if level is None or level <= SERVER:
        return best
    host = ctx.vm.host
    for t in reversed(job.pending_by_host.get(host.id, ())):
        if t.state == PENDING and any(r.host is host for r in t.block.replicas):
            return t, SERVER
    return task, level


@dataclass
class _Server:
    h_d: float  # the dynamic threshold H_d
    idle_since: float | None = None  # since when Z_I > 1 (None: not now)


@dataclass
class InterferenceGate:
    """Algorithm 1 for one decision: static threshold H, dynamic H_d after k idle seconds."""

    H: float = 1.0
    k_s: float = 20.0
    dynamic: bool = True  # False: the static-threshold policies of §5.5 (Fig. 12)
    servers: dict = field(default_factory=dict)

    def admit(self, s_hat: float, host_id: int, z_r: int, z_i: int, now: float) -> bool:
        st = self.servers.get(host_id)
        if st is None:
            st = self.servers[host_id] = _Server(self.H)
        if z_i > 1:
            if st.idle_since is None:
                st.idle_since = now
        else:
            st.idle_since = None
        if self.dynamic and st.idle_since is not None and now - st.idle_since >= self.k_s:
            if s_hat > st.h_d and (z_r + 1) / s_hat > z_r / st.h_d:
                st.h_d = s_hat
                return True
            if s_hat <= st.h_d:
                st.h_d = max(self.H, min(st.h_d - 1.0, s_hat))
                return True
            return False
        st.h_d = self.H
        return s_hat <= self.H


@dataclass
class _Launch:
    """A map ILA launched, by ids (the scheduler's state holds no simulator objects, so
    environment snapshots and copies can deep-copy it)."""

    job: int
    task: int  # map index
    attempt: int  # index the attempt will have in task.attempts
    vm: int
    row: np.ndarray


_FITTED: dict[int, tuple[TrainingSet, InterferenceModel]] = {}


def offline_model(ts: TrainingSet) -> InterferenceModel:
    """The model fitted on a training set (§4.1 offline training), cached per process."""
    hit = _FITTED.get(id(ts))
    if hit is None or hit[0] is not ts:
        hit = _FITTED[id(ts)] = (ts, InterferenceModel().fit(ts.X, ts.y, ~ts.io_bound))
    return hit[1]


def model_accuracy(
    scenario="ila72", test_frac: float = 0.3, seed: int = 0, n_combos: int = N_COMBOS
) -> dict:
    """§5.4 (Table 5, Fig. 11) on the simulator: R² and mean prediction error |y − ŷ|/y on
    a held-out part of the training set (``n_combos`` backgrounds per profile), by class
    (I/O-bound, CPU-bound, overall), for the exponential model (log loss, the default; and
    raw SSE, the paper's), the linear and the quadratic models; and ``ceiling``, how much
    of S a flexible function of the features explains on the whole set
    (:func:`baselines.ila_training.neighbour_r2`, by class and overall, and ``control``: the
    same estimator on the same rows when S is a function of the features); each model's
    ``r2_fit`` on its own training rows; and ``cpu_sum``, the held-out R² of one
    exponential in c_u + c_a alone (:func:`cpu_sum_r2`)."""
    ts = training_set(scenario, n_combos=n_combos, seed=seed)
    train, test = ts.split(test_frac, seed)
    models = {
        "exponential": InterferenceModel(),
        "exponential-sse": InterferenceModel(loss="sse"),
        "linear": LinearModel(),
        "quadratic": QuadraticModel(),
    }
    out: dict = {"rows": len(ts), "test_rows": len(test)}
    every = np.ones(len(ts), dtype=bool)
    # the control: the same rows with S replaced by a function of their features (the
    # exponential model fitted to them), what the estimator recovers when S is one
    fitted = InterferenceModel().fit(ts.X, ts.y, ~ts.io_bound).predict(ts.X)
    out["ceiling"] = {
        "r2_io": neighbour_r2(ts, ts.io_bound),
        "r2_cpu": neighbour_r2(ts, ~ts.io_bound),
        "r2": neighbour_r2(ts, every),
        "control": neighbour_r2(dataclasses.replace(ts, y=fitted), every),
    }
    out["cpu_sum"] = cpu_sum_r2(train, test)
    for name, m in models.items():
        yhat = m.fit(train.X, train.y, ~train.io_bound).predict(test.X)
        io = test.io_bound
        out[name] = {
            "r2_fit": r2(train.y, m.predict(train.X)),
            "r2_io": r2(test.y[io], yhat[io]),
            "r2_cpu": r2(test.y[~io], yhat[~io]),
            "r2": r2(test.y, yhat),
            "error_io": prediction_error(test.y[io], yhat[io]),
            "error_cpu": prediction_error(test.y[~io], yhat[~io]),
            "error": prediction_error(test.y, yhat),
        }
    return out


def cpu_sum_r2(train: TrainingSet, test: TrainingSet) -> float:
    """Held-out R² of a one-input exponential, log S = log(a·exp(b·u) + k) with u = c_u +
    c_a (the background's CPU use, Table 2), fitted on ``train``: how much of S the CPU
    metrics alone explain, beside eqs. 1-3's eleven inputs (``model_accuracy``)."""
    cu, ca = FEATURES.index("c_u"), FEATURES.index("c_a")

    def curve(p: np.ndarray, ts: TrainingSet) -> np.ndarray:
        u = ts.X[:, cu] + ts.X[:, ca]
        return np.exp(p[0]) * np.exp(np.minimum(p[1] * u, 50.0)) + np.exp(p[2])

    fit = least_squares(lambda p: np.log(curve(p, train)) - np.log(train.y), [-3.0, 3.0, 0.0])
    return r2(test.y, curve(fit.x, test))


class IlaScheduler(Scheduler):
    """ILA (Algorithm 3): fair order, interference-aware admission, adaptive delay."""

    name = "ila"
    interference = True
    locality = True

    def __init__(
        self,
        H: float = 1.0,
        idle_k_s: float = 20.0,
        dynamic: bool = True,
        relative: bool = True,
        refit_every: int = 100,
        waits_s: tuple[float, float, float] = WAITS_S,
        alpha: float = 0.8,
        training: TrainingSet | None = None,
        n_combos: int | None = None,
        training_seed: int = 0,
    ):
        if not H >= 1.0:  # also rejects NaN
            raise ValueError(f"H: expected a slowdown threshold >= 1, got {H}")
        if not idle_k_s >= 0:
            raise ValueError(f"idle_k_s: expected seconds >= 0, got {idle_k_s}")
        if not isinstance(refit_every, int) or refit_every < 1:
            raise ValueError(f"refit_every: expected an integer >= 1, got {refit_every}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha: expected eq. 7's decay in [0, 1], got {alpha}")
        if len(waits_s) != 3 or not all(w >= 0 for w in waits_s):
            raise ValueError(f"waits_s: expected three waits >= 0 s (T_0, T_1, T_2), got {waits_s}")
        self.H = H
        self.idle_k_s = idle_k_s
        self.dynamic = dynamic
        self.relative = relative
        self.refit_every = refit_every
        self.waits_s = tuple(waits_s)
        self.alpha = alpha
        self.training = training
        self.n_combos = n_combos
        self.training_seed = training_seed
        self.reset(None)

    @staticmethod
    def model_accuracy(
        scenario="ila72", test_frac: float = 0.3, seed: int = 0, n_combos: int = N_COMBOS
    ) -> dict:
        """:func:`model_accuracy` (the reproduction reaches it through the registry)."""
        return model_accuracy(scenario, test_frac, seed, n_combos)

    @staticmethod
    def state_r2(
        observations: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        scenario="ila72",
        seed: int = 0,
        n_combos: int = N_COMBOS,
    ) -> float:
        """How much of a map's slowdown within its application the server's state at launch
        (N_info: the eight features after the task's demand) explains
        (:func:`baselines.ila_training.within_profile_r2`): on ``observations`` (as
        :meth:`observations` returns them) or, without, on the offline training set of
        ``scenario``."""
        if observations is None:
            ts = training_set(scenario, n_combos=n_combos, seed=seed)
            observations = ts.X, ts.y, ts.profile
        X, y, profile = observations
        return within_profile_r2(np.asarray(X)[:, STATE], y, profile)

    def observations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The online refit's observations so far: the model's input row at each of ILA's
        own launches, the map's slowdown (duration over its profiled alone time) and its
        application; None before any (or without the interference model)."""
        if not self._obs_y:
            return None
        return np.array(self._obs_X), np.array(self._obs_y), np.array(self._obs_profile)

    # -- state -----------------------------------------------------------------------------
    def reset(self, seed: int | None) -> None:
        # Algorithm 1's thresholds (not ``gate``: that is the Scheduler hook below)
        self.iasm = InterferenceGate(self.H, self.idle_k_s, self.dynamic)
        self.profiler = TaskProfiler(alpha=self.alpha)
        self._level: dict[int, int] = {}  # L_j
        self._since: dict[int, float] = {}  # start of W_j
        self.model: InterferenceModel | None = None
        self._ts: TrainingSet | None = None
        self._launches: list[_Launch] = []
        self._obs_X: list[np.ndarray] = []
        self._obs_y: list[float] = []
        self._obs_profile: list[str] = []  # each observation's application (diagnostics)
        self._since_refit = 0
        self.n_refits = 0
        self.n_rejected = 0  # requests where IASM/LASM left the slot idle
        self.n_gated = 0  # requests gate() declined: IASM admitted no job
        self.n_lasm = 0  # LASM evaluations of a job's closest map with input
        self.n_no_delay = 0  # of which eq. 4's first case: F_j / F_b <= 1 %, no wait at all
        self.decide_s = 0.0  # the scheduler's own time in decide() (§5.6), refits included
        self.refit_s = 0.0  # of which the online refits (a real master runs them aside)
        # and the offline model's training (or its load from the disk cache) at the first
        # map request: done before the run in the paper (§4.3), so not decision time
        self.offline_s = 0.0
        self.n_decisions = 0

    def _ensure_model(self, view) -> None:
        if self.model is not None or not self.interference:
            return
        t0 = time.thread_time()
        try:
            self._fit_offline(view)
        finally:
            self.offline_s += time.thread_time() - t0

    def _fit_offline(self, view) -> None:
        ts = self.training
        if ts is None:
            kw = {} if self.n_combos is None else {"n_combos": self.n_combos}
            ts = training_set(view.scenario, seed=self.training_seed, **kw)
        self._ts = ts
        self.model = copy.deepcopy(offline_model(ts))
        # the model is only known where it was trained: inputs are held to the training
        # set's range (an exponential extrapolates without bound), and eq. 7's "high" init
        # is the most demanding profiled application's demand, component by component
        self._lo, self._hi = ts.X.min(axis=0), ts.X.max(axis=0)
        d = np.max([v.as_array() for v in ts.demand.values()], axis=0)
        self.profiler.init = Demand(*map(float, d))
        self.profiler.interval_s = view.heartbeat_s  # eq. 7's interval: one heartbeat

    # -- online adaptation ---------------------------------------------------------------
    def _observe(self, view) -> None:
        """Slowdowns of ILA's finished maps become observations; refit every k of them."""
        ts, keep = self._ts, []
        block = view.hdfs.block_mb
        per_mb = {p: s / block for p, s in ts.alone_s.items()}
        jobs = view.all_jobs
        for ln in self._launches:
            task = jobs[ln.job].maps[ln.task]
            if len(task.attempts) <= ln.attempt:
                if task.state == PENDING:
                    keep.append(ln)  # not launched yet (should not happen): look again
                continue
            att = task.attempts[ln.attempt]
            if att.vm.id != ln.vm:
                continue  # the environment launched another task (inexact decision)
            if att.end_s is None:
                keep.append(ln)
                continue
            base = per_mb.get(task.job.profile.name)
            if att.outcome != "success" or base is None or task.input_mb <= 0:
                continue
            if task.input_mb <= SMALL_INPUT * block:
                continue  # eq. 4's small inputs: time not proportional to F_j (docstring)
            self._obs_X.append(ln.row)
            self._obs_y.append((att.end_s - att.start_s) / (base * task.input_mb))
            self._obs_profile.append(task.job.profile.name)
            self._since_refit += 1
        self._launches = keep
        if self._since_refit >= self.refit_every:
            self._since_refit = 0
            X = np.vstack([ts.X, *self._obs_X])
            y = np.concatenate([ts.y, np.asarray(self._obs_y)])
            t0 = time.thread_time()  # CPU time: other processes' load does not count
            self.model.refit(X, y)
            self.refit_s += time.thread_time() - t0
            self.n_refits += 1

    # -- the decision ----------------------------------------------------------------------
    def decide(self, ctx: DecisionContext) -> Decision:
        t0 = time.thread_time()  # CPU time: other processes' load does not count
        try:
            return self._decide(ctx)
        finally:
            self.decide_s += time.thread_time() - t0
            self.n_decisions += 1

    def _decide(self, ctx: DecisionContext) -> Decision:
        order = fair_order(ctx)
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, order)
        inputs = self._iasm_inputs(ctx)
        vm = ctx.vm
        for job in order:
            if not ctx.can_launch(job, MAP):
                continue
            row = None
            if inputs is not None:
                row = self._admitted(ctx, job, inputs)
                if row is None:
                    continue
            pick = self._locality(ctx, job) if self.locality else ctx.best_map(job)
            if pick is None:
                continue
            task = pick[0]
            if row is not None:
                self._launches.append(_Launch(job.id, task.index, len(task.attempts), vm.id, row))
            return launch_map(job.id, task.index)
        self.n_rejected += 1
        return DECLINE

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        """The map LASM (or, for IAO, the simulator's greedy choice) launches for ``job``
        here: its closest map, server level included (§4.2), which the environment's "map
        of job j" action would not name under Hadoop's VM-unaware task choice
        (``Scheduler.pick_task``)."""
        if kind != MAP or not self.locality:
            return None
        best = closest_map(ctx, job)
        return None if best is None else best[0].index

    def gate(self, ctx: DecisionContext) -> Decision | None:
        """Algorithm 1 (IASM) alone, as ``Scheduler.gate``: DECLINE where no job that can
        launch a map here is admitted (the slot ILA and IAO would leave idle for IASM),
        None otherwise, and None on reduce slots and without the interference model (LAO).
        The jobs are tried in fair order, so the thresholds' state (H_d) evolves as under
        IAO.  ILA's own ``decide`` never calls it.  The launches that follow an open gate
        are the composed order's (``baselines/simple.py``), not recorded: the online refit
        learns only from ILA's own decisions."""
        if ctx.slot_kind != MAP or not self.interference:
            return None
        inputs = self._iasm_inputs(ctx)
        for job in fair_order(ctx):
            if ctx.can_launch(job, MAP) and self._admitted(ctx, job, inputs) is not None:
                return None
        self.n_gated += 1
        return DECLINE

    def _iasm_inputs(self, ctx: DecisionContext) -> tuple | None:
        """What Algorithm 1 needs for this map request, after the model, the online refit
        and the task profiler are brought up to date: (N_info, server, Z_R, Z_I); None
        without the interference model (LAO)."""
        if not self.interference:
            return None
        view, vm, now = ctx.view, ctx.vm, ctx.now
        self._ensure_model(view)
        if now - self.profiler._last >= self.profiler.interval_s:
            self._observe(view)
        self.profiler.update(ctx.jobs, view.topology.workers[0].host, now)
        info = node_info(view, vm)
        host = vm.host
        z_i = sum(v.free_map for v in host.vms if v.alive)
        z_r = sum(v.map_slots - v.free_map for v in host.vms if v.alive)
        return info, host, z_r, z_i

    def _admitted(self, ctx: DecisionContext, job, inputs: tuple) -> np.ndarray | None:
        """IASM for one more map of ``job`` on the requesting VM: the model's input row if
        the threshold test admits it, None if it rejects it."""
        info, host, z_r, z_i = inputs
        row = np.clip(features(self.profiler.demand(job, ctx.vm), info), self._lo, self._hi)
        s_hat = self.model.predict_one(row)
        if self.relative:  # over the same task's prediction on an idle server
            idle = row.copy()
            idle[3:] = self._lo[3:]
            s_hat /= self.model.predict_one(idle)
        if not self.iasm.admit(s_hat, host.id, z_r, z_i, ctx.now):
            return None
        return row

    def _locality(self, ctx: DecisionContext, job):
        """Algorithm 2 (LASM) for one job: the task to launch, or None (job skipped)."""
        best = closest_map(ctx, job)
        if best is None:
            return None
        task, level = best
        f_b = ctx.view.hdfs.block_mb
        if task.block is None or level is None:
            return best  # no input: nothing to wait for
        waits = adaptive_waits(task.input_mb, f_b, self.waits_s)
        self.n_lasm += 1
        if not any(waits):
            self.n_no_delay += 1
        allowed = self._level.get(job.id, NODE)
        if level <= allowed:
            ok = True
        else:
            since = self._since.get(job.id)
            waited = 0.0 if since is None else ctx.now - since
            ok = waited >= sum(waits[allowed:level]) - 1e-9
        if ok:
            self._level[job.id] = level
            self._since.pop(job.id, None)
            return best
        self._since.setdefault(job.id, ctx.now)
        return None


class IaoScheduler(IlaScheduler):
    """IAO (§5.1): interference-aware admission, PureFair's greedy locality."""

    name = "iao"
    locality = False


class LaoScheduler(IlaScheduler):
    """LAO (§5.1): adaptive delay scheduling only, no interference model."""

    name = "lao"
    interference = False


__all__ = [
    "IaoScheduler",
    "IlaScheduler",
    "InterferenceGate",
    "LaoScheduler",
    "adaptive_waits",
    "closest_map",
    "model_accuracy",
    "offline_model",
]
