"""Policies in the Gymnasium loop: a Scheduler wrapped as an agent, or an SB3 model.

Both expose ``predict(obs, info) -> action`` so :func:`mrgym.run_episode` runs baselines
and learned agents through one loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrgym.sim.scheduler import MAP, SPECULATE, Scheduler


class EnvPolicy:
    """Encode a Scheduler's decision for the current slot as an action.

    The scheduler's ``place_job``/``control``/``reset`` run inside the environment too.
    ``inexact`` counts decisions the action space could not express exactly (a named task
    other than the one the environment would pick)."""

    def __init__(self, scheduler: Scheduler | str, **params):
        from mrgym.runner import make_scheduler

        self.scheduler = make_scheduler(scheduler, **params)
        self.name = getattr(self.scheduler, "name", type(self.scheduler).__name__)
        self.env = None
        self.inexact = 0

    def bind(self, env) -> None:
        self.env = env.unwrapped
        self.env.set_hooks(self.scheduler)

    def predict(self, obs: np.ndarray, info: dict[str, Any] | None = None) -> int:
        env = self.env
        if env is None:
            raise RuntimeError("EnvPolicy is not bound to an environment: use mrgym.run_episode")
        ctx = env.decision_context()
        d = self.scheduler.decide(ctx)
        if d.kind is not None and d.task is not None:
            sim = env.sim
            job = sim.active[d.job]
            if d.kind == MAP:
                best = sim.best_map(job, ctx.vm)
                same = best is not None and best[0].index == d.task
            elif d.kind == SPECULATE:
                t = sim.speculation_target(job, ctx.slot_kind, ctx.vm)
                same = t is not None and t.index == d.task
            else:
                same = True  # reduces are interchangeable
            if not same:
                self.inexact += 1
        return env.encode(d)


class ModelPolicy:
    """An SB3 model (MaskablePPO gets the action mask; others rely on decline-on-invalid)."""

    def __init__(self, model, deterministic: bool = True, name: str | None = None):
        self.model = model
        self.deterministic = deterministic
        self.name = name or type(model).__name__
        self.maskable = "action_masks" in model.predict.__code__.co_varnames

    def bind(self, env) -> None:
        pass

    def predict(self, obs: np.ndarray, info: dict[str, Any] | None = None) -> int:
        if self.maskable and info is not None:
            a, _ = self.model.predict(
                obs, action_masks=info["action_mask"].astype(bool), deterministic=self.deterministic
            )
        else:
            a, _ = self.model.predict(obs, deterministic=self.deterministic)
        return int(a)
