"""Prediction of a MapReduce job's completion-time *distribution* (Lee, "Resource
Allocation and Scheduling in Heterogeneous Cloud Environments", thesis ch. 5).

* **Task-duration model** (§5.2.1, Fig. 5.2, eq. 5.1). Each phase's task durations are
  log-normal; :class:`LogNormal` is fitted to the observed durations as the thesis does,
  by eq. 5.1 from their mean and variance (``method="moments"``), or, with
  ``method="mle"``, by maximum likelihood (``scipy.stats.lognorm.fit(x, floc=0)``: μ = ln
  scale, σ = shape).
* **Monte-Carlo** (§5.2.1 steps 1-5, §5.2.2 "Take Two" pseudo-code). Per sample: draw the
  worker arrival times (Fig. 5.3) and every task's duration, list-schedule the maps
  greedily on ``w`` workers (each task to the worker free first), set the reduce workers'
  timers to ``map_end``, run the first wave (S1 + R, one task per worker) and list-schedule
  the second wave (S2 + R); the completion time is the last task's end. ``K`` samples run
  at once (numpy arrays of shape ``(K, w)``; the loop is over tasks only).
* **Worker allocation** (§5.4.1, Figs. 5.14-5.15): P(JCT ≤ deadline) for each candidate
  number of workers; the fewest workers that reach the wanted probability.
* **Online remaining time** (§5.4.2, Fig. 5.16): the same simulation started from the
  running job's state — finished tasks are done, a running task's remaining time is drawn
  from its phase's distribution given that it has already run its elapsed time, pending
  tasks are drawn fresh; the model may be refitted on the job's own finished tasks.

Which data (the thesis' setting, §5.2.3): the model is fitted to past executions of *the
same job with the same configuration*: :func:`predict_job` runs the scenario at the
``history_seeds`` and pools job N's task durations over those runs (see
:mod:`baselines.lee_predict_model` for what each phase is in a task log). Job N must be the
same job at every history seed (profile, map and reduce counts, input size): a drawn
workload (ila72) has another job N at each seed, and pooling those would mix jobs.

Parameters: ``samples`` K = 1000 (the thesis used 10 iterations for Fig. 5.7 and 100 for
Fig. 5.5; more samples cost little here and smooth the quantiles), ``history_seeds`` 0-9
("we ran 10 experiments for each benchmark", §5.3.1), ``method`` = "moments" (eq. 5.1).

Choices where the thesis is silent, and deviations:
* Workers. The thesis' workers each run map and then shuffle/reduce tasks; Hadoop 1 (the
  simulator) has separate map and reduce slots, so the model has ``map_workers`` and
  ``reduce_workers``: by default the most attempts of the job that ran at once in each
  history run (median over runs). :func:`allocate_workers` scales both together, keeping
  the history's reduce/map slot ratio (a worker is a VM with its slots).
* ``map_end`` is the last map task's end, not the pseudo-code's ``max(W)`` over all worker
  timers (which would count a worker that arrived after the last map had started).
* S + R per wave is one log-normal (the task log has no time stamp between a reduce's copy
  and reduce phases; the pseudo-code only uses the sums). A history without a second wave
  (reduces ≤ reduce workers) has no S2 data: S2 + R then uses the first wave's model, and
  ``JobModel.notes`` says so.
* Heterogeneous hosts are pooled into one distribution per phase, as the thesis pools its
  workers (its variability is what the distribution describes).
* Randomness: one ``numpy.random.SeedSequence(seed)`` spawns a stream per phase, and every
  duration is an inverse-CDF transform of a uniform laid out per task (and per worker for
  arrivals), so two predictions with different worker counts share their task luck
  (common random numbers): P(JCT ≤ d) of a map-only job never falls as workers are added.

Known limit (the thesis' own: "the actual one is sharper than the predicted one", §5.2.2, Fig. 5.5):
the model draws task durations independently, but in the simulator an I/O-bound job's
map durations are set by how many maps share a host's disk, so the work per worker is
nearly the same in every run.  On ``lee-gpu``'s Sort (``mrgym predict --job 1``, history
seeds 0-9) each worker's share of the map time is 121-131 s in every run, while
independent draws give some workers several long maps: even drawn from the observed
durations themselves (no log-normal), the predicted p10 is 250 s against actual JCTs of
239-252 s, so the actual JCTs fall below the predicted p10-p90.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from baselines.lee_predict_model import (
    PHASES,
    JobModel,
    JobObservation,
    JobState,
    LogNormal,
    fit_model,
    fresh_state,
    observe,
    state_at,
)

__all__ = [
    "PHASES",
    "JobObservation",
    "JobState",
    "LogNormal",
    "JobModel",
    "Prediction",
    "JobPrediction",
    "WorkerAllocation",
    "fit_model",
    "simulate",
    "predict",
    "predict_remaining",
    "allocate_workers",
    "predict_job",
    "observe",
    "state_at",
]

QUANTILES = {"p10": 0.10, "p50": 0.50, "p90": 0.90, "p99": 0.99}


def _greedy(free: np.ndarray, dur: np.ndarray, last: np.ndarray) -> np.ndarray:
    """List scheduling, vectorised over the K samples: task i (column i of ``dur``) goes
    to the worker whose timer is lowest (``find worker j where W[j] = min(W)``), which
    then runs it; ``free`` (K, w) is updated in place; returns the last task end."""
    rows = np.arange(free.shape[0])
    for i in range(dur.shape[1]):
        j = free.argmin(axis=1)
        end = free[rows, j] + dur[:, i]
        free[rows, j] = end
        np.maximum(last, end, out=last)
    return last


def simulate(
    model: JobModel, samples: int = 1000, seed: int = 0, state: JobState | None = None
) -> np.ndarray:
    """``samples`` simulated completion times of the job (seconds after its arrival),
    from ``state`` (default: just arrived) — §5.2.2's pseudo-code, K samples at once."""
    if samples < 1:
        raise ValueError(f"samples {samples}: expected >= 1")
    st = state or fresh_state(model.n_maps, model.n_reduces)
    k = int(samples)
    if st.done_at is not None:
        return np.full(k, st.done_at)
    # one stream per phase; uniforms laid out task-major so that a different worker count
    # re-uses each task's (and each worker's) draw: common random numbers
    ss = np.random.SeedSequence(seed).spawn(6)
    rng = {n: np.random.default_rng(s) for n, s in zip(("arr", "map", "r1", "r2", "mr", "rr"), ss)}
    t = st.now
    if st.map_end is not None:
        map_end = np.full(k, st.map_end)
    else:
        nrun = len(st.map_elapsed)
        w = max(model.map_workers, nrun)
        free = np.empty((k, w))
        e = st.map_elapsed
        free[:, :nrun] = t + model.map.above(rng["mr"].random((nrun, k)).T, e) - e
        seen = min(max(st.maps_started, nrun), w)  # workers that have already arrived
        free[:, nrun:seen] = t
        u = rng["arr"].random((w, k)).T[:, seen:]
        free[:, seen:] = model.arrival.above(u, t)  # arrival after now (Fig. 5.3)
        last = free[:, :nrun].max(axis=1) if nrun else np.full(k, t)
        dur = model.map.ppf(rng["map"].random((st.maps_pending, k)).T)
        map_end = _greedy(free, dur, last)
    if model.n_reduces == 0:
        return map_end
    r1, r2 = model.reduce1, model.reduce2
    assert r1 is not None and r2 is not None
    ur1 = rng["r1"].random((model.n_reduces, k)).T
    ur2 = rng["r2"].random((model.n_reduces, k)).T
    if st.map_end is None:
        # first wave: one reduce per worker, running from map_end for S1 + R
        w = max(model.reduce_workers, st.red1_running)
        n1 = min(model.n_reduces - st.reduces_done, w)
        red = np.repeat(map_end[:, None], w, axis=1)
        red[:, :n1] += r1.ppf(ur1[:, :n1])
        pending2 = model.n_reduces - st.reduces_done - n1
    else:
        a, e2 = st.red1_running, st.red2_elapsed
        w = max(model.reduce_workers, a + len(e2))
        red = np.full((k, w), t)
        red[:, :a] = map_end[:, None] + r1.above(ur1[:, :a], st.red1_elapsed)
        red[:, a : a + len(e2)] = t + r2.above(ur2[:, : len(e2)], e2) - e2
        n1 = a + len(e2)
        pending2 = st.reduces_pending
    last = np.maximum(red.max(axis=1), map_end)
    np.maximum(red, map_end[:, None], out=red)  # the second wave starts after the maps
    dur = r2.ppf(ur2[:, n1 : n1 + pending2])
    return _greedy(red, dur, last)


@dataclass(frozen=True)
class Prediction:
    """Monte-Carlo outcomes (step 5, "analyze the outcomes"): seconds, sorted."""

    samples: np.ndarray
    now: float = 0.0  # arrival-relative time the prediction was made at

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.samples, q))

    @property
    def mean(self) -> float:
        return float(self.samples.mean())

    @property
    def std(self) -> float:
        return float(self.samples.std())

    def cdf(self, x: float | np.ndarray) -> np.ndarray | float:
        """P(outcome ≤ x), the empirical CDF of the samples."""
        r = np.searchsorted(self.samples, x, side="right") / len(self.samples)
        return float(r) if np.ndim(r) == 0 else r

    def summary(self) -> dict[str, float]:
        """p10, p50, p90, p99, mean and std."""
        d = {k: self.quantile(q) for k, q in QUANTILES.items()}
        d.update(mean=self.mean, std=self.std)
        return d


def predict(model: JobModel, samples: int = 1000, seed: int = 0) -> Prediction:
    """The completion-time distribution of a job about to be submitted (§5.2, §5.3)."""
    return Prediction(np.sort(simulate(model, samples, seed)))


def predict_remaining(
    model: JobModel,
    records: Sequence,
    job: int,
    arrival: float,
    now: float,
    samples: int = 1000,
    seed: int = 0,
    refit: bool = True,
    method: str = "moments",
    history: Sequence[JobObservation] = (),
) -> Prediction:
    """§5.4.2: the remaining time of ``job`` at absolute time ``now``, from its task log
    as it stood then. ``refit`` pools the job's own finished task durations with
    ``history`` (the runs ``model`` was fitted on) and refits, so the prediction learns
    this run's luck as tasks finish; the worker counts stay ``model``'s."""
    st = state_at(records, job, arrival, now, model.n_maps, model.n_reduces)
    m = model
    if refit and history:
        m = fit_model(history, method, model.map_workers, model.reduce_workers, st.durations)
    out = simulate(m, samples, seed, st) - st.now
    return Prediction(np.sort(np.maximum(out, 0.0)), st.now)


@dataclass(frozen=True)
class WorkerAllocation:
    """§5.4.1: P(JCT ≤ deadline) per candidate worker count, and the fewest workers that
    reach ``prob`` (None when no candidate does)."""

    deadline: float
    prob: float
    workers: int | None
    p_meet: dict[int, float] = field(default_factory=dict)


def allocate_workers(
    model: JobModel,
    deadline: float,
    prob: float = 0.9,
    candidates: Iterable[int] | None = None,
    samples: int = 1000,
    seed: int = 0,
) -> WorkerAllocation:
    """The number of workers needed to finish by ``deadline`` (seconds after submission)
    with probability ``prob``; every candidate (default 1..the job's task count) is
    predicted with the same random numbers."""
    if not 0 < prob <= 1:
        raise ValueError(f"prob {prob}: expected 0 < prob <= 1")
    cands = sorted(set(candidates or range(1, max(model.n_maps, model.n_reduces, 1) + 1)))
    p = {w: float(predict(model.with_workers(w), samples, seed).cdf(deadline)) for w in cands}
    best = next((w for w in cands if p[w] >= prob), None)
    return WorkerAllocation(float(deadline), float(prob), best, p)


@dataclass
class JobPrediction:
    """:func:`predict_job`'s answer: the fitted model, the predicted distribution and the
    history it came from."""

    scenario: str
    job: int
    job_name: str
    model: JobModel
    prediction: Prediction
    history_seeds: list[int]
    history_jct: list[float]
    observations: list[JobObservation]
    method: str = "moments"

    def at_workers(self, workers: int, samples: int = 1000, seed: int = 0) -> Prediction:
        """§5.3.2: the same job on ``workers`` map workers (reduce workers scaled along)."""
        return predict(self.model.with_workers(workers), samples, seed)

    def allocate(
        self,
        deadline: float,
        prob: float = 0.9,
        candidates: Iterable[int] | None = None,
        samples: int = 1000,
        seed: int = 0,
    ) -> WorkerAllocation:
        """§5.4.1: :func:`allocate_workers` on this job's model."""
        return allocate_workers(self.model, deadline, prob, candidates, samples, seed)

    def remaining(
        self,
        records: Sequence,
        arrival: float,
        now: float,
        samples: int = 1000,
        seed: int = 0,
        refit: bool = True,
        workers: int | None = None,
    ) -> Prediction:
        """§5.4.2: :func:`predict_remaining` of this job in another run's task log
        (``workers``: as if the job had that many map workers from ``now`` on)."""
        m = self.model if workers is None else self.model.with_workers(workers)
        hist = self.observations if refit else ()
        return predict_remaining(
            m, records, self.job, arrival, now, samples, seed, refit, self.method, hist
        )


def job_key(spec: Any) -> tuple[str, int, int, float]:
    """What makes two runs' job N "the same job" for §5.2.3's history: its profile, map
    count, reduce count and input size (MB)."""
    return (spec.profile.name, int(spec.n_maps), int(spec.n_reduces), float(spec.input_mb))


def describe_job(key: tuple[str, int, int, float]) -> str:
    return f"{key[0]} ({key[1]} maps, {key[2]} reduces, {key[3]:g} MB)"


def predict_job(
    scenario: Any,
    job: int,
    history_seeds: Iterable[int] = range(10),
    samples: int = 1000,
    seed: int = 0,
    scheduler: str = "dl-sched",
    workers: int | None = None,
    method: str = "moments",
    on_run: Any = None,
) -> JobPrediction:
    """Run ``scenario`` under ``scheduler`` at each history seed, fit job ``job``'s model to
    its task logs (§5.2.3: past executions of the same job) and predict its JCT
    distribution with ``samples`` Monte-Carlo samples (seed ``seed``); ``workers``
    predicts it on that many map workers instead (§5.3.2). ``on_run(seed)`` is called
    after each history run (a progress bar)."""
    from mrgym.config import load_scenario
    from mrgym.runner import build_simulation, run_sim

    sc = load_scenario(scenario)
    seeds = list(history_seeds)
    if not seeds:
        raise ValueError("history_seeds: no seed given")
    first: tuple[str, int, int, float] | None = None
    for s in seeds:  # cheap (no run): a mixed history must fail before any simulation
        specs = build_simulation(sc, scheduler, s).view.all_jobs
        if not 0 <= job < len(specs):
            raise ValueError(
                f"job {job}: expected a job id in 0..{len(specs) - 1} "
                f"({sc.name} has {len(specs)} jobs at seed {s})"
            )
        key = job_key(specs[job].spec)
        first = first or key
        if key != first:
            raise ValueError(
                f"job {job} of {sc.name} is not the same job at every history seed: seed "
                f"{seeds[0]} {describe_job(first)}, seed {s} {describe_job(key)}; the model "
                "is fitted to runs of one job (Lee §5.2.3): use a scenario with an explicit "
                "job list"
            )
    obs, jcts = [], []
    name = ""
    for s in seeds:
        r = run_sim(sc, scheduler, s)
        _, name, n_maps, arr, fin = r.jobs[job]
        if arr is None or fin is None:
            raise ValueError(
                f"job {job} ({name}) did not finish at seed {s} (run.max_sim_time_s reached?)"
            )
        n_red = len({x.task for x in r.task_log if x.job == job and x.kind == "reduce"})
        obs.append(observe(r.task_log, job, arr, fin, n_maps, n_red))
        jcts.append(fin - arr)
        if on_run is not None:
            on_run(s)
    model = fit_model(obs, method)
    if workers is not None:
        model = model.with_workers(workers)
    pred = predict(model, samples, seed)
    return JobPrediction(sc.name, job, name, model, pred, seeds, jcts, obs, method)
