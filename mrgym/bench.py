"""Speed measurements behind ``mrgym bench`` (docs/model.md §8). Reported, never asserted."""

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


# The environment as it trains by default, and with every decision a step (arrival order,
# speculation on, declines legal: the pre-0.1 defaults).  The defaults make each step a
# launch (heavier: the simulator advances a task's worth) but an ila72 episode ~16x shorter.
SETTINGS = {
    "default": {},
    "every-decision": {"queue_order": "arrival", "speculation": True, "work_conserving": False},
}


def bench_env(
    config: str = "ila72", steps: int = 20000, rounds: int = 3, ceiling: bool = True
) -> dict[str, float]:
    """Best of ``rounds`` alternating measurements of each (this machine is shared, so
    single timings swing by tens of percent); one rate per entry of :data:`SETTINGS`."""
    # 0 steps would time nothing and report "0 steps/s" as if it were a measurement
    for name, v in (("steps (--steps)", steps), ("rounds", rounds)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
    # MRCluster-v1 is registered: importing this module ran mrgym/__init__
    envs = {
        k: gym.make("MRCluster-v1", config=config, **kw).unwrapped for k, kw in SETTINGS.items()
    }
    cp = gym.make("CartPole-v1").unwrapped  # raw: no wrappers, as docs/model.md §8 says
    best = dict.fromkeys(envs, 0.0)
    cart = sim_rate = 0.0
    for r in range(rounds):
        for k, env in envs.items():
            best[k] = max(best[k], _rate(env, steps, masked=True, seed=r))
        cart = max(cart, _rate(cp, max(steps, 50000), masked=False, seed=r))
        if ceiling:
            sim = bench_sim(config, "fair")
            sim_rate = max(sim_rate, sim["tasks"] / sim["wall_s"])
    out = {"env_steps_per_s": best["default"], "cartpole_steps_per_s": cart}
    out["ratio"] = best["default"] / cart
    out["every_decision_steps_per_s"] = best["every-decision"]
    out["every_decision_ratio"] = best["every-decision"] / cart
    if ceiling:
        # With the defaults every step launches a task, so a step costs about a task's
        # simulation: run_sim's task rate on the same scenario (Fair, wall time, best of
        # the rounds as above) is the step rate's ceiling, whatever the observation, mask
        # and reward cost.
        out["sim_tasks_per_s"] = sim_rate
        out["ceiling_ratio"] = sim_rate / cart
    return out


def env_report(env: dict[str, float], config: str) -> str:
    """``mrgym bench``'s lines for :func:`bench_env`'s rates."""
    return "\n".join(
        [
            f"MRCluster-v1 on {config}, random legal actions:",
            f"  default settings:       {env['env_steps_per_s']:,.0f} steps/s, "
            f"ratio {env['ratio']:.3f}  (floor >= 0.04, docs/model.md §8; every step launches a task)",
            f"  every decision a step:  {env['every_decision_steps_per_s']:,.0f} steps/s, "
            f"ratio {env['every_decision_ratio']:.3f}  (arrival order, speculation, "
            "declines legal)",
            f"CartPole-v1 raw:          {env['cartpole_steps_per_s']:,.0f} steps/s",
        ]
        + (
            [
                f"ceiling of the defaults:  run_sim on {config} (fair) "
                f"{env['sim_tasks_per_s']:,.0f} tasks/s, ratio {env['ceiling_ratio']:.3f}  "
                "(a step simulates about one task)"
            ]
            if "sim_tasks_per_s" in env
            else []
        )
    )


def bench_sim(
    config: str = "ila2400", scheduler: str = "dl-sched", seed: int = 0
) -> dict[str, float]:
    """One ``run_sim`` episode: its tasks per CPU-second of ``run()`` (docs/model.md §8 counts
    CPU time, which other load on a shared machine barely moves; the build is excluded)."""
    from mrgym.runner import build_simulation

    sim = build_simulation(config, scheduler, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    sim.run()
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    tasks = sum(1 for a in sim.attempts if a.end_s is not None)
    return {"tasks": tasks, "cpu_s": cpu, "wall_s": wall, "tasks_per_cpu_s": tasks / cpu}
