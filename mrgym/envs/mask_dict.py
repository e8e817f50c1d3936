"""MRCluster-v0 with the action mask inside the observation: ``{"observations",
"action_mask"}``.

docs/model.md §3 gives the mask two ways: ``env.action_masks()`` (MaskablePPO) and
``info["action_mask"]``.  Libraries that read the mask from the observation instead --
RLlib's action-masking RLModule (``ray.rllib.examples.rl_modules.classes.
action_masking_rlm``), CleanRL-style and JAX agents, SB3's ``MultiInputPolicy`` -- need
it as an observation key.  This wrapper adds that view without changing the environment
(its spaces and reward stay those of MRCluster-v0; the default Box observation is not
touched, docs/model.md §3 "Dict or graph variants may be added as separate options"):

    env = DictMaskObservation(gym.make("MRCluster-v0", config="ila72"))
    obs, info = env.reset(seed=0)
    obs["observations"]   # the float32 Box observation of MRCluster-v0
    obs["action_mask"]    # float32 0/1, one per action (RLlib's convention: a Box)

The mask is the one for the decision the observation asks for (``info["action_mask"]`` of
the same step).  The environment never emits an all-false mask -- declining is legal unless
a launch is (``work_conserving``), and at the end of an episode only decline is -- and the
wrapper checks it on every step: an all-false mask would leave a masked agent without an
action (RLlib's module turns it into all ``-inf`` logits, NaN probabilities), so it raises
instead of passing it on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

OBS_KEY = "observations"
MASK_KEY = "action_mask"


class DictMaskObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """``{"observations": Box, "action_mask": Box(0, 1, (n,), float32)}`` observations.

    ``action_masks()`` is kept (MaskablePPO reads it through the wrapper stack), so one
    wrapped env serves both kinds of library."""

    def __init__(self, env: gym.Env):
        # RecordConstructorArgs: gym.make can rebuild the wrapped env from its spec
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(
                f"DictMaskObservation needs a Discrete action space, got {env.action_space}"
            )
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict(
            {
                OBS_KEY: env.observation_space,
                MASK_KEY: spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
            }
        )

    def _dict(self, obs: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        mask = np.asarray(info["action_mask"], dtype=np.float32)
        if not mask.any():
            raise RuntimeError(
                "MRCluster-v0 emitted an all-false action mask (a bug: declining is always "
                f"legal when no launch is); sim time {info.get('sim_time')}"
            )
        return {OBS_KEY: obs, MASK_KEY: mask}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._dict(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._dict(obs, info), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()
