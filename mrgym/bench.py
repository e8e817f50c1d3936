"""Speed measurements behind ``mrgym bench`` (DESIGN §8). Reported, never asserted."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np


def _rate(env, steps: int, masked: bool, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    n = 0
    t0 = time.perf_counter()
    while n < steps:
        if masked:
            legal = np.flatnonzero(info["action_mask"])
            a = int(legal[rng.integers(len(legal))])
        else:
            a = int(rng.integers(env.action_space.n))
        obs, r, term, trunc, info = env.step(a)
        n += 1
        if term or trunc:
            obs, info = env.reset(seed=seed + n)
    return n / (time.perf_counter() - t0)


def bench_env(config: str = "ila72", steps: int = 20000, rounds: int = 3) -> dict[str, float]:
    """Best of ``rounds`` alternating measurements of each (this machine is shared, so
    single timings swing by tens of percent)."""
    import mrgym  # noqa: F401  (registers MRCluster-v0)

    env = gym.make("MRCluster-v0", config=config).unwrapped
    cp = gym.make("CartPole-v1").unwrapped  # raw: no wrappers, as DESIGN §8 says
    mr = cart = 0.0
    for r in range(rounds):
        mr = max(mr, _rate(env, steps, masked=True, seed=r))
        cart = max(cart, _rate(cp, max(steps, 50000), masked=False, seed=r))
    return {"env_steps_per_s": mr, "cartpole_steps_per_s": cart, "ratio": mr / cart}


def bench_sim(
    config: str = "ila2400", scheduler: str = "dl-sched", seed: int = 0
) -> dict[str, float]:
    from mrgym.runner import build_simulation

    t0 = time.perf_counter()
    sim = build_simulation(config, scheduler, seed)
    sim.run()
    wall = time.perf_counter() - t0
    tasks = sum(1 for a in sim.attempts if a.end_s is not None)
    return {"tasks": tasks, "wall_s": wall, "tasks_per_s": tasks / wall}
