"""Imitation warm start: behaviour cloning of a baseline before reinforcement learning.

A randomly initialised MaskablePPO policy on ila72 spends its first ~100 k steps far worse
than Fair (held-out mean JCT 350 s at 100 k steps against Fair's ~167 s) and, on two cores,
rarely gets past the classic schedulers within a few hundred thousand steps.  Starting the
policy from a baseline's decisions (behaviour cloning, then PPO fine-tuning, as in
AlphaGo's supervised stage or DQfD) puts the first rollouts at the expert's level, so RL
only has to learn where to deviate from it.

The expert is any registered scheduler *without* environment hooks (``place_job`` /
``control``), or the one whose hooks run in the environment (``env.hooks``,
agents/env_hooks.py): its ``decide`` runs on the training environment's own decision contexts
(``env.decision_context()``), and its decision becomes the nearest legal action under the
*training* settings (``env.closest_action``), so the demonstrations have exactly the
observations and masks the agent will see.  Other schedulers with hooks (HybridMR phase
I/II) change the simulation outside the action and are refused: the agent could not copy
them in an environment without their hooks.

The loss is the masked policy's negative log-likelihood of the expert's action (plus, with
``value_coef``, a regression of the value head on the discounted return of the
demonstration, so PPO's first advantages are not noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.envs.mr_cluster import MRClusterEnv
    from mrgym.sim.scheduler import Scheduler


class PretrainConfig(BaseModel):
    """``pretrain:`` in a training config (absent: no warm start)."""

    model_config = ConfigDict(extra="forbid")
    expert: str = "fair"  # a registered scheduler without place_job/control hooks (or env.hooks')
    # demonstration episodes, on seeds 10 000 + 100 x seed + i (apart from every training
    # seed's and from the evaluation seeds)
    episodes: int = Field(8, ge=1, le=100)
    epochs: int = Field(10, ge=1)  # passes over the demonstrations
    batch_size: int = Field(256, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    value_coef: float = Field(0.5, ge=0)  # 0: leave the value head untrained


@dataclass
class Demonstrations:
    obs: np.ndarray  # [N, obs_dim] float32
    masks: np.ndarray  # [N, n_actions] bool
    actions: np.ndarray  # [N] int64
    returns: np.ndarray  # [N] float32, discounted return from each step
    inexact: int  # expert decisions that had no exact legal action
    episodes: int
    # [N] float32, each step's discount exponent: its simulated seconds (info["dt"]) with
    # per_second, else 1
    dts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)


def _expert_env(
    env_kwargs: dict, expert: str, hooks: str | None
) -> tuple[MRClusterEnv, Scheduler, bool]:
    """The training environment (unwrapped) and the expert scheduler that drives it, and
    whether the expert is ``hooks``' scheduler: then its own hooks run in the environment
    and its decisions become actions under the agent's settings (closest_action).  An
    expert with hooks is otherwise refused: an agent's actions cannot express them."""
    from agents.env_hooks import has_hooks, install, make_env
    from mrgym.registry import make

    own = expert == hooks  # the expert's own hooks run in the environment
    scheduler = make(expert)
    if has_hooks(scheduler) and not own:
        raise ValueError(
            f"pretrain.expert: {expert!r} acts through environment hooks (place_job/control) "
            "that an agent's actions cannot express; use a scheduler without hooks, e.g. "
            "fair, or run its hooks in the environment (env.hooks: the same name)"
        )
    env = make_env(env_kwargs).unwrapped
    if own:  # its decisions become actions under the agent's settings (closest_action)
        env.set_hooks(scheduler, decides=False)
    else:
        install(env, hooks)
    return env, scheduler, own


def _discounted_returns(rewards: list[float], dts: list[float], gamma: float) -> np.ndarray:
    """Each step's discounted return, ``gamma ** dt`` per step (``dt`` 1 per decision)."""
    ret = np.zeros(len(rewards), dtype=np.float64)
    acc = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        acc = rewards[i] + gamma ** dts[i] * acc
        ret[i] = acc
    return ret


def collect(
    env_kwargs: dict,
    expert: str,
    seeds: list[int],
    gamma: float = 0.999,
    per_second: bool = False,
    hooks: str | None = None,
    scale_by: str | None = None,
) -> Demonstrations:
    """Run ``expert`` on the training environment for each seed, recording every step.

    The returns the value head is fitted to discount as PPO will: by ``gamma`` per decision,
    or with ``per_second`` (``discount_per: second``) by ``gamma ** dt``, ``dt`` the step's
    simulated seconds (``info["dt"]``), as ``TimeDiscountBuffer``'s GAE does (for an
    episode that ends: one cut by the time cap is not bootstrapped here).  A critic
    fitted to per-decision returns under a per-second discount starts on the wrong scale
    (pna60: ~7 000 decisions in ~250 s), and its advantages move the clone away from the
    expert in the first updates.

    ``hooks`` (``env.hooks``): a scheduler whose hooks run inside the environment
    (agents/env_hooks.py); an expert with hooks is refused unless it is that scheduler,
    whose one instance then places, controls and decides.  ``scale_by``
    (``env.slowdown_scale_by``): each episode's rewards divided as training divides them
    (agents/episode_scale.py), so that the value head starts on training's scale."""
    from agents.episode_scale import mean_square_slowdown

    env, scheduler, own = _expert_env(env_kwargs, expert, hooks)
    obs_l, mask_l, act_l, ret_l, dt_l = [], [], [], [], []
    inexact = 0
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        if not own:  # the environment's reset already reset the hooks' scheduler
            scheduler.reset(seed)
        rewards, dts = [], []
        scale = mean_square_slowdown(env, scale_by) if scale_by is not None else 1.0
        while True:
            mask = np.asarray(info["action_mask"], dtype=bool)
            if own:  # the gate the environment asked is not asked again (hooks_action)
                action, exact = env.hooks_action()
            else:
                action, exact = env.closest_action(scheduler.decide(env.decision_context()))
            inexact += not exact
            obs_l.append(obs)
            mask_l.append(mask)
            act_l.append(action)
            obs, reward, term, trunc, info = env.step(action)
            rewards.append(float(reward) / scale)
            dts.append(float(info.get("dt", 1.0)) if per_second else 1.0)
            if term or trunc:
                break
        ret_l.append(_discounted_returns(rewards, dts, gamma))
        dt_l.extend(dts)
    env.close()
    return Demonstrations(
        obs=np.asarray(obs_l, dtype=np.float32),
        masks=np.asarray(mask_l, dtype=bool),
        actions=np.asarray(act_l, dtype=np.int64),
        returns=np.concatenate(ret_l).astype(np.float32),
        inexact=inexact,
        episodes=len(seeds),
        dts=np.asarray(dt_l, dtype=np.float32),
    )


def clone(model, demos: Demonstrations, cfg: PretrainConfig, seed: int = 0) -> dict[str, float]:
    """Fit ``model.policy`` (an SB3 actor-critic, masked or not) to the demonstrations.

    Returns the final epoch's mean loss and the policy's agreement with the expert
    (argmax of the masked distribution equals the expert's action)."""
    import torch

    policy = model.policy
    policy.set_training_mode(True)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.learning_rate)
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor(demos.obs)
    masks = torch.as_tensor(demos.masks)
    acts = torch.as_tensor(demos.actions)
    rets = torch.as_tensor(demos.returns)
    ret_var = float(rets.var()) + 1e-8 if len(rets) > 1 else 1.0
    masked = "action_masks" in policy.evaluate_actions.__code__.co_varnames
    n = len(demos)
    loss_mean = 0.0
    for _ in range(cfg.epochs):
        order = rng.permutation(n)
        total, batches = 0.0, 0
        for start in range(0, n, cfg.batch_size):
            idx = torch.as_tensor(order[start : start + cfg.batch_size])
            kw = {"action_masks": masks[idx]} if masked else {}
            values, log_prob, _ = policy.evaluate_actions(obs[idx], acts[idx], **kw)
            loss = -log_prob.mean()
            if cfg.value_coef > 0:
                # the value regression is scaled by the returns' variance: raw returns are
                # ~-40 and their squared error's gradient would swamp the imitation loss's
                # (70 vs 2 measured) under the shared gradient clipping
                loss = (
                    loss
                    + cfg.value_coef
                    * torch.nn.functional.mse_loss(values.flatten(), rets[idx])
                    / ret_var
                )
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            total += loss.item()
            batches += 1
        loss_mean = total / max(batches, 1)
    policy.set_training_mode(False)
    with torch.no_grad():
        kw = {"action_masks": demos.masks} if masked else {}
        pred, _ = policy.predict(demos.obs, deterministic=True, **kw)
    agree = float(np.mean(np.asarray(pred) == demos.actions))
    return {"bc_loss": loss_mean, "bc_agreement": agree, "bc_samples": float(n)}
