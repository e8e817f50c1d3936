"""The slowdown reward of each training episode in units of a baseline's on that workload
(``env.slowdown_scale_by`` in a training config).

The fairness track ranks by RMS slowdown and counts a win by the paired per-seed change,
``mean over seeds of (x_s / b_s - 1)`` (:func:`mrgym.benchmark.stats.paired_difference`):
every test seed weighs the same.  Its reward, the ``slowdown`` term, returns
``-sum over jobs of slowdown^2``, and that sum spans an order of magnitude across a
scenario's workloads (a heavy workload's squared slowdowns, several times a light one's).
A policy trained on it spends its capacity on the heavy workloads and may give up the
light ones, which the paired change counts as much (docs/learning.md, Tracks).  Here each
episode's reward is divided by the baseline's mean squared slowdown on the same workload,
so that the return is ``-w x sum over jobs of (slowdown / the baseline's RMS
slowdown)^2`` (``w`` the slowdown weight; the jobs that arrived): ``-w x n_jobs`` for the
baseline itself on every workload, and below it by the squared ratio the track counts.
SB3's ``Monitor`` sits inside this wrapper, so TensorBoard's episode rewards stay unscaled.

The baseline runs once per episode (``mrgym.run_sim`` on the episode's seed, the same
workload and task luck as the episode's; ``ila72`` with ``ila-gate+srpt``: ~2 s, ~10 % of
a training episode on one core).  It is a training signal only: no observation carries it,
and the benchmark's evaluations run the environment as it is.  Dividing each episode's
return by a reference policy's result on the same instance follows the rollout baselines
of learned combinatorial optimisation (Kool, van Hoof and Welling, ICLR 2019: the greedy
rollout of a baseline policy on the same instance), with the ratio in place of the
difference because the track counts ratios.
"""

from __future__ import annotations

import gymnasium as gym

#: the reward terms a scaled episode may have: the scale is the slowdown term's
SCALED_TERMS = ("slowdown",)


def check_scale(name: str | None, reward_weights: dict | None) -> str | None:
    """``env.slowdown_scale_by``: a registered scheduler, with a reward of the slowdown term
    alone (a ValueError names the key and what it expects)."""
    if name is None:
        return None
    from mrgym import registry

    try:
        parts = registry.composition(name)
    except ValueError as e:  # a bad gater or order: say which key held it
        raise ValueError(f"env.slowdown_scale_by: {e}") from None
    if name not in registry.available() and parts is None:
        raise ValueError(
            f"env.slowdown_scale_by: unknown scheduler {name!r}; expected one of "
            f"{registry.available()} or a composition <gater>-gate+<order>"
        )
    weights = reward_weights or {}
    other = sorted(k for k, w in weights.items() if w and k not in SCALED_TERMS)
    if not weights.get("slowdown", 0.0) > 0 or other:
        raise ValueError(
            "env.slowdown_scale_by: scales the slowdown term alone; expected "
            f"env.reward_weights with slowdown > 0 and no other term, got {reward_weights!r}"
        )
    return name


def mean_square_slowdown(env: gym.Env, name: str) -> float:
    """``name``'s mean squared slowdown on the workload of ``env``'s episode under way (its
    reference JCTs as the slowdown term's; a job unfinished at the end counts with its age
    then, as the fairness track counts it)."""
    from mrgym import run_sim
    from mrgym.benchmark.tracks import track_values
    from mrgym.reference import reference_jct

    base = env.unwrapped
    seed = base.episode_seed
    if seed is None:
        raise RuntimeError("mean_square_slowdown: call env.reset() first")
    run = run_sim(base.scenario, name, seed)
    ref = reference_jct(base.scenario, seed, keep=False)  # the env's own, cached in process
    rms = track_values({"sim_time_s": run.metrics.get("sim_time_s")}, run.jobs, ref)
    value = rms["rms_slowdown"]
    if value is None or not value > 0:
        raise ValueError(
            f"env.slowdown_scale_by: {name} has no slowdown on seed {seed} "
            f"(RMS slowdown {value}); no job arrived or none has a reference JCT"
        )
    return float(value) ** 2


class ScaledSlowdown(gym.Wrapper):
    """Each episode's rewards divided by ``name``'s mean squared slowdown on its workload
    (``info["reward_scale"]`` holds the divisor); observations and masks unchanged."""

    def __init__(self, env: gym.Env, name: str):
        super().__init__(env)
        check_scale(name, env.unwrapped.weights)
        self.name = name
        self.scale = 1.0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.scale = mean_square_slowdown(self.env, self.name)
        return obs, {**info, "reward_scale": self.scale}

    def step(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        return obs, reward / self.scale, term, trunc, {**info, "reward_scale": self.scale}


def scaled_with_hooks(env: gym.Env, hooks: str | None, name: str) -> gym.Env:
    """SB3's ``wrapper_class``: the hooks installed (:class:`agents.env_hooks.WithHooks`),
    then the rewards scaled by ``name``'s."""
    from agents.env_hooks import WithHooks

    return ScaledSlowdown(WithHooks(env, hooks), name)
