"""The environment's share of MaskablePPO training wall time (docs/model.md §8 budget: < 20 %).

    python benchmarks/bench_train.py                      # configs/train/maskable_ppo_ila72.yaml
    python benchmarks/bench_train.py --steps 40960 --config configs/train/ppo_ila72.yaml

Trains the config with ONE environment (DummyVecEnv: the env runs in this process, so its
time is measurable) for ``--steps`` steps and times every ``step``, ``reset`` and
``action_masks`` call with a wrapper around the environment.  Prints the env's share of
the learning wall time, steps/s, and the env's own time per step split into simulator
advance, observation, mask and reward (cProfile over the env calls only, so the split is a
share of the env time, not affected by machine load).  Reported, never asserted.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/train/maskable_ppo_ila72.yaml")
    ap.add_argument("--steps", type=int, default=20480)
    ap.add_argument("--profile", action="store_true", help="also split the env's own time")
    args = ap.parse_args(argv)

    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    import mrgym  # noqa: F401
    from agents.config import load_train_config
    from agents.extractors import resolve_policy
    from agents.train import algorithm_class, env_kwargs

    cfg = load_train_config(args.config)
    torch.set_num_threads(cfg.torch_threads)
    prof = cProfile.Profile() if args.profile else None
    timed = Timed(gym.make("MRCluster-v0", **env_kwargs(cfg)), prof)
    venv = DummyVecEnv([lambda: timed])
    venv.seed(cfg.seed)
    # JobSetPolicy, "deepsets"; the set policy's critic-only inputs
    policy, hp = resolve_policy(cfg.policy, cfg.hyperparameters, cfg.env.critic_inputs)
    model = algorithm_class(cfg.algorithm)(
        policy, venv, seed=cfg.seed, device="cpu", verbose=0, **hp
    )
    t0 = time.perf_counter()
    c0 = time.process_time()
    model.learn(args.steps)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(
        f"{cfg.algorithm} on {cfg.env.scenario}, one env, {model.num_timesteps:,} steps: "
        f"{wall:.1f} s wall ({cpu:.1f} s CPU), {model.num_timesteps / wall:,.0f} steps/s"
    )
    print(
        f"  env share of training wall time: {timed.spent / wall:.1%}, of CPU time: "
        f"{timed.cpu / cpu:.1%} ({timed.cpu / max(timed.calls, 1) * 1e6:,.0f} CPU-us per env "
        "step incl. masks; the CPU share does not depend on other load on the machine)"
    )
    if prof is not None:
        print("  env's own time by part:")
        for label, share in split(pstats.Stats(prof)):
            print(f"    {label:28s} {share:6.1%}")


if __name__ == "__main__":
    main()
