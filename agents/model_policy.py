"""A saved or in-memory SB3 model as a policy of the Gymnasium loop (``ModelPolicy``).

It lives with the learning side because loading a model needs SB3 and torch; the library
re-exports it lazily (``mrgym.ModelPolicy``, ``mrgym.policy.ModelPolicy``), so ``import
mrgym`` needs neither and never imports this package.  Importing this module needs no RL
extras either: torch and SB3 are imported when a model is loaded or asked for its action
probabilities.

:class:`ModelSpec` is a saved model as picklable data, for parallel runs
(:mod:`mrgym.sweep`): each worker loads the model itself.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.sampling import check_temperature, sharpen
from mrgym.envs.observation import CRITIC_FEATURES, GLOBAL_FEATURES, JOB_FEATURES, VM_FEATURES
from mrgym.policy import BINDING_SETTINGS, env_setting

# How a deterministic model turns its action distribution into one action:
# "argmax": the most likely action (SB3's deterministic predict);
# "launch-first": decline only if declining (decline and any waits) holds at least half of
#   the legal probability, else the most likely launch.  Decline is one action against up
#   to 3K launches: a policy that launches 70 % of the time, spread over several jobs, can
#   still have decline as its single most likely action, and argmax then holds every
#   slot back (a trained ila72 policy finished 5 of 25 jobs within 30 000 decisions while
#   its sampled episodes finished all 25).  Deciding launch-or-not first, then which, keeps the policy's own
#   launch rate's majority;
# "sample": an action drawn from the masked distribution by a generator seeded with the
#   episode's seed (run_episode calls start_episode), so results stay a function of the
#   seed.  The policy as trained: its training episodes are sampled.
DECODES = ("argmax", "launch-first", "sample")
ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")


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
        temperature: float = 1.0,
    ):
        if decode not in DECODES:
            raise ValueError(f"decode: must be one of {DECODES}, got {decode!r}")
        check_temperature(temperature, decode)
        self.model = model
        self.deterministic = deterministic
        self.decode = decode
        # "sample" draws from the probabilities to the power 1/temperature (1: as they are)
        self.temperature = float(temperature)
        self._rng = np.random.default_rng(0)  # "sample": re-seeded by start_episode
        self.name = name or type(model).__name__
        self.maskable = "action_masks" in model.predict.__code__.co_varnames
        # the training env's keyword arguments, without the scenario (``config``)
        self.env_kwargs: dict[str, Any] = dict(env_kwargs or {})
        self._decline: int | None = None  # the decline action of the env bound last
        self.scenario = scenario
        # the harness cuts an episode after this many decisions (None: never): a model that
        # holds every slot back would otherwise run on to the time cap (mrgym compare)
        self.max_decisions = max_decisions
        # the training config's cap on its held-out evaluations (``eval.max_steps``)
        self.eval_max_steps: int | None = None
        # a scheduler whose hooks ran in the training env (``env.hooks``): bind installs a
        # fresh one, so the model is evaluated with them (agents/env_hooks.py)
        self.hooks: str | None = None
        # below this many active jobs the decision is the hooks' scheduler's (its closest
        # action), from the model's config (``eval.defer_below``; None: the model makes
        # every decision); ``deferred`` counts the episode's decisions handed over
        self.defer_below: int | None = None
        self.deferred = 0  # in the episode under way (start_episode resets it)
        self._env: Any = None  # the bound env, unwrapped: what deferring asks

    @classmethod
    def load(
        cls,
        path: str | Path,
        deterministic: bool = True,
        name: str | None = None,
        decode: str | None = None,
        max_decisions: int | None = None,
        env_kwargs: dict[str, Any] | None = None,
        algorithm: str | None = None,
    ) -> ModelPolicy:
        """A saved model: a run folder (its ``model.zip``), a ``.zip``, a checkpoint, or a
        shipped model's short name (``models/NAME/``, agents/shipped.py; named NAME).

        With a ``config.yaml`` beside the .zip (or one folder up, for checkpoints), the
        model carries the settings it was trained with.  ``mrgym train`` writes that file;
        it is a training config (``configs/train/*.yaml``), of which loading reads::

            algorithm: maskable_ppo   # or ppo, a2c, dqn: the class that loads the .zip
            env:                      # the keyword arguments of MRCluster-v0
              scenario: ila72         # gym.make's ``config``
              job_slots: 8
              queue_order: remaining
              speculation: false
              work_conserving: true
              critic_inputs: false
              hooks: null             # a scheduler whose hooks ran around the agent
              hooks_gate: false
              wait_actions: 0         # waits after decline (MRClusterEnv)
              reward_weights: {jct: 1.0}
              max_sim_time_s: null    # null: the scenario's run.max_sim_time_s
            eval:
              decode: argmax          # DECODES; ``decode`` overrides it
              temperature: 1.0        # "sample" draws from p ** (1 / temperature)
              defer_below: null       # below N active jobs, env.hooks' scheduler decides
              max_steps: 200000

        Every key is optional (the defaults are ``MRCluster-v0``'s).  Without the file (a
        model saved by one's own SB3 script), the algorithm comes from the .zip
        (``algorithm`` overrides it) and the job slots and critic inputs from its saved
        spaces; ``env_kwargs`` gives the other settings the model was trained with
        (``queue_order``, ``speculation``, ...; the environment's defaults otherwise; a
        ``config`` key is the scenario ``make_env`` builds).  A .zip whose spaces no
        ``MRCluster-v0`` has is a one-line ``ValueError``.  Without the ``[rl]`` extras
        it raises ``ModuleNotFoundError`` with the one line the CLI prints."""
        require_rl_extras("ModelPolicy.load")
        from agents.shipped import shipped_path
        from agents.train import resolve_model_path

        zip_path = resolve_model_path(path)
        if name is None and shipped_path(path) is not None:
            name = str(path)  # a shipped model is named by its short name
        config = _config_file(zip_path)
        if config is not None and env_kwargs:
            raise ValueError(
                f"env_kwargs: {zip_path} has its settings in {config}; pass env_kwargs only "
                "for a model saved without one"
            )
        if config is None:
            policy = _load_bare(cls, zip_path, env_kwargs, algorithm, name, deterministic)
            policy.decode = decode or "argmax"
        else:
            policy = _load_run(cls, zip_path, name, deterministic, decode)
        if policy.decode not in DECODES:
            raise ValueError(f"decode: must be one of {DECODES}, got {policy.decode!r}")
        policy.max_decisions = max_decisions
        return policy

    def make_env(self, config=None, **kwargs):
        """``gym.make("MRCluster-v1", ...)`` with the training settings (``config``: another
        scenario; ``kwargs`` override the non-binding ones, e.g. ``render_mode``)."""
        import gymnasium as gym

        kw = {**self.env_kwargs, **kwargs}
        config = config or self.scenario
        if config is None:  # a bare SB3 zip: its spaces fit many scenarios, none is implied
            raise ValueError(
                f"{self.name}: saved without a training config.yaml, so it names no "
                "scenario; pass config=SCENARIO"
            )
        return gym.make("MRCluster-v1", config=config, **kw)

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
            theirs = env_setting(env, key)
            if theirs != self.env_kwargs[key]:
                raise ValueError(
                    f"{self.name}: env {key}={theirs!r} but the model was trained with "
                    f"{key}={self.env_kwargs[key]!r}{_hint(self)}"
                )
        if self.hooks is not None:
            from mrgym.registry import make

            env.unwrapped.set_hooks(make(self.hooks), decides=False)
        # where declining starts (decline, then any waits): launch-first reads it
        self._decline = int(env.unwrapped.codec.decline)
        self._env = env.unwrapped

    def start_episode(self, seed: int) -> None:
        """Called by :func:`mrgym.run_episode` before the reset: seeds "sample"."""
        self._rng = np.random.default_rng([int(seed), 0x5A4D])
        self.deferred = 0

    def predict(self, obs: np.ndarray, info: dict[str, Any] | None = None) -> int:
        if self.defer_below is not None:
            action = self._deferred_action()
            if action is not None:
                return action
        if self.decode != "argmax" and info is not None:
            mask = info["action_mask"].astype(bool)
            if self.decode == "sample":
                p = self._probs(obs, mask)
                if self.temperature != 1.0:
                    p = sharpen(p, self.temperature)
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

    def _deferred_action(self) -> int | None:
        """The hooks' scheduler's action when fewer than ``defer_below`` jobs are active,
        else None (the model decides).  Why: at light load SRPT's order is near its best
        on slowdown, and a sampled policy's departures from it cost more than they gain
        (docs/learning.md, the fairness track); at heavy load the model's gains lie."""
        env = self._env
        if env is None:
            raise RuntimeError(
                f"{self.name}: eval.defer_below asks the environment: bind(env) first "
                "(run_episode does)"
            )
        # the view's active jobs, not decision_context(): asking for the context marks the
        # step as one whose hooks decided, which a copy of the env replays (envs/replay.py)
        if len(env.view.jobs) >= self.defer_below:
            return None
        self.deferred += 1
        return env.hooks_action()[0]

    def _launch_first(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Decline iff declining (decline and the waits after it) has at least half of the
        legal actions' probability, then the most likely of those, else the most likely
        legal launch (``DECODES``)."""
        probs = self._probs(obs, mask)
        first = getattr(self, "_decline", None)  # bound to an env; else the settings say
        if first is None:
            first = len(probs) - 1 - int(self.env_kwargs.get("wait_actions", 0))
        launch = probs[:first]
        if not mask[:first].any() or probs[first:].sum() >= launch.sum():
            return first + int(np.argmax(probs[first:]))
        return int(np.argmax(np.where(mask[:first], launch, -1.0)))

    def _probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's action probabilities, 0 on illegal actions (float64)."""
        import torch as th  # lazy: the policy class imports without the rl extras

        policy = self.model.policy
        # inference mode, not only no_grad: no autograd records or version counters on
        # the ~10 small tensors of each of an episode's ~10 000 decisions
        with th.inference_mode():
            logits = _action_logits(policy, obs)
            if logits is None:  # not a categorical policy: its own distribution object
                obs_t, _ = policy.obs_to_tensor(obs)
                if self.maskable:
                    dist = policy.get_distribution(obs_t, action_masks=mask)
                else:
                    dist = policy.get_distribution(obs_t)
                probs = dist.distribution.probs[0]
            else:
                probs = categorical_probs(logits, mask if self.maskable else None)[0]
            probs = probs.cpu().numpy().astype(np.float64)
        return np.where(mask, probs, 0.0)


def _action_logits(policy, obs: np.ndarray):
    """The action logits ``policy.get_distribution`` would build its distribution from
    (the same modules, so the same numbers), or None when its distribution is not a
    (maskable) categorical one, whose probabilities :func:`categorical_probs` gives."""
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
    from stable_baselines3.common.distributions import CategoricalDistribution
    from stable_baselines3.common.policies import BaseModel

    dist = getattr(policy, "action_dist", None)
    if not isinstance(dist, CategoricalDistribution | MaskableCategoricalDistribution):
        return None
    import torch as th

    # obs_to_tensor's batch of one, without its copy and its checks for vectorized input
    obs_t = th.as_tensor(np.asarray(obs).reshape((-1, *policy.observation_space.shape)))
    features = BaseModel.extract_features(policy, obs_t, policy.pi_features_extractor)
    latent_pi = policy.mlp_extractor.forward_actor(features)
    return policy.action_net(latent_pi).view(-1, dist.action_dim)


def categorical_probs(logits, mask: np.ndarray | None):
    """The ``probs`` of SB3's ``Categorical(logits=logits)``, masked as sb3-contrib's
    ``MaskableCategorical`` masks (``mask`` None: unmasked), by the same torch operations
    in the same order, so bit for bit the same, without building three distribution
    objects per decision (a third of a saved model's decision time): the logits
    normalized by their logsumexp; the illegal ones set to -1e8 and the result normalized
    again; its softmax."""
    import torch as th

    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    if mask is not None:
        legal = th.as_tensor(mask, dtype=th.bool).reshape(logits.shape)
        masked = th.where(legal, logits, th.tensor(-1e8, dtype=logits.dtype))
        logits = masked - masked.logsumexp(dim=-1, keepdim=True)
    return th.softmax(logits, dim=-1)


def require_rl_extras(what: str) -> None:
    """Raise ``ModuleNotFoundError`` naming the extras to install when a module of the
    ``[rl]`` extras is missing: the message ``mrgym train`` and the other commands print
    (``mrgym.extras``), not a traceback from deep inside the first import."""
    from mrgym.extras import RL_HINT, RL_MODULES, missing

    gone = missing(RL_MODULES)
    if gone:
        raise ModuleNotFoundError(f"{what} needs {RL_HINT}", name=gone[0])


def _hint(policy: ModelPolicy) -> str:
    if policy.env_kwargs:
        return "; build the env with policy.make_env() or gym.make(..., **policy.env_kwargs)"
    return "; ModelPolicy.load(run_dir) knows the training settings"


def _config_file(zip_path: Path) -> Path | None:
    from agents.train import find_config

    try:
        return find_config(zip_path)
    except FileNotFoundError:
        return None


def _load_run(cls, zip_path: Path, name, deterministic, decode) -> ModelPolicy:
    """A model with its training config beside it (``mrgym train``'s run folder)."""
    from agents.train import env_kwargs as config_env_kwargs
    from agents.train import load_model, model_label

    model, cfg = load_model(zip_path)
    kw = config_env_kwargs(cfg)
    scenario = kw.pop("config")
    policy = cls(
        model,
        deterministic=deterministic,
        name=name or model_label(zip_path, cfg),
        env_kwargs=kw,
        scenario=scenario,
        decode=decode or cfg.eval.decode,
        # the run's temperature goes with its own decode only (an override samples as is)
        temperature=cfg.eval.temperature if decode in (None, cfg.eval.decode) else 1.0,
    )
    policy.eval_max_steps = cfg.eval.max_steps
    policy.hooks = cfg.env.hooks
    policy.defer_below = cfg.eval.defer_below
    return policy


def _load_bare(cls, zip_path: Path, env_kwargs, algorithm, name, deterministic) -> ModelPolicy:
    """A .zip saved by ``model.save(...)`` in one's own script: no config beside it."""
    from agents.config import algorithm_class

    data = _saved_data(zip_path)
    algorithm = algorithm or saved_algorithm(data)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: must be one of {ALGORITHMS}, got {algorithm!r}")
    kw = dict(env_kwargs or {})
    scenario = kw.pop("config", None)
    kw.update(space_settings(data, zip_path, kw))
    model = algorithm_class(algorithm).load(str(zip_path), device="cpu")
    from agents.config import EvalConfig

    stem = zip_path.parent.name if zip_path.name == "model.zip" else zip_path.stem
    policy = cls(
        model,
        deterministic=deterministic,
        name=name or f"{algorithm}:{stem}",
        env_kwargs=kw,
        scenario=scenario,
    )
    # compare's default decision cap, as for a run whose config left eval.max_steps alone
    policy.eval_max_steps = EvalConfig().max_steps
    return policy


def _saved_data(zip_path: Path) -> dict[str, Any]:
    """The JSON an SB3 .zip keeps its settings and spaces in (read without torch)."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            return json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise ValueError(f"{zip_path}: not a model saved by Stable-Baselines3 ({e})") from None


def saved_algorithm(data: dict[str, Any]) -> str:
    """Which of ``ALGORITHMS`` saved ``data``: DQN keeps an exploration rate, PPO a clip
    range (MaskablePPO's policies live in sb3_contrib's ``maskable`` module), A2C neither."""
    if "exploration_rate" in data:
        return "dqn"
    if "clip_range" not in data:
        return "a2c"
    module = str(data.get("policy_class", {}).get("__module__", ""))
    return "maskable_ppo" if "maskable" in module else "ppo"


def space_settings(data: dict[str, Any], zip_path: Path, kw: dict[str, Any]) -> dict[str, Any]:
    """``job_slots`` and ``critic_inputs`` from a saved model's spaces: the action space is
    ``Discrete(3 K + 1 + W)`` (W: ``env_kwargs``' ``wait_actions``, default 0), the
    observation ``Box`` has one entry per feature of :mod:`mrgym.envs.observation` (K job
    slots, the critic's features when on)."""
    n = _int(data.get("action_space", {}).get("n"))  # SB3 writes it as a string
    shape = data.get("observation_space", {}).get("_shape")
    head = len(VM_FEATURES) + len(GLOBAL_FEATURES)
    waits = kw.get("wait_actions", 0)
    if n is None or (n - 1 - waits) % 3 or n < 4 + waits or not shape or len(shape) != 1:
        raise ValueError(
            f"{zip_path}: action space n={n}, observation shape {shape}: not a model of "
            f"MRCluster-v0 with wait_actions={waits} (expected Discrete(3 * job_slots + 1 + "
            "wait_actions) and a flat Box; a model with waits: pass env_kwargs wait_actions)"
        )
    k = (n - 1 - waits) // 3
    if "job_slots" in kw and kw["job_slots"] != k:
        raise ValueError(
            f"env_kwargs job_slots={kw['job_slots']!r}: {zip_path}'s action space "
            f"Discrete({n}) has {k} job slots"
        )
    size = head + k * len(JOB_FEATURES)
    extra = shape[0] - size
    if extra not in (0, len(CRITIC_FEATURES)):
        raise ValueError(
            f"{zip_path}: observation shape {tuple(shape)} does not match MRCluster-v0 with "
            f"job_slots={k}: expected ({size},), or ({size + len(CRITIC_FEATURES)},) with "
            "critic_inputs=True (a model with wait actions: pass env_kwargs wait_actions)"
        )
    out: dict[str, Any] = {"job_slots": k}
    if extra:
        out["critic_inputs"] = True
    return out


def _int(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


# saved models loaded in this process, by (path, name, cap): a worker loads each model once,
# not once per seed
_MODELS: dict[tuple[str, str | None, int | None], ModelPolicy] = {}


@dataclass(frozen=True)
class ModelSpec:
    """A saved model as picklable data (its path): each worker process loads it itself.

    ``mrgym.evaluate`` treats it as a policy factory: ``spec(env)`` returns the
    :class:`ModelPolicy`, and ``env_kwargs`` are the model's training settings.  On a
    multi-machine Ray cluster the path must exist on every node (shared storage)."""

    path: str
    name: str | None = None
    max_decisions: int | None = None  # ModelPolicy.max_decisions

    def load(self) -> ModelPolicy:
        key = (self.path, self.name, self.max_decisions)
        if key not in _MODELS:
            _MODELS[key] = ModelPolicy.load(
                self.path, name=self.name, max_decisions=self.max_decisions
            )
        return _MODELS[key]

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return self.load().env_kwargs

    def __call__(self, env) -> ModelPolicy:
        return self.load()
