"""Run a scenario under a scheduler: ``run_sim(scenario, scheduler, seed)``.

``scheduler`` is a :class:`~mrgym.sim.scheduler.Scheduler` object or a registered name
(``"fifo"``, ``"dl-sched"``, ... see ``baselines.available()``).  No observation is built:
this is the fast path for sweeps.  ``run_episode(env, policy, seed)`` is the Gymnasium
loop, the one every baseline (``EnvPolicy``) and learned agent (``ModelPolicy``) runs in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mrgym.config import Scenario, load_scenario
from mrgym.metrics import TaskRecord, episode_metrics, task_log
from mrgym.sim.cluster import Simulation
from mrgym.sim.rng import Streams
from mrgym.sim.scheduler import Scheduler
from mrgym.workloads import generate


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
    import baselines  # lazy: mrgym.sim never depends on the baselines

    return baselines.make(scheduler, **params)


def build_simulation(
    scenario: Scenario | str | dict, scheduler: Scheduler | str, seed: int, progress=None
) -> Simulation:
    sc = load_scenario(scenario)
    sched = make_scheduler(scheduler)
    specs = generate(sc, Streams(seed).workload)
    return Simulation(sc, specs, sched, seed, progress=progress)


def isolated_jct(
    scenario: Scenario | str | dict, scheduler: Scheduler | str, seed: int = 0
) -> dict[int, float]:
    """Each job's JCT when it runs alone on the cluster (submitted at time 0), keyed by job
    id: the denominator of :func:`mrgym.metrics.slowdowns`.  One simulation per job."""
    from dataclasses import replace

    sc = load_scenario(scenario)
    specs = sorted(generate(sc, Streams(seed).workload), key=lambda s: s.submit_s)
    out = {}
    for jid, spec in enumerate(specs):
        sim = Simulation(sc, [replace(spec, submit_s=0.0)], make_scheduler(scheduler), seed)
        sim.run()
        job = sim.jobs[0]
        if job.finish_s is not None:
            out[jid] = job.finish_s - job.arrived_s
    return out


def run_sim(
    scenario: Scenario | str | dict,
    scheduler: Scheduler | str,
    seed: int = 0,
    progress: bool = False,
) -> SimResult:
    """Simulate one episode and return its metrics and task log."""
    sc = load_scenario(scenario)
    bar = None
    cb = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(generate(sc, Streams(seed).workload)), unit="job", desc=sc.name, leave=False
        )
        cb = bar.update
    t0 = time.perf_counter()
    sim = build_simulation(sc, scheduler, seed, progress=cb)
    sim.run()
    wall = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    m = episode_metrics(sim)
    return SimResult(
        sc.name,
        getattr(sim.scheduler, "name", type(sim.scheduler).__name__),
        seed,
        m,
        task_log(sim),
        wall,
        {
            "heartbeats": sim.n_heartbeats,
            "decisions": sim.n_decisions,
            "rate_updates": sim.engine.n_rate_updates,
            "attempts": len(sim.attempts),
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
