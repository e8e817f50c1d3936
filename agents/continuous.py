"""Decima's training episodes: continuous arrivals cut at a random time, and the
differential (average-reward) form of the JCT reward (Mao et al., SIGCOMM 2019, §5.3).

Why both, and only together: the JCT reward, −(jobs in system × elapsed time), summed over
an episode is −Σ JCT when the episode ends with its last job.  Its differential form
subtracts the average reward rate ρ̂ times each step's elapsed time, which adds
(−ρ̂) × (episode length) to the return.  When the episode ends with its last job (every
bundled scenario: ``MRClusterEnv`` terminates when the workload is done) the policy sets
that length, and the term pays it for a longer makespan.  Decima's episodes instead see
jobs arrive without end and stop at a time drawn from an exponential distribution, which
the policy cannot move: the term is then a constant in expectation, and what it removes is
the variance of returns over long horizons.

* :class:`RandomEnds` — the workload drawn with ``n_jobs`` jobs (enough to outlast almost
  every episode: the arrivals continue past its end), and each episode truncated at the
  first decision at or after a horizon drawn from Exp(``horizon_mean_s``) simulated
  seconds.  The horizon stream is seeded from reset's seed (salted, so that it is not the
  episode's own stream) and continues on unseeded resets, as SB3's vector envs make them.
  A truncated step is bootstrapped by SB3 (``TimeLimit.truncated``), in simulated time by
  ``agents.time_discount``.
* :class:`DifferentialReward` — each step's reward minus ρ̂ × ``info["dt"]``, where ρ̂ is
  the rate over the recent steps of this environment: exponentially weighted sums of the
  rewards and of the elapsed times, over about ``window_steps`` steps, divided.

Deviation: Decima grows the mean episode length over training (a curriculum); here it is
fixed per run (``horizon_mean_s``), so a curriculum is a sequence of ``init_from`` runs.

Config: ``env.continuous: {n_jobs, horizon_mean_s, differential, window_steps}``
(agents/config.py).  Training only: as with ``env.randomize``, the held-out evaluation and
every saved model's env run the scenario itself, with its own jobs to the end.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import gymnasium as gym
import numpy as np

from mrgym.metrics import episode_metrics

# mixed into reset's seed so the horizon stream is independent of the episode's own draws
_SALT = 0xDEC1_3A
DRAWN = ("ila-table4", "synthetic")  # workload kinds whose jobs are drawn to workload.n_jobs


@dataclass(frozen=True)
class ContinuousSpec:
    """``env.continuous``: the training episodes' workload size, mean length and reward."""

    n_jobs: int = 200  # jobs drawn per episode (ila72: 25; one per ~14 s on average)
    horizon_mean_s: float = 1000.0  # mean simulated seconds before an episode is cut
    differential: bool = True  # subtract the average reward rate x dt from each reward
    window_steps: int = 10_000  # steps the rate estimate averages over (about 3 episodes)

    def __post_init__(self) -> None:
        checks = {
            "n_jobs": isinstance(self.n_jobs, int) and self.n_jobs >= 1,
            "horizon_mean_s": isinstance(self.horizon_mean_s, (int, float))
            and self.horizon_mean_s > 0,
            "differential": isinstance(self.differential, bool),
            "window_steps": isinstance(self.window_steps, int) and self.window_steps >= 1,
        }
        want = {
            "n_jobs": "an integer >= 1",
            "horizon_mean_s": "a number of seconds > 0",
            "differential": "true or false",
            "window_steps": "an integer >= 1",
        }
        for key, ok in checks.items():
            if not ok:
                raise ValueError(
                    f"continuous.{key}: expected {want[key]}, got {getattr(self, key)!r}"
                )

    @classmethod
    def from_dict(cls, data: dict[str, Any] | ContinuousSpec) -> ContinuousSpec:
        """A spec from a config mapping; unknown keys are errors naming the known ones."""
        if isinstance(data, ContinuousSpec):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"continuous: expected a mapping, got {data!r}")
        known = [f.name for f in fields(cls)]
        for key in data:
            if key not in known:
                raise ValueError(f"continuous.{key}: unknown key, expected one of {known}")
        return cls(**data)

    def overrides(self, scenario: str, overrides: dict[str, Any] | None) -> dict[str, Any]:
        """``overrides`` plus what makes ``scenario``'s workload outlast the episodes; a
        workload not drawn to a job count (an explicit list, a trace) is refused."""
        from mrgym.config import load_scenario

        kind = load_scenario(scenario, overrides).workload.kind
        if kind not in DRAWN:
            raise ValueError(
                f"env.continuous: needs a workload drawn to a job count (workload.kind one "
                f"of {list(DRAWN)}), but {scenario}'s is {kind!r}"
            )
        return {**(overrides or {}), "workload.n_jobs": self.n_jobs}


class RandomEnds(gym.Wrapper):
    """Truncate each episode at the first decision at or after an Exp(mean) horizon."""

    def __init__(self, env: gym.Env, horizon_mean_s: float):
        super().__init__(env)
        self.horizon_mean_s = float(horizon_mean_s)
        self._rng: np.random.Generator | None = None
        self.horizon_s = np.inf

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), _SALT])
        elif self._rng is None:
            self._rng = np.random.default_rng()  # unseeded, as any gymnasium env
        self.horizon_s = float(self._rng.exponential(self.horizon_mean_s))
        obs, info = self.env.reset(seed=seed, options=options)
        info["horizon_s"] = self.horizon_s
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not terminated and not truncated and info["sim_time"] >= self.horizon_s:
            truncated = True
            info["horizon_s"] = self.horizon_s
            # as the env reports an episode's end: the training callbacks count and log it
            # (its JCTs are those of the jobs that finished before the cut)
            info["episode_metrics"] = episode_metrics(self.env.unwrapped.sim)
        return obs, reward, terminated, truncated, info


class DifferentialReward(gym.Wrapper):
    """Each step's reward minus the recent average reward rate times the step's ``dt``."""

    def __init__(self, env: gym.Env, window_steps: int = 10_000):
        super().__init__(env)
        self.beta = 1.0 - 1.0 / window_steps
        self.reward_sum = 0.0  # exponentially weighted, kept across episodes
        self.time_sum = 0.0

    @property
    def rate(self) -> float:
        """The average reward per simulated second so far (0 before any time passed)."""
        return self.reward_sum / self.time_sum if self.time_sum > 0 else 0.0

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        dt = float(info["dt"])
        shaped = float(reward) - self.rate * dt  # the rate of the steps before this one
        self.reward_sum = self.beta * self.reward_sum + float(reward)
        self.time_sum = self.beta * self.time_sum + dt
        info["reward_rate"] = self.rate
        return obs, shaped, terminated, truncated, info


def wrap_training(
    env: gym.Env, spec: dict[str, Any] | ContinuousSpec, hooks: str | None = None
) -> gym.Env:
    """SB3's ``wrapper_class`` for a training env built with :meth:`ContinuousSpec.overrides`:
    ``hooks`` installed (``agents.env_hooks.WithHooks``), then random ends and, when the
    spec asks, the differential reward."""
    from agents.env_hooks import WithHooks

    spec = ContinuousSpec.from_dict(spec)
    if hooks is not None:
        env = WithHooks(env, hooks)
    env = RandomEnds(env, spec.horizon_mean_s)
    if spec.differential:
        env = DifferentialReward(env, spec.window_steps)
    return env
