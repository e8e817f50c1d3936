"""Policies in the Gymnasium loop: a Scheduler wrapped as an agent, or an SB3 model.

Both expose ``predict(obs, info) -> action`` so :func:`mrgym.run_episode` runs baselines
and learned agents through one loop.  :class:`EnvPolicy` is here; ``ModelPolicy`` (and
its ``DECODES``) live with the learning side, :mod:`agents.model_policy`, as loading a
model needs SB3: this module re-exports them on first use (PEP 562), so importing it
imports neither ``agents`` nor torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrgym.sim.scheduler import Scheduler


class EnvPolicy:
    """Encode a Scheduler's decision for the current slot as an action.

    The scheduler's ``place_job``/``control``/``reset`` run inside the environment too.
    ``predict`` never raises on a decision the action space cannot express: it plays the
    closest legal action instead (the same kind for the first slot job that allows it,
    else any legal launch, else decline; see ``ActionCodec.closest``).  ``inexact`` counts
    such decisions over the policy's life, together with launches whose named task is not
    the one the action launches (``MRClusterEnv.launched_task``: a random map, say; a
    backup the scheduler's ``pick_task`` names is launched as named);
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
        d = self.scheduler.decide(env.decision_context())
        action, exact = env.closest_action(d)
        if exact and d.task is not None and env.launched_task(action) != d.task:
            exact = False  # the action launches another task of the job
        if not exact:
            self.inexact += 1
        return action


# the env settings a trained model is tied to: each changes the action space's meaning or
# which actions are legal, so a model run under other values acts on the wrong jobs (or
# declines for ever); reward weights, overrides and the time cap may differ at evaluation
BINDING_SETTINGS = (
    "job_slots",
    "queue_order",
    "speculation",
    "work_conserving",
    "critic_inputs",
    "hooks_gate",
    "observation_version",
    "wait_actions",
)


def env_setting(env, key: str) -> Any:
    """One of ``BINDING_SETTINGS`` as the environment ``env`` applies it."""
    u = env.unwrapped
    codec = u.codec
    if key == "job_slots":
        return codec.k
    if key == "wait_actions":
        return codec.waits
    if key in (
        "speculation",
        "work_conserving",
        "critic_inputs",
        "hooks_gate",
        "observation_version",
    ):
        return getattr(u, key)  # the constructor's value (the codec's follows hooks at reset)
    return getattr(codec, key)


# names that live in agents.model_policy, re-exported on first use
_LAZY = ("ModelPolicy", "DECODES")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import agents.model_policy

        return getattr(agents.model_policy, name)
    raise AttributeError(f"module 'mrgym.policy' has no attribute {name!r}")
