"""Run a scenario under a scheduler: ``run_sim(scenario, scheduler, seed)``.

``scheduler`` is a :class:`~mrgym.sim.scheduler.Scheduler` object or a registered name
(``"fifo"``, ``"dl-sched"``, ... see :func:`mrgym.registry.available`).  No observation
is built: this is the fast path for sweeps.  ``run_episode(env, policy, seed)`` is the
Gymnasium loop, the one every baseline (``EnvPolicy``) and learned agent (``ModelPolicy``)
runs in.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from mrgym import registry
from mrgym.config import Scenario, load_scenario
from mrgym.metrics import TaskRecord, episode_metrics, task_log
from mrgym.reference import isolated_jct  # noqa: F401  (mrgym.runner.isolated_jct, as before)
from mrgym.sim.scheduler import Scheduler
from mrgym.sim.simulation import Simulation


@dataclass
class SimResult:
    scenario: str
    scheduler: str
    seed: int
    metrics: dict[str, Any]
    task_log: list[TaskRecord]
    wall_s: float
    stats: dict[str, Any] = field(default_factory=dict)
    jobs: list[tuple[int, str, int, float | None, float | None]] = field(default_factory=list)
    """(job id, name, maps, arrival, finish) of every job."""


def make_scheduler(scheduler: Scheduler | str, **params) -> Scheduler:
    if isinstance(scheduler, Scheduler):
        return scheduler
    if not isinstance(scheduler, str):
        raise ValueError(
            "scheduler: expected a Scheduler or a registered name such as 'fifo', "
            f"got {type(scheduler).__name__}"
        )
    return registry.make(scheduler, **params)


def check_seed(seed: Any) -> int:
    """The episode seed as an int; refused unless an integer in [0, 2**63).

    ``None`` is refused too: numpy would then seed from the OS and two runs of the same
    call would differ, which breaks every comparison built on seeds."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed: expected an integer >= 0, got {seed!r}")
    if not 0 <= seed < 2**63:  # numpy's SeedSequence takes non-negative integers
        raise ValueError(f"seed: expected an integer >= 0 and < 2**63, got {seed}")
    return int(seed)


def build_simulation(
    scenario: Scenario | str | dict, scheduler: Scheduler | str, seed: int, progress=None
) -> Simulation:
    seed = check_seed(seed)
    return Simulation(load_scenario(scenario), make_scheduler(scheduler), seed, progress=progress)


Progress = bool | Literal["bar", "lines"]


def progress_mode(progress: Progress | None) -> str | None:
    """How to show progress: None (quiet), ``"bar"`` (tqdm) or ``"lines"`` (log lines).

    ``True`` picks a bar on a terminal and log lines otherwise: a bar redrawn with
    carriage returns is unreadable in a CI log or a ``2> file``, and without any output a
    long run in a pipeline looks hung."""
    if not progress:
        return None
    if progress is True:
        return "bar" if sys.stderr.isatty() else "lines"
    if progress not in ("bar", "lines"):
        raise ValueError(f"progress: expected a bool, 'bar' or 'lines', got {progress!r}")
    return progress


LINE_EVERY_S = 10.0  # a progress line at least this often while jobs finish
LINE_QUIET_S = 2.0  # no tenth-of-the-jobs lines before this: short runs stay silent


class LineProgress:
    """Job-completion callback that logs ``NAME: 40/100 jobs (40 %), 8.1 s`` to stderr.

    A line when a new tenth of the jobs is done (after ``quiet_s``, so a run of a second
    stays silent) or when ``every_s`` passed since the last line (a long tail of big jobs
    still shows signs of life)."""

    def __init__(
        self, total: int, name: str, every_s: float | None = None, quiet_s: float | None = None
    ):
        self.total, self.name = total, name
        self.every_s = LINE_EVERY_S if every_s is None else every_s
        self.quiet_s = LINE_QUIET_S if quiet_s is None else quiet_s
        self.done = 0
        self.t0 = self.last = time.perf_counter()
        self.tenth = 0

    def __call__(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        tenth = 10 * self.done // max(self.total, 1)
        new_tenth = tenth > self.tenth
        self.tenth = max(self.tenth, tenth)
        if (new_tenth and now - self.t0 >= self.quiet_s) or now - self.last >= self.every_s:
            self.last = now
            pct = 100 * self.done / max(self.total, 1)
            print(
                f"{self.name}: {self.done}/{self.total} jobs ({pct:.0f} %), {now - self.t0:.1f} s",
                file=sys.stderr,
                flush=True,
            )


def run_sim(
    scenario: Scenario | str | dict,
    scheduler: Scheduler | str,
    seed: int = 0,
    progress: Progress = False,
) -> SimResult:
    """Simulate one episode and return its metrics and task log.

    ``progress``: ``True`` shows finished jobs as a bar on a terminal and as a log line
    every tenth of the jobs (or every 10 s) otherwise; ``"bar"``/``"lines"`` force one.
    ``seed``: an integer >= 0 (required to be one: the run is reproducible from it)."""
    seed = check_seed(seed)
    sc = load_scenario(scenario)
    mode = progress_mode(progress)
    bar = None
    cb = None
    sched = make_scheduler(scheduler)  # once: its name labels the progress lines
    t0 = time.perf_counter()
    sim = build_simulation(sc, sched, seed)
    if mode is not None:
        total = len(sim.view.all_jobs)
        if mode == "bar":
            from tqdm import tqdm

            bar = tqdm(total=total, unit="job", desc=sc.name, leave=False)
            cb = bar.update
        else:
            label = getattr(sched, "name", type(sched).__name__)
            cb = LineProgress(total, f"{sc.name} {label} seed {seed}")
        sim.set_progress(cb)
    try:
        sim.run()
    finally:  # Ctrl-C included: the bar must not be left half-drawn above the error line
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    m = episode_metrics(sim)
    return SimResult(
        sc.name,
        getattr(sim.scheduler, "name", type(sim.scheduler).__name__),
        seed,
        m,
        task_log(sim),
        wall,
        {
            "heartbeats": sim.beats.n_heartbeats,
            "decisions": sim.beats.n_decisions,
            "rate_updates": sim.engine.n_rate_updates,
            "attempts": len(sim.attempts),
            # the sampler's wake-ups: idle stretches are slept through in one
            "sampler_ticks": sim.monitor.n_samples + sim.monitor.n_idle_ticks,
        },
        [(j.id, j.name, len(j.maps), j.arrived_s, j.finish_s) for j in sim.jobs],
    )


@dataclass
class EpisodeResult:
    policy: str
    seed: int
    metrics: dict[str, Any]
    episode_return: float
    steps: int
    reward_terms: dict[str, float]
    invalid_actions: int
    wall_s: float
    inexact: int | None = None
    """Decisions the policy's action could not express exactly (EnvPolicy), else None."""


def run_episode(env, policy, seed: int = 0, max_steps: int | None = None) -> EpisodeResult:
    """Run one episode of ``env`` with ``policy.predict(obs, info)`` choosing every action."""
    bind = getattr(policy, "bind", None)
    if bind is not None:
        bind(env)
    start = getattr(policy, "start_episode", None)  # a policy with its own seeded luck
    if start is not None:
        start(seed)
    inexact0 = getattr(policy, "inexact", None)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    ret, steps, invalid = 0.0, 0, 0
    terms: dict[str, float] = {}
    while True:
        action = policy.predict(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        ret += reward
        steps += 1
        invalid += int(info["invalid_action"])
        for k, v in info["reward_terms"].items():
            terms[k] = terms.get(k, 0.0) + v
        if terminated or truncated or (max_steps is not None and steps >= max_steps):
            break
    metrics = info.get("episode_metrics")
    if metrics is None:
        metrics = episode_metrics(env.unwrapped.sim)
    return EpisodeResult(
        getattr(policy, "name", type(policy).__name__),
        seed,
        metrics,
        ret,
        steps,
        terms,
        invalid,
        time.perf_counter() - t0,
        None if inexact0 is None else policy.inexact - inexact0,
    )
