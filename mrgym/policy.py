"""Policies in the Gymnasium loop: a Scheduler wrapped as an agent, or an SB3 model.

Both expose ``predict(obs, info) -> action`` so :func:`mrgym.run_episode` runs baselines
and learned agents through one loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrgym.sim.scheduler import MAP, SPECULATE, Decision, Scheduler


class EnvPolicy:
    """Encode a Scheduler's decision for the current slot as an action.

    The scheduler's ``place_job``/``control``/``reset`` run inside the environment too.
    ``predict`` never raises on a decision the action space cannot express: it plays the
    closest legal action instead (the same kind for the first slot job that allows it,
    else any legal launch, else decline; see ``ActionCodec.closest``).  ``inexact`` counts
    such decisions over the policy's life, together with launches whose named task is not
    the one the environment picks (a random map, LATE's backup choice);
    :func:`mrgym.run_episode` reports one episode's count as ``EpisodeResult.inexact``."""

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
        action, exact = env.closest_action(d)
        if exact and d.task is not None and not self._same_task(env.sim, ctx, d):
            exact = False
        if not exact:
            self.inexact += 1
        return action

    @staticmethod
    def _same_task(sim, ctx, d: Decision) -> bool:
        """Whether the environment's launch of ``d``'s kind for its job picks ``d.task``."""
        job = sim.active[d.job]
        if d.kind == MAP:
            best = sim.best_map(job, ctx.vm)
            return best is not None and best[0].index == d.task
        if d.kind == SPECULATE:
            t = sim.speculation_target(job, ctx.slot_kind, ctx.vm)
            return t is not None and t.index == d.task
        return True  # reduces are interchangeable


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
