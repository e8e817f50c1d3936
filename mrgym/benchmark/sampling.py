"""One benchmark episode as a unit of work for :func:`mrgym.sweep.run_grid`: a policy,
an episode seed and, for a stochastic policy, the sample's policy seed.

The episode runs through :func:`mrgym.rows.run_row`, the function ``mrgym compare``
runs: a scheduler through ``run_sim``, a model factory through the Gymnasium loop
(``run_episode``) under the model's training settings.  A policy seed is given to the
policy instead of the episode seed: to a scheduler's ``reset`` (which the simulator calls
with the episode seed) and to a model's ``start_episode`` (which seeds its sampling)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mrgym.benchmark.protocol import METRIC_KEYS, policy_seed
from mrgym.benchmark.tracks import track_values
from mrgym.reference import reference_jct
from mrgym.rows import run_row
from mrgym.runner import make_scheduler
from mrgym.sim.scheduler import Scheduler


@dataclass(frozen=True)
class SampleTask:
    """One episode of the benchmark grid; ``index`` is its place in the grid."""

    index: int
    entrant: int  # the policy's place in the run
    policy: Any  # a registered name, or a picklable model factory (ModelSpec)
    scenario: Any  # a Scenario or a scenario name
    seed: int  # the episode seed: the workload every policy meets
    sample: int  # j in 0..K-1
    policy_seed: int | None  # None: a deterministic policy, reset with the episode seed


def sample_tasks(
    entrant: int,
    policy: Any,
    scenario: Any,
    seeds: Sequence[int],
    samples: int | None,
    start: int = 0,
) -> list[SampleTask]:
    """The episodes of one policy: a deterministic one (``samples`` None) once per seed,
    reset with the episode seed as ``mrgym compare`` runs it; a stochastic one
    ``samples`` times per seed, sample ``j`` with policy seed ``policy_seed(seed, j)``.
    ``start``: the first task's index in the grid."""
    if samples is not None and samples < 1:
        raise ValueError(f"--samples {samples}: expected at least 1")
    out = []
    for seed in seeds:
        for j in range(samples or 1):
            ps = None if samples is None else policy_seed(seed, j)
            out.append(SampleTask(start + len(out), entrant, policy, scenario, seed, j, ps))
    return out


@dataclass(frozen=True)
class SampleResult:
    index: int
    values: dict[str, float | None] | None  # METRIC_KEYS; None when the episode failed
    wall_s: float
    error: str | None = None


def run_sample(task: SampleTask) -> SampleResult:
    """The worker function (top level, so that ``spawn`` and Ray can import it).  An
    exception inside the episode comes back as ``error`` instead of stopping the whole
    grid: the other policies' finished results are worth keeping."""
    pol = task.policy
    try:
        if task.policy_seed is not None:
            pol = with_policy_seed(pol, task.policy_seed)
        row = run_row(pol, task.scenario, task.seed, {}, keep_logs=True)
        # the tracks' metrics (mrgym.benchmark.tracks); the reference JCTs are the seed's,
        # the same for every policy, computed once and kept (mrgym.disk_cache)
        row.update(track_values(row, row["_jobs"], reference_jct(task.scenario, task.seed)))
    except Exception as e:  # noqa: BLE001 - reported per policy, the run goes on
        text = " ".join(f"{type(e).__name__}: {e}".split())[:300]
        return SampleResult(task.index, None, 0.0, text)
    values = {k: _number(row.get(k)) for k in METRIC_KEYS}
    return SampleResult(task.index, values, float(row["wall_s"]))


def _number(x: Any) -> float | None:
    """A row's value as JSON keeps it: a float (flags as 0/1), None for none, NaN or inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def with_policy_seed(policy: Any, seed: int) -> Any:
    """``policy`` drawing its random choices from ``seed`` instead of the episode seed:
    a scheduler (name or object) whose ``reset`` gets ``seed``, or a model factory whose
    policies' ``start_episode`` does."""
    if isinstance(policy, str | Scheduler):
        return _reseeded(make_scheduler(policy), seed)
    return SeededFactory(policy, seed)


class _PolicySeeded:
    """Mixin put before a scheduler's own class: its ``reset`` gets the policy seed."""

    _policy_seed: int

    def reset(self, seed: int | None) -> None:
        super().reset(self._policy_seed)  # type: ignore[misc]


_SUBCLASSES: dict[type, type] = {}


def _reseeded(sched: Scheduler, seed: int) -> Scheduler:
    # a subclass, not a patched bound method: it survives the copy.deepcopy that the
    # environment makes of its hooks, and the scheduler's name and attributes stay its own
    cls = type(sched)
    sub = _SUBCLASSES.get(cls)
    if sub is None:
        sub = _SUBCLASSES[cls] = type(cls.__name__, (_PolicySeeded, cls), {})
    try:
        sched.__class__ = sub
    except TypeError as e:
        raise ValueError(
            f"{getattr(sched, 'name', cls.__name__)}: cannot give it a policy seed ({e})"
        ) from None
    sched._policy_seed = seed
    return sched


@dataclass(frozen=True)
class SeededFactory:
    """A model factory (``make_policy(env)``, e.g. ``ModelSpec``) whose policies sample
    with ``policy_seed``; its training settings (``env_kwargs``) pass through."""

    factory: Any
    policy_seed: int

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return getattr(self.factory, "env_kwargs", None) or {}

    def __call__(self, env) -> _SeededPolicy:
        return _SeededPolicy(self.factory(env), self.policy_seed)


class _SeededPolicy:
    """A policy whose ``start_episode`` gets the policy seed; the rest is the policy's."""

    def __init__(self, inner: Any, seed: int):
        self._inner, self._seed = inner, seed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def start_episode(self, seed: int) -> None:
        start = getattr(self._inner, "start_episode", None)
        if start is not None:
            start(self._seed)
