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
  every episode: the arrivals continue past its end), and each episode ended at the
  first decision at or after a horizon drawn from Exp(``horizon_mean_s``) simulated
  seconds.  The cut *terminates* the episode, as Decima sums its returns to the episode's
  end: nothing is bootstrapped past it.  As the exponential is memoryless, the expected
  return from any state then weighs a reward t seconds ahead by e^(−t/mean), the discount
  a ``gamma`` of e^(−1/mean) per second gives, so the recipe runs ``gamma: 1``.  The
  horizon stream is seeded from reset's seed (salted, so that it is not the episode's own
  stream) and continues on unseeded resets, as SB3's vector envs make them.
* :class:`DifferentialReward` — each step's reward minus ρ̂ × ``info["dt"]``, where ρ̂ is
  the rate over the recent steps of this environment: exponentially weighted sums of the
  rewards and of the elapsed times, over about ``window_steps`` steps, divided.  Each
  environment process keeps its own (Decima pools one over its workers), and a resumed
  run starts it afresh: the ratio settles within a few hundred steps.

The environment is built by :func:`make_continuous_env`, so that SB3's ``Monitor`` wraps
the cut episodes (``rollout/`` tags) and reads the reward before the differential term,
which ``make_vec_env``'s ``wrapper_class`` then applies.  A cut episode reports its
``episode_metrics`` as the environment does at its end; their JCTs count only the jobs
finished before the cut, so the ``mr/`` training curves of such a run are not comparable
with other runs' (``mr_eval/`` is).

Deviation: Decima grows the mean episode length over training (a curriculum); here it is
fixed per run (``horizon_mean_s``), so a curriculum is a sequence of ``init_from`` runs.

Config: ``env.continuous: {n_jobs, horizon_mean_s, differential, window_steps,
interarrival_scale}``
(agents/config.py).  Training only: as with ``env.randomize``, the held-out evaluation and
every saved model's env run the scenario itself, with its own jobs to the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import gymnasium as gym
import numpy as np

from mrgym.metrics import episode_metrics

# mixed into reset's seed so the horizon stream is independent of the episode's own draws
_SALT = 0xDEC1_3A
DRAWN = ("ila-table4", "synthetic")  # workload kinds whose jobs are drawn to workload.n_jobs


def _number(v: Any) -> bool:
    """An int or a float, not a YAML true or false (which Python counts as ints)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(v: Any) -> bool:
    """An integer >= 1 (a YAML true is a bool, which Python counts as an int)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


@dataclass(frozen=True)
class ContinuousSpec:
    """``env.continuous``: the training episodes' workload size, mean length and reward."""

    n_jobs: int = 200  # jobs drawn per episode (ila72: 25; one per ~14 s on average)
    horizon_mean_s: float = 1000.0  # mean simulated seconds before an episode is cut
    differential: bool = True  # subtract the average reward rate x dt from each reward
    # steps the rate estimate averages over (ila72 takes 2 700-11 500 decisions per
    # 25-job episode, by how often the policy declines)
    window_steps: int = 10_000
    # the scenario's mean interarrival times this, in training only: at ila72's own rate
    # the cluster falls behind an endless stream (CHANGELOG.md), so the long-run rate
    # the differential reward subtracts does not exist there
    interarrival_scale: float = 1.0

    def __post_init__(self) -> None:
        h, a = self.horizon_mean_s, self.interarrival_scale
        checks = {  # key: (valid, what was expected)
            "n_jobs": (_count(self.n_jobs), "an integer >= 1"),
            "horizon_mean_s": (
                _number(h) and h > 0,
                "a number of seconds > 0",
            ),
            "differential": (isinstance(self.differential, bool), "true or false"),
            "window_steps": (_count(self.window_steps), "an integer >= 1"),
            "interarrival_scale": (
                _number(a) and 0 < a < math.inf,
                "a finite number > 0",
            ),
        }
        for key, (ok, want) in checks.items():
            if not ok:
                raise ValueError(f"continuous.{key}: expected {want}, got {getattr(self, key)!r}")

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
        from agents.randomize import arrival_overrides
        from mrgym.config import load_scenario

        over = dict(overrides or {})
        if "workload.n_jobs" in over or "n_jobs" in (over.get("workload") or {}):
            raise ValueError(
                "env.overrides: workload.n_jobs is env.continuous.n_jobs's to set in "
                "training (the evaluation keeps the scenario's); drop it from env.overrides"
            )
        base = load_scenario(scenario, overrides)
        if base.workload.kind not in DRAWN:
            raise ValueError(
                f"env.continuous: needs a workload drawn to a job count (workload.kind one "
                f"of {list(DRAWN)}), but {scenario}'s is {base.workload.kind!r}"
            )
        drawn = {"workload.n_jobs": self.n_jobs}
        if self.interarrival_scale != 1.0:  # only when set: earlier runs' overrides unchanged
            # env.randomize's arrival-rate overrides: a longer gap is a slower rate
            drawn.update(arrival_overrides(base, 1.0 / self.interarrival_scale))
            gap = drawn["workload.mean_interarrival_s"]
            try:  # the scenario's own bounds, checked now and said in this key's terms
                load_scenario(scenario, {**over, **drawn})
            except ValueError as e:
                raise ValueError(
                    f"continuous.interarrival_scale: {self.interarrival_scale!r} makes "
                    f"{scenario}'s mean interarrival {gap!r} s, which its workload "
                    f"refuses: {str(e).splitlines()[0]}"
                ) from None
        return {**over, **drawn}


class RandomEnds(gym.Wrapper):
    """End each episode at the first decision at or after an Exp(mean) horizon."""

    def __init__(self, env: gym.Env, horizon_mean_s: float):
        super().__init__(env)
        self.horizon_mean_s = float(horizon_mean_s)
        self._rng: np.random.Generator | None = None
        self.horizon_s = np.inf

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), _SALT])
        elif self._rng is None:
            self._rng = np.random.default_rng()  # unseeded, as any gymnasium env
        self.horizon_s = float(self._rng.exponential(self.horizon_mean_s))
        obs, info = self.env.reset(seed=seed, options=options)
        info["horizon_s"] = self.horizon_s
        return obs, info

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not terminated and not truncated and info["sim_time"] >= self.horizon_s:
            terminated = True  # Decima's end: the return stops here (module docstring)
            info["cut_at_s"] = self.horizon_s
            # as the env reports an episode's end: the training callbacks count and log it
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

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        dt = float(info["dt"])
        shaped = float(reward) - self.rate * dt  # the rate of the steps before this one
        self.reward_sum = self.beta * self.reward_sum + float(reward)
        self.time_sum = self.beta * self.time_sum + dt
        info["reward_rate"] = self.rate
        return obs, shaped, terminated, truncated, info


def make_continuous_env(
    spec: dict[str, Any] | ContinuousSpec, hooks: str | None = None, **kwargs: Any
) -> gym.Env:
    """``make_vec_env``'s env factory: ``MRCluster-v1`` with ``kwargs`` (their overrides
    from :meth:`ContinuousSpec.overrides`), ``hooks`` installed, and random ends; the
    differential reward goes on as ``wrapper_class`` (:func:`differential`), outside SB3's
    ``Monitor``."""
    from agents.env_hooks import make_env

    spec = ContinuousSpec.from_dict(spec)
    return RandomEnds(make_env(kwargs, hooks), spec.horizon_mean_s)


def differential(env: gym.Env, window_steps: int) -> gym.Env:
    """``make_vec_env``'s ``wrapper_class`` for a spec with ``differential: true``."""
    return DifferentialReward(env, window_steps)
