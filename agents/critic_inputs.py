"""An input-dependent baseline: a critic that sees the workload still to come.

In a scheduling environment the return from a state depends on the jobs that will arrive,
an exogenous input the policy cannot see and does not control.  A value function of the
state alone must average over every possible future, so the advantage estimates carry the
input's variance, which can drown the effect of an action.  Mao et al. ("Variance
Reduction for Reinforcement Learning in Input-Driven Environments", ICLR 2019, §4) show
that a baseline may also depend on the input sequence without biasing the policy
gradient, because the input is exogenous (no action changes which jobs arrive when);
their Decima and load-balancing agents learned faster and better with it.  The actor must
still not act on the input: a deployed scheduler does not know the future.

Here the input is summarized by ``MRCluster-v0(critic_inputs=True)``'s last features
(``mrgym.envs.observation.CRITIC_FEATURE_TABLE``: the jobs, maps and CPU work still to
arrive and when).  :class:`CriticInputsPolicy` is SB3's MLP ``MaskableActorCriticPolicy``
with separate feature extractors for the actor and the critic: the critic's flattens the
whole observation, the actor's zeroes the critic-only features (zeroed, not dropped, so
that both networks keep SB3's layout; the actor's weights on them get no gradient).  A
saved model therefore acts exactly the same whatever those features hold.  (The rest of
the observation is MRCluster-v0's as it is: its normalizers, the episode's maps and jobs,
count the jobs yet to arrive too: two numbers about the workload that any policy sees.)

Deviation from the paper: Mao et al. condition the baseline on the whole input sequence
(one value network per sequence, or meta-learned); a summary of what is left of it is the
cheaper form that works with an unbounded set of training seeds.
"""

from __future__ import annotations

from typing import Any

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, FlattenExtractor
from torch import nn

from mrgym.envs.observation import CRITIC_FEATURES


class ActorView(BaseFeaturesExtractor):
    """The flattened observation with its critic-only features (the last
    ``len(CRITIC_FEATURES)``) set to 0."""

    def __init__(self, observation_space: spaces.Space):
        n = get_flattened_obs_dim(observation_space)
        hidden = len(CRITIC_FEATURES)
        if n <= hidden:
            raise ValueError(
                f"CriticInputsPolicy: an observation of {n} features has no room for the "
                f"{hidden} critic-only ones; build the env with critic_inputs=True"
            )
        super().__init__(observation_space, n)
        keep = th.ones(n)
        keep[n - hidden :] = 0.0
        self.register_buffer("keep", keep, persistent=False)
        self.flatten = nn.Flatten()

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return self.flatten(observations) * self.keep


class CriticInputsPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose actor never sees the critic-only inputs (see the
    module docstring); every other argument is the parent's."""

    def __init__(self, *args: Any, **kwargs: Any):
        # a saved model's constructor arguments name SB3's default extractor: accepted
        if kwargs.get("features_extractor_class", FlattenExtractor) is not FlattenExtractor:
            raise ValueError(
                "CriticInputsPolicy: policy_kwargs.features_extractor_class is not "
                "supported (the actor's extractor hides the critic-only inputs)"
            )
        kwargs["share_features_extractor"] = False
        super().__init__(*args, **kwargs)
        # the parent built two flattening extractors; the actor's becomes the masking one
        # (neither has parameters, so the optimizer built by the parent is unchanged)
        self.pi_features_extractor = ActorView(self.observation_space)
        self.features_extractor = self.pi_features_extractor
