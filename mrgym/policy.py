"""Policies in the Gymnasium loop: a Scheduler wrapped as an agent, or an SB3 model.

Both expose ``predict(obs, info) -> action`` so :func:`mrgym.run_episode` runs baselines
and learned agents through one loop.
"""

from __future__ import annotations

from pathlib import Path
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
        if exact and d.task is not None and not self._same_task(ctx.view, ctx, d):
            exact = False
        if not exact:
            self.inexact += 1
        return action

    @staticmethod
    def _same_task(view, ctx, d: Decision) -> bool:
        """Whether the environment's launch of ``d``'s kind for its job picks ``d.task``."""
        job = view.job(d.job)
        if d.kind == MAP:
            best = view.best_map(job, ctx.vm)
            return best is not None and best[0].index == d.task
        if d.kind == SPECULATE:
            t = view.speculation_target(job, ctx.slot_kind, ctx.vm)
            return t is not None and t.index == d.task
        return True  # reduces are interchangeable


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
)


def _env_setting(env, key: str) -> Any:
    """One of ``BINDING_SETTINGS`` as the environment ``env`` applies it."""
    u = env.unwrapped
    codec = u.codec
    if key == "job_slots":
        return codec.k
    if key in ("speculation", "work_conserving", "critic_inputs", "hooks_gate"):
        return getattr(u, key)  # the constructor's value (the codec's follows hooks at reset)
    return getattr(codec, key)


# How a deterministic model turns its action distribution into one action:
# "argmax": the most likely action (SB3's deterministic predict);
# "launch-first": decline only if it holds at least half of the legal probability, else the
#   most likely launch.  Decline is one action against up to 3K launches: a policy that
#   launches 70 % of the time, spread over several jobs, can still have decline as its
#   single most likely action, and argmax then holds every slot back (a trained ila72
#   policy finished 5 of 25 jobs within 30 000 decisions while its sampled episodes
#   finished all 25).  Deciding launch-or-not first, then which, keeps the policy's own
#   launch rate's majority;
# "sample": an action drawn from the masked distribution by a generator seeded with the
#   episode's seed (run_episode calls start_episode), so results stay a function of the
#   seed.  The policy as trained: its training episodes are sampled.
DECODES = ("argmax", "launch-first", "sample")


class ModelPolicy:
    """An SB3 model (MaskablePPO gets the action mask; others rely on decline-on-invalid).

    ``ModelPolicy.load(run_dir_or_zip)`` also carries the training env settings
    (``env_kwargs``, ``scenario``): ``make_env()`` builds that env, ``mrgym.evaluate``
    builds its envs from them, and ``bind(env)`` (called by ``run_episode``) raises a
    one-line ``ValueError`` when ``env`` differs in a setting the model depends on.  A bare
    ``ModelPolicy(model)`` checks the spaces only.
    """

    def __init__(
        self,
        model,
        deterministic: bool = True,
        name: str | None = None,
        env_kwargs: dict[str, Any] | None = None,
        scenario: str | None = None,
        decode: str = "argmax",
        max_decisions: int | None = None,
    ):
        if decode not in DECODES:
            raise ValueError(f"decode: must be one of {DECODES}, got {decode!r}")
        self.model = model
        self.deterministic = deterministic
        self.decode = decode
        self._rng = np.random.default_rng(0)  # "sample": re-seeded by start_episode
        self.name = name or type(model).__name__
        self.maskable = "action_masks" in model.predict.__code__.co_varnames
        # the training env's keyword arguments, without the scenario (``config``)
        self.env_kwargs: dict[str, Any] = dict(env_kwargs or {})
        self.scenario = scenario
        # the harness cuts an episode after this many decisions (None: never): a model that
        # holds every slot back would otherwise run on to the time cap (mrgym compare)
        self.max_decisions = max_decisions
        # the training config's cap on its held-out evaluations (``eval.max_steps``)
        self.eval_max_steps: int | None = None
        # a scheduler whose hooks ran in the training env (``env.hooks``): bind installs a
        # fresh one, so the model is evaluated with them (agents/env_hooks.py)
        self.hooks: str | None = None

    @classmethod
    def load(
        cls,
        path: str | Path,
        deterministic: bool = True,
        name: str | None = None,
        decode: str | None = None,
        max_decisions: int | None = None,
    ) -> ModelPolicy:
        """A saved model (a run folder, its model.zip or a checkpoint) with the training
        config saved beside it (``config.yaml``, written by ``mrgym train``); ``decode``
        defaults to the config's ``eval.decode``."""
        # lazy: mrgym imports without the rl extras (torch, SB3)
        from agents.train import env_kwargs, load_model, model_label, resolve_model_path

        zip_path = resolve_model_path(path)
        model, cfg = load_model(zip_path)
        kw = env_kwargs(cfg)
        scenario = kw.pop("config")
        policy = cls(
            model,
            deterministic=deterministic,
            name=name or model_label(zip_path, cfg),
            env_kwargs=kw,
            scenario=scenario,
            decode=decode or cfg.eval.decode,
            max_decisions=max_decisions,
        )
        policy.eval_max_steps = cfg.eval.max_steps
        policy.hooks = cfg.env.hooks
        return policy

    def make_env(self, config=None, **kwargs):
        """``gym.make("MRCluster-v0", ...)`` with the training settings (``config``: another
        scenario; ``kwargs`` override the non-binding ones, e.g. ``render_mode``)."""
        import gymnasium as gym

        kw = {**self.env_kwargs, **kwargs}
        return gym.make("MRCluster-v0", config=config or self.scenario or "ila72", **kw)

    def bind(self, env) -> None:
        """Refuse an env whose spaces or binding settings differ from the model's; install
        the training env's hooks (``hooks``) in it."""
        for what, mine, theirs in (
            ("action space", self.model.action_space, env.action_space),
            ("observation space", self.model.observation_space, env.observation_space),
        ):
            if getattr(mine, "shape", None) != getattr(theirs, "shape", None) or getattr(
                mine, "n", None
            ) != getattr(theirs, "n", None):
                raise ValueError(
                    f"{self.name}: the env's {what} {theirs} does not match the model's {mine}"
                    f"{_hint(self)}"
                )
        for key in BINDING_SETTINGS:
            if key not in self.env_kwargs:
                continue
            theirs = _env_setting(env, key)
            if theirs != self.env_kwargs[key]:
                raise ValueError(
                    f"{self.name}: env {key}={theirs!r} but the model was trained with "
                    f"{key}={self.env_kwargs[key]!r}{_hint(self)}"
                )
        if self.hooks is not None:
            from mrgym.registry import make

            env.unwrapped.set_hooks(make(self.hooks), decides=False)

    def start_episode(self, seed: int) -> None:
        """Called by :func:`mrgym.run_episode` before the reset: seeds "sample"."""
        self._rng = np.random.default_rng([int(seed), 0x5A4D])

    def predict(self, obs: np.ndarray, info: dict[str, Any] | None = None) -> int:
        if self.decode != "argmax" and info is not None:
            mask = info["action_mask"].astype(bool)
            if self.decode == "sample":
                p = self._probs(obs, mask)
                return int(self._rng.choice(len(p), p=p / p.sum()))
            if self.deterministic:
                return self._launch_first(obs, mask)
        if self.maskable and info is not None:
            a, _ = self.model.predict(
                obs, action_masks=info["action_mask"].astype(bool), deterministic=self.deterministic
            )
        else:
            a, _ = self.model.predict(obs, deterministic=self.deterministic)
        return int(a)

    def _launch_first(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Decline iff it has at least half of the legal actions' probability, else the
        most likely legal launch (``DECODES``); the decline action is the last one."""
        probs = self._probs(obs, mask)
        launch = probs[:-1]
        if not mask[:-1].any() or probs[-1] >= launch.sum():
            return len(probs) - 1
        return int(np.argmax(np.where(mask[:-1], launch, -1.0)))

    def _probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's action probabilities, 0 on illegal actions (float64)."""
        import torch as th  # lazy: mrgym imports without the rl extras

        policy = self.model.policy
        obs_t, _ = policy.obs_to_tensor(obs)
        with th.no_grad():
            if self.maskable:
                dist = policy.get_distribution(obs_t, action_masks=mask)
            else:
                dist = policy.get_distribution(obs_t)
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        return np.where(mask, probs, 0.0)


def _hint(policy: ModelPolicy) -> str:
    if policy.env_kwargs:
        return "; build the env with policy.make_env() or gym.make(..., **policy.env_kwargs)"
    return "; ModelPolicy.load(run_dir) knows the training settings"
