"""Lee's ch. 5 job model (used by :mod:`baselines.lee_predict`): what it reads from a
simulator task log, and the log-normal phase models fitted to it.

From the log it reads the observed phase durations of one finished run of a job (the
training data, §5.2.2), and the state of a running job at a moment (the starting point of
the online remaining-time prediction, §5.4.2).

A task log is :func:`mrgym.metrics.task_log`'s list of attempts (``job``, ``task``,
``kind``, ``start``, ``end``, ``outcome``, ``speculative`` ...); any objects with those
attributes will do.  Times are the simulator's seconds; both functions return them
relative to the job's arrival, the origin of the thesis' simulation (its worker timers
start at 0).

Phases, as §5.2.2's pseudo-code uses them:

* ``arrival`` — worker arrival time: when each of the job's first ``w`` map attempts
  started (one per worker: the ``w`` workers' first tasks).  In the simulator it is the
  wait for a heartbeat of a slot with this job at its head (Fig. 5.3's scheduling and
  registration delays).
* ``map`` — duration of a successful map attempt (``end - start``).
* ``reduce1`` — first-wave shuffle + reduce, S1 + R: the pseudo-code starts the first
  wave's timers at ``map_end`` (``W[j] = map_end``; ``W[i] += S1[i] + R[i]``), so what it
  needs of a first-wave task is the time from the end of the map phase to the task's end.
  A first-wave task is a reduce attempt started before the last map finished.
* ``reduce2`` — second-wave shuffle + reduce, S2 + R: ``end - start`` of a reduce attempt
  started after the map phase.

Deviation: the thesis fits S and R separately but only ever uses their sum (S1[i] + R[i],
S2[i] + R[i+w]); the task log has one record per reduce attempt, with no time stamp
between its copy and its reduce phases, so each wave's S + R is fitted as one log-normal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import special, stats

MIN_S = 1e-3  # a phase of 0 s (a heartbeat at the very arrival) has no log; 1 ms stands in


def _kind(r) -> str:
    return str(getattr(r.kind, "value", r.kind))


def max_concurrency(spans: Iterable[tuple[float, float]]) -> int:
    """Most intervals ``[start, end)`` open at one time (an end before a start at a tie:
    a slot handed over at once is one worker, not two)."""
    pairs = list(spans)
    # (t, -1) sorts before (t, +1): ends are counted before starts at the same time
    ev = sorted([(s, 1) for s, _ in pairs] + [(e, -1) for _, e in pairs])
    best = cur = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


@dataclass
class JobObservation:
    """The phase durations of one finished run of a job (seconds; arrival-relative)."""

    n_maps: int
    n_reduces: int
    map_workers: int  # most map attempts of the job running at once (its map slots)
    reduce_workers: int  # the same for reduces (0 for a map-only job)
    jct: float  # finish - arrival
    map_end: float  # when the last map finished (arrival-relative)
    phases: dict[str, list[float]] = field(default_factory=dict)
    """``arrival``, ``map``, ``reduce1``, ``reduce2`` durations (see the module doc)."""


def job_records(records: Iterable, job: int) -> list:
    """The attempts of ``job`` in a task log, in log order."""
    return [r for r in records if r.job == job]


def observe(
    records: Sequence, job: int, arrival: float, finish: float, n_maps: int, n_reduces: int
) -> JobObservation:
    """The training data of §5.2.2 from one run of ``job`` (which finished at ``finish``).

    Only successful attempts count as task durations (a killed backup copy or a lost
    attempt ran, but its work was redone or discarded); every attempt counts towards the
    number of workers the job held."""
    recs = [r for r in job_records(records, job) if r.end is not None]
    maps = [r for r in recs if _kind(r) == "map"]
    reds = [r for r in recs if _kind(r) == "reduce"]
    ok_maps = [r for r in maps if r.outcome == "success"]
    ok_reds = [r for r in reds if r.outcome == "success"]
    if not ok_maps:
        raise ValueError(f"job {job}: no successful map attempt in the task log")
    map_end = max(r.end for r in ok_maps)
    wm = max_concurrency((r.start, r.end) for r in maps)
    wr = max_concurrency((r.start, r.end) for r in reds)
    firsts = sorted(r.start for r in maps if not r.speculative)[:wm]
    phases = {
        "arrival": [max(s - arrival, MIN_S) for s in firsts],
        "map": [max(r.end - r.start, MIN_S) for r in ok_maps],
        "reduce1": [max(r.end - map_end, MIN_S) for r in ok_reds if r.start < map_end],
        "reduce2": [max(r.end - r.start, MIN_S) for r in ok_reds if r.start >= map_end],
    }
    return JobObservation(n_maps, n_reduces, wm, wr, finish - arrival, map_end - arrival, phases)


@dataclass
class JobState:
    """A running job at time ``now`` (arrival-relative), as its task log shows it then:
    the starting point of §5.4.2's "simulation steps from the current state of the job"."""

    now: float
    n_maps: int
    n_reduces: int
    maps_done: int
    map_elapsed: np.ndarray  # how long each running map has run
    maps_started: int  # map attempts started so far (each of the first w: a worker arrived)
    map_end: float | None  # when the map phase ended, once it has
    reduces_done: int
    red1_running: int  # first-wave reduces still running
    red1_elapsed: float  # their time since map_end (0 before the map phase ends)
    red2_elapsed: np.ndarray  # how long each running second-wave reduce has run
    done_at: float | None = None  # the job's finish, when it finished by now
    durations: dict[str, list[float]] = field(default_factory=dict)
    """Durations of the phases finished by ``now`` (for refitting on the running job)."""

    @property
    def maps_pending(self) -> int:
        return self.n_maps - self.maps_done - len(self.map_elapsed)

    @property
    def reduces_running(self) -> int:
        return self.red1_running + len(self.red2_elapsed)

    @property
    def reduces_pending(self) -> int:
        return self.n_reduces - self.reduces_done - self.reduces_running


def fresh_state(n_maps: int, n_reduces: int) -> JobState:
    """A job that has just arrived: nothing started (the offline prediction)."""
    empty = np.zeros(0)
    return JobState(0.0, n_maps, n_reduces, 0, empty, 0, None, 0, 0, 0.0, empty)


def state_at(
    records: Sequence, job: int, arrival: float, now: float, n_maps: int, n_reduces: int
) -> JobState:
    """``job``'s state at absolute time ``now`` from a task log, seeing only what had
    happened by then (a finished run's log replayed: what a JobTracker knew at ``now``).

    A task is done when one of its attempts succeeded by ``now``; running when it is not
    done and an attempt had started (the earliest such attempt's start gives its elapsed
    time: a backup copy does not restart the task's clock)."""
    recs = [r for r in job_records(records, job) if r.start <= now]
    t = now - arrival

    def split(kind: str):
        done: dict[int, object] = {}
        start: dict[int, float] = {}
        for r in recs:
            if _kind(r) != kind:
                continue
            if r.outcome == "success" and r.end is not None and r.end <= now:
                done.setdefault(r.task, r)
            ended = r.end is not None and r.end <= now
            if not ended:  # running at now (whatever its outcome will be)
                start[r.task] = min(start.get(r.task, r.start), r.start)
        running = {k: v for k, v in start.items() if k not in done}
        return done, running

    mdone, mrun = split("map")
    rdone, rrun = split("reduce")
    started = sum(1 for r in recs if _kind(r) == "map" and not r.speculative)
    map_end = None
    dur: dict[str, list[float]] = {
        "map": [max(r.end - r.start, MIN_S) for r in mdone.values()],
        "reduce1": [],
        "reduce2": [],
    }
    if len(mdone) == n_maps:
        map_end = max(r.end for r in mdone.values()) - arrival
    red2: list[float] = []
    if map_end is None:  # every running reduce is in the first wave, waiting for maps
        red1_run = len(rrun)
    else:
        me = map_end + arrival
        red1_run = sum(1 for s in rrun.values() if s < me)
        red2 = [now - s for s in rrun.values() if s >= me]
        for r in rdone.values():
            key = "reduce1" if r.start < me else "reduce2"
            dur[key].append(max(r.end - (me if key == "reduce1" else r.start), MIN_S))
    done_at = None
    if len(mdone) == n_maps and len(rdone) == n_reduces:
        ends = [r.end for r in mdone.values()] + [r.end for r in rdone.values()]
        done_at = max(ends) - arrival
    return JobState(
        t,
        n_maps,
        n_reduces,
        len(mdone),
        np.array(sorted(now - s for s in mrun.values()), dtype=float),
        started,
        map_end,
        len(rdone),
        red1_run,
        0.0 if map_end is None else t - map_end,
        np.array(sorted(red2), dtype=float),
        done_at,
        dur,
    )


# --- the model: one log-normal per phase (§5.2.1, eq. 5.1) ----------------------------

PHASES = ("arrival", "map", "reduce1", "reduce2")
#: How the thesis fits a phase: by moments.  Lee §5.2.1: "Equation 5.1 shows how they [μ
#: and σ] are calculated from the mean and variance of variables", and §5.2.2 models the
#: worker arrival times "using the same method".  "mle" (maximum likelihood) is kept as an
#: option: it matches ln x's mean and variance instead of x's, so a few very short tasks
#: (a map alone on its disk: 2 s among 36 s ones) widen σ and lengthen the predicted tail.
METHODS = ("moments", "mle")
MIN_SIGMA = 1e-9  # σ = 0 (every observation equal) still samples: a point mass at e^μ


@dataclass(frozen=True)
class LogNormal:
    """ln X ~ N(μ, σ²), fitted to ``n`` observations."""

    mu: float
    sigma: float
    n: int = 0

    @classmethod
    def fit(cls, xs: Sequence[float], method: str = "moments") -> LogNormal:
        """Fit to positive durations: ``"moments"`` = the thesis' eq. 5.1 (§5.2.1: μ = ln
        E[X] − ½ ln(1 + Var/E²), σ² = ln(1 + Var/E²)); ``"mle"`` = maximum likelihood,
        ``scipy.stats.lognorm.fit(x, floc=0)``."""
        x = np.asarray(xs, dtype=float)
        if len(x) == 0:
            raise ValueError("LogNormal.fit: no observations")
        if np.any(~np.isfinite(x)) or np.any(x <= 0):
            raise ValueError("LogNormal.fit: durations must be finite and > 0")
        if len(x) == 1 or np.ptp(x) == 0:
            return cls(float(np.log(x[0])), 0.0, len(x))
        if method == "mle":
            s, _, scale = stats.lognorm.fit(x, floc=0)
            return cls(float(np.log(scale)), float(s), len(x))
        if method == "moments":
            m, v = float(x.mean()), float(x.var())
            s2 = math.log1p(v / (m * m))
            return cls(math.log(m) - 0.5 * s2, math.sqrt(s2), len(x))
        raise ValueError(f"method {method!r}: expected 'moments' or 'mle'")

    @property
    def mean(self) -> float:
        return math.exp(self.mu + 0.5 * self.sigma**2)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(x, 0.0)) - self.mu) / max(self.sigma, MIN_SIGMA)
        return special.ndtr(z)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return np.exp(self.mu + self.sigma * special.ndtri(u))

    def above(self, u: np.ndarray, e: np.ndarray | float) -> np.ndarray:
        """Durations given that they exceed ``e`` (a running task's elapsed time), from
        uniforms ``u``: X | X > e by the inverse CDF on [F(e), 1)."""
        e = np.asarray(e, dtype=float)
        lo = self.cdf(e)
        v = np.minimum(lo + (1.0 - lo) * u, 1.0 - 1e-16)
        return np.maximum(self.ppf(v), e)


@dataclass(frozen=True)
class JobModel:
    """A job's stochastic model: its task counts, its workers and one log-normal per phase
    (``reduce1``/``reduce2`` are None for a map-only job)."""

    n_maps: int
    n_reduces: int
    map_workers: int
    reduce_workers: int
    arrival: LogNormal
    map: LogNormal
    reduce1: LogNormal | None = None
    reduce2: LogNormal | None = None
    notes: tuple[str, ...] = ()

    def with_workers(self, workers: int) -> JobModel:
        """The same job on ``workers`` map workers, the reduce workers scaled with them
        (the history's reduce/map slot ratio, at least 1 when the job has reduces)."""
        if workers < 1:
            raise ValueError(f"workers {workers}: expected >= 1")
        ratio = self.reduce_workers / max(self.map_workers, 1)
        red = max(1, round(workers * ratio)) if self.n_reduces else 0
        return replace(self, map_workers=int(workers), reduce_workers=int(red))

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("n_maps", "n_reduces", "map_workers", "reduce_workers")}
        for p in PHASES:
            ln = getattr(self, p)
            d[p] = None if ln is None else {"mu": ln.mu, "sigma": ln.sigma, "n": ln.n}
        d["notes"] = list(self.notes)
        return d


def fit_model(
    observations: Sequence[JobObservation],
    method: str = "moments",
    map_workers: int | None = None,
    reduce_workers: int | None = None,
    extra: dict[str, list[float]] | None = None,
) -> JobModel:
    """Pool the phase durations of ``observations`` (runs of one job) and fit each phase.
    ``extra`` adds durations (a running job's finished tasks, for the online variant)."""
    if not observations:
        raise ValueError("fit_model: no observed run of the job")
    o0 = observations[0]
    pooled: dict[str, list[float]] = {p: [] for p in PHASES}
    for o in observations:
        for p in PHASES:
            pooled[p] += o.phases.get(p, [])
    for p, xs in (extra or {}).items():
        pooled[p] += list(xs)
    wm = map_workers or int(np.median([o.map_workers for o in observations]))
    wr = reduce_workers or int(np.median([o.reduce_workers for o in observations]))
    notes: list[str] = []
    fits: dict[str, LogNormal | None] = {
        p: LogNormal.fit(pooled[p], method) if pooled[p] else None for p in PHASES
    }
    if fits["arrival"] is None or fits["map"] is None:
        raise ValueError("fit_model: the runs have no map attempts")
    if o0.n_reduces:
        if fits["reduce1"] is None and fits["reduce2"] is None:
            raise ValueError("fit_model: the job has reduces but the runs show none finished")
        if fits["reduce2"] is None:
            fits["reduce2"] = fits["reduce1"]
            notes.append("no second-wave reduce observed: S2+R uses the first wave's model")
        if fits["reduce1"] is None:
            fits["reduce1"] = fits["reduce2"]
            notes.append("no first-wave reduce observed: S1+R uses the second wave's model")
        wr = max(wr, 1)
    return JobModel(
        o0.n_maps,
        o0.n_reduces,
        max(int(wm), 1),
        int(wr) if o0.n_reduces else 0,
        fits["arrival"],  # type: ignore[arg-type]
        fits["map"],  # type: ignore[arg-type]
        fits["reduce1"],
        fits["reduce2"],
        tuple(notes),
    )
