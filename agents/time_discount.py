"""Discounting by simulated time: MaskablePPO on the environment as a semi-MDP.

A decision step of ``MRCluster-v0`` covers a variable stretch of simulated time
(``info["dt"]``): none between two free slots of one heartbeat, a heartbeat period after
the last.  With SB3's discount per step, ``gamma`` applies per *decision*, so a policy
that idles slots (each idle slot asks again at every heartbeat) makes more decisions per
simulated second and discounts the same future job-seconds more: with the JCT reward it
is paid to decline.  Discounting per simulated second removes that incentive: the
discount between decisions t and t+1 is ``gamma ** dt_t`` (the semi-MDP return of
Bradtke & Duff, 1995, with the step's reward taken at its start).

``TimeDiscountBuffer`` is MaskablePPO's rollout buffer with that discount in its GAE;
``SojournCallback`` copies each step's ``info["dt"]`` into it (SB3 calls a callback's
``on_step`` after ``env.step`` and before the buffer's ``add``).  A step cut by the time cap
is bootstrapped by SB3 with ``gamma * V(terminal observation)``; the callback adds the
difference to ``gamma ** dt * V``, which the buffer applies to that step's reward.  Config:
``discount_per: second`` (agents/config.py), ``gamma`` then per simulated second.

``lambda_per: second`` (``TimeLambdaBuffer``) does the same for GAE's λ: the trace between
decisions t and t+1 decays by ``(gamma * gae_lambda) ** dt_t`` instead of ``gamma ** dt_t *
gae_lambda``.  Why: on ``ila72`` a policy is asked ~12 times per simulated second, so λ =
0.95 per decision credits an action with ~1.7 s of the rewards that follow it and
bootstraps the rest from the value head, while a task runs tens of seconds.  Per second,
λ = 0.9 spans ~10 s (three heartbeats), and a decision's horizon no longer depends on how
many decisions (declines, waits) the policy makes per second.
"""

from __future__ import annotations

import numpy as np
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback


class TimeDiscountBuffer(MaskableRolloutBuffer):
    """GAE with the discount ``gamma ** dt`` between consecutive decisions."""

    # GAE's lambda applies per decision (False) or per simulated second (TimeLambdaBuffer)
    lambda_per_second = False

    def reset(self) -> None:
        super().reset()
        # simulated seconds each step covered; 1 (the per-step discount) until recorded
        self.dts = np.ones((self.buffer_size, self.n_envs), dtype=np.float32)
        # per step, what turns SB3's one-step bootstrap of a truncated step into gamma ** dt
        self.fix = np.zeros((self.buffer_size, self.n_envs), dtype=np.float32)

    def add(self, obs, action, reward, episode_start, value, log_prob, action_masks=None):
        reward = np.asarray(reward, dtype=np.float32) + self.fix[self.pos]
        super().add(obs, action, reward, episode_start, value, log_prob, action_masks=action_masks)

    def compute_returns_and_advantage(self, last_values, dones: np.ndarray) -> None:
        last_values = last_values.clone().cpu().numpy().flatten()
        disc = np.power(self.gamma, self.dts, dtype=np.float64)
        lam = (
            np.power(self.gae_lambda, self.dts, dtype=np.float64)
            if self.lambda_per_second
            else np.full_like(disc, self.gae_lambda)
        )
        last_gae_lam = 0.0
        for step in reversed(range(self.buffer_size)):
            if step == self.buffer_size - 1:
                next_non_terminal = 1.0 - dones.astype(np.float32)
                next_values = last_values
            else:
                next_non_terminal = 1.0 - self.episode_starts[step + 1]
                next_values = self.values[step + 1]
            g = disc[step]
            delta = self.rewards[step] + g * next_values * next_non_terminal - self.values[step]
            last_gae_lam = delta + g * lam[step] * next_non_terminal * last_gae_lam
            self.advantages[step] = last_gae_lam
        self.returns = self.advantages + self.values


class TimeLambdaBuffer(TimeDiscountBuffer):
    """GAE with ``gamma ** dt`` and ``gae_lambda ** dt`` between consecutive decisions."""

    lambda_per_second = True


class SojournCallback(BaseCallback):
    """Record each step's simulated duration (``info["dt"]``) in a TimeDiscountBuffer."""

    def _on_step(self) -> bool:
        buf = self.model.rollout_buffer
        if not isinstance(buf, TimeDiscountBuffer) or buf.pos >= buf.buffer_size:
            return True
        infos = self.locals["infos"]
        dts = [float(i.get("dt", 1.0)) for i in infos]
        buf.dts[buf.pos] = dts
        fix = np.zeros(len(infos), dtype=np.float32)
        gamma = self.model.gamma
        for k, (done, info) in enumerate(zip(self.locals["dones"], infos)):
            term = info.get("terminal_observation")
            if done and term is not None and info.get("TimeLimit.truncated", False):
                import torch

                policy = self.model.policy
                with torch.no_grad():
                    v = float(policy.predict_values(policy.obs_to_tensor(term)[0])[0, 0])
                fix[k] = (gamma ** dts[k] - gamma) * v
        buf.fix[buf.pos] = fix
        return True
