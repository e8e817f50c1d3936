"""One run of a policy x scenario x seed grid as one flat row: the unit of work that
:mod:`mrgym.sweep` hands to its workers and :func:`mrgym.evaluate.evaluate` collects.

It sits below both so that neither imports the other's module back.
"""

from __future__ import annotations

from typing import Any

from mrgym.policy import BINDING_SETTINGS
from mrgym.runner import run_episode, run_sim


def flatten(metrics: dict[str, Any]) -> dict[str, Any]:
    """``episode_metrics`` as one flat row: nested dicts become ``"key.sub"`` columns, plus
    ``local_frac`` (node- and server-local maps) and ``small_jct_s``."""
    row: dict[str, Any] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                row[f"{k}.{kk}"] = vv
        else:
            row[k] = v
    loc = metrics["map_locality"]
    row["local_frac"] = loc["node"] + loc["server"]
    row["small_jct_s"] = metrics["mean_jct_by_class_s"].get("small")
    return row


def run_row(pol, sc, seed: int, env_kwargs: dict, keep_logs: bool = False) -> dict[str, Any]:
    """One run of the grid as its flat row (the unit of work of :mod:`mrgym.sweep`)."""
    name, metrics, wall, log = _run_one(pol, sc, seed, env_kwargs)
    sc_name = sc if isinstance(sc, str) else getattr(sc, "name", "scenario")
    row = {"policy": name, "scenario": sc_name, "seed": seed, "wall_s": wall}
    row.update(flatten(metrics))
    if keep_logs:
        row["_jobs"] = log
    return row


def _run_one(pol, sc, seed: int, env_kwargs: dict):
    # a factory ``make_policy(env)`` or a policy object (``ModelPolicy.load(run)``) runs in
    # the gym loop; a scheduler (name or object) runs directly
    factory = callable(pol) and not hasattr(pol, "decide") and not isinstance(pol, str)
    if factory or (hasattr(pol, "predict") and not hasattr(pol, "decide")):
        import gymnasium as gym

        # a saved model brings its training settings; the caller's env_kwargs may change
        # the others (reward weights, time cap) but not the ones its actions depend on
        own = getattr(pol, "env_kwargs", None) or {}
        for key in BINDING_SETTINGS:
            if key in own and key in env_kwargs and env_kwargs[key] != own[key]:
                name = getattr(pol, "name", "model")
                raise ValueError(
                    f"env_kwargs {key}={env_kwargs[key]!r}: {name} was trained with "
                    f"{key}={own[key]!r}"
                )
        kw = {**own, **env_kwargs}
        env = gym.make("MRCluster-v1", config=sc, **kw)
        policy = pol(env) if factory else pol
        r = run_episode(env, policy, seed, max_steps=getattr(policy, "max_decisions", None))
        jobs = [
            (j.id, j.name, len(j.maps), j.arrived_s, j.finish_s) for j in env.unwrapped.sim.jobs
        ]
        env.close()
        return getattr(policy, "name", "model"), r.metrics, r.wall_s, jobs
    r = run_sim(sc, pol, seed)
    return r.scheduler, r.metrics, r.wall_s, r.jobs
