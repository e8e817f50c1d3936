"""Training steps per second of a recipe, and the environment's share of the time.

    python benchmarks/bench_train.py                       # tracks/ila72_jct, before and after
    python benchmarks/bench_train.py --config tracks/lee_gpu_jct --steps 65536
    python benchmarks/bench_train.py --only after --profile

Trains the config through the training pipeline's pieces (its policy, the per-second
discount's rollout buffer, the learning-rate schedule) for ``--steps`` steps, twice:

- **before**: one environment, ``n_steps`` times ``n_envs`` steps per rollout (the same
  2 048 samples per update) and torch.distributions' argument checks on, as the recipes
  trained before the batched settings;
- **after**: the config as written (e.g. 16 environments stepped together in this
  process, ``vec_env: dummy``) with the checks off, as ``mrgym train`` runs it.

Every environment is wrapped to time its ``step``, ``reset`` and ``action_masks`` calls
(CPU time of this process, so the share does not depend on other load on the machine).
Prints steps/s, the environment's share and, with ``--profile``, the environment's own time
split into simulator, observation, mask and reward.  Reported, never asserted; the steps
should cover whole episodes of every environment (an episode's early steps are cheaper).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import time

import gymnasium as gym

# own time by part of the env's work: (label, substring of the code's path)
PARTS = (
    ("simulator", ("mrgym/sim/", "simpy/")),
    ("observation", ("envs/observation.py",)),
    ("mask + actions", ("envs/actions.py",)),
    ("reward", ("envs/rewards.py",)),
    ("env loop", ("envs/mr_cluster.py",)),
)


class Timed(gym.Wrapper):
    """Adds the wall time of step/reset/action_masks to ``self.spent`` (and profiles them)."""

    def __init__(self, env, profile: cProfile.Profile | None):
        super().__init__(env)
        self.spent = 0.0  # wall seconds
        self.cpu = 0.0  # CPU seconds of this process: robust to other load on the machine
        self.calls = 0
        self.prof = profile

    def _timed(self, fn, *a, **kw):
        if self.prof is not None:
            self.prof.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*a, **kw)
        self.spent += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        if self.prof is not None:
            self.prof.disable()
        return out

    def step(self, action):
        self.calls += 1
        return self._timed(self.env.step, action)

    def reset(self, **kw):
        return self._timed(self.env.reset, **kw)

    def action_masks(self):
        return self._timed(self.env.unwrapped.action_masks)


def split(stats: pstats.Stats) -> list[tuple[str, float]]:
    by = dict.fromkeys([p for p, _ in PARTS] + ["other (numpy, builtins)"], 0.0)
    total = 0.0
    for (path, _line, _fn), row in stats.stats.items():  # type: ignore[attr-defined]
        total += row[2]
        for label, keys in PARTS:
            if any(k in path for k in keys):
                by[label] += row[2]
                break
        else:
            by["other (numpy, builtins)"] += row[2]
    return [(k, v / total if total else 0.0) for k, v in by.items()]


def measure(cfg, steps: int, one_env: bool, prof: cProfile.Profile | None) -> dict:
    """Train ``cfg`` for ``steps`` steps; ``one_env``: the "before" settings."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.env_hooks import make_env
    from agents.time_discount import SojournCallback
    from agents.train import _new_model, env_kwargs, seed_everything, unchecked_distributions

    if one_env:
        hp = dict(cfg.hyperparameters)
        hp["n_steps"] = hp.get("n_steps", 2048) * cfg.n_envs
        cfg = cfg.model_copy(update={"n_envs": 1, "hyperparameters": hp})
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    kw, hooks = env_kwargs(cfg), cfg.env.hooks
    envs = [Timed(make_env(kw, hooks), prof) for _ in range(cfg.n_envs)]
    venv = DummyVecEnv([lambda e=e: e for e in envs])
    venv.seed(cfg.seed)
    model = _new_model(cfg, venv, None)
    callbacks = CallbackList([SojournCallback()] if cfg.discount_per == "second" else [])
    checks = contextlib.nullcontext() if one_env else unchecked_distributions()
    t0, c0 = time.perf_counter(), time.process_time()
    with checks:
        model.learn(steps, callback=callbacks)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env_cpu = sum(e.cpu for e in envs)
    calls = sum(e.calls for e in envs)
    venv.close()
    return {
        "envs": cfg.n_envs,
        "steps": model.num_timesteps,
        "wall": wall,
        "rate": model.num_timesteps / cpu,
        "env_share": env_cpu / cpu,
        "env_us": env_cpu / max(calls, 1) * 1e6,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="tracks/ila72_jct", help="a recipe (file or name)")
    ap.add_argument("--steps", type=int, default=65536)
    ap.add_argument("--only", choices=("before", "after"), help="one of the two settings")
    ap.add_argument("--profile", action="store_true", help="also split the env's own time")
    args = ap.parse_args(argv)

    import mrgym  # noqa: F401
    from agents.config import load_train_config

    cfg = load_train_config(args.config)
    rates = {}
    for label in ("before", "after"):
        if args.only not in (None, label):
            continue
        prof = cProfile.Profile() if args.profile else None
        r = measure(cfg, args.steps, label == "before", prof)
        rates[label] = r["rate"]
        print(
            f"{label}: {cfg.algorithm} on {cfg.env.scenario}, {r['envs']} env(s), "
            f"{r['steps']:,} steps in {r['wall']:.1f} s wall: {r['rate']:,.0f} steps per "
            f"CPU-second; env {r['env_share']:.1%} of the CPU time "
            f"({r['env_us']:,.0f} CPU-us per env step incl. masks)"
        )
        if prof is not None:
            print("  env's own time by part:")
            for part, share in split(pstats.Stats(prof)):
                print(f"    {part:28s} {share:6.1%}")
    if len(rates) == 2:
        print(f"after / before: x{rates['after'] / rates['before']:.2f}")


if __name__ == "__main__":
    main()
