"""Permutation-invariant networks over MRCluster-v0's job slots (deep sets and attention).

MRCluster-v0's observation (``mrgym/envs/observation.py``) is a context (the requesting
VM's and the cluster's features) followed by K job slots with the same 21 features each,
and its actions (``mrgym/envs/actions.py``) are K slots x (map, reduce, speculate) plus
decline.  Which job sits in which slot is an accident of the queue order, so a policy
should not care about it: the networks here embed every slot with the SAME weights.

* :class:`JobSetExtractor` (``"deepsets"``): phi(slot + context) per slot, then masked
  mean + max pooling over the valid slots (deep sets, Zaheer et al. 2017), concatenated
  with an embedding of the context.  Permutation INVARIANT; empty slots (``valid`` = 0)
  are ignored, whatever they hold.  A drop-in ``features_extractor_class`` for
  ``MlpPolicy`` / ``MaskableActorCriticPolicy``.
* :class:`AttentionJobSetExtractor` (``"attention"``): the same with one residual
  ``nn.MultiheadAttention`` self-attention layer over the slot embeddings (empty slots
  masked as keys) before pooling, so each job's embedding sees the others.
* :class:`JobSetPolicy`: a ``MaskableActorCriticPolicy`` whose slot actions' logits are
  one shared head psi(slot embedding + pooled features), so permuting the slots permutes
  the logits (EQUIVARIANT); the extra actions (decline) and the value come from the pooled
  features.  Masking, saving and loading are SB3's own: only the networks differ.  With
  ``critic_inputs`` (the environment's critic-only features after the slots) the value
  also reads those features and the actor never does: an input-dependent baseline
  (agents/critic_inputs.py) for the set policy.

A YAML config names them by string; ``resolve_policy`` turns the strings into classes.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from agents.critic_inputs import CriticInputsPolicy
from mrgym.envs.actions import PER_SLOT, action_of
from mrgym.envs.observation import CRITIC_FEATURES, GLOBAL_FEATURES, JOB_FEATURES, VM_FEATURES

CONTEXT_DIM = len(VM_FEATURES) + len(GLOBAL_FEATURES)
SLOT_DIM = len(JOB_FEATURES)
VALID = JOB_FEATURES.index("valid")


def job_slots_of(obs_dim: int) -> int:
    """K, the job slots of an MRCluster-v0 observation of ``obs_dim`` floats."""
    k, rest = divmod(obs_dim - CONTEXT_DIM, SLOT_DIM)
    if rest or k < 1:
        raise ValueError(
            f"an observation of {obs_dim} floats is not {CONTEXT_DIM} context features "
            f"+ K x {SLOT_DIM} job-slot features (MRCluster-v0's layout)"
        )
    return k


def split_observation(obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """(context [B, VM + global features], slots [B, K, job features]) of flat observations
    ``obs`` [B, n]; K comes from n (the layout of ``mrgym/envs/observation.py``)."""
    k = job_slots_of(obs.shape[-1])
    return obs[..., :CONTEXT_DIM], obs[..., CONTEXT_DIM:].reshape(*obs.shape[:-1], k, SLOT_DIM)


def _mlp(sizes: list[int], act: type[nn.Module]) -> nn.Sequential:
    """Linear layers between ``sizes``, each followed by ``act``."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers)


class JobSetExtractor(BaseFeaturesExtractor):
    """Deep-sets features of MRCluster-v0 observations (see the module docstring).

    ``features_dim`` = 2 x ``embed_dim`` (mean, max) + ``context_dim``.  With
    ``keep_slots`` (:class:`JobSetPolicy` sets it) the output also carries the K slot
    embeddings, [pooled | slot 0 | ... | slot K-1], for the equivariant action head, then
    the critic-only features as they are when ``critic_inputs``.

    :param embed_dim: the width E of a slot embedding phi
    :param hidden: phi's hidden layer sizes (input: a slot's features + the context)
    :param context_dim: the width of the context embedding
    :param attention: one self-attention layer over the slot embeddings before pooling
    :param heads: attention heads (must divide ``embed_dim``)
    :param critic_inputs: the observation ends with the environment's critic-only features
        (``MRCluster-v0(critic_inputs=True)``).  Nothing here reads them: with
        ``keep_slots`` they are passed through after the slot embeddings, for the value
        alone (:class:`JobSetPolicy`); without it they are dropped.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        embed_dim: int = 64,
        hidden: tuple[int, ...] = (64,),
        context_dim: int = 32,
        attention: bool = False,
        heads: int = 4,
        keep_slots: bool = False,
        critic_inputs: bool = False,
    ):
        n = int(np.prod(observation_space.shape))
        critic_dim = len(CRITIC_FEATURES) if critic_inputs else 0
        k = job_slots_of(n - critic_dim)
        pooled = 2 * embed_dim + context_dim
        passed = k * embed_dim + critic_dim if keep_slots else 0
        super().__init__(observation_space, pooled + passed)
        self.critic_dim = critic_dim
        self.k, self.embed_dim, self.pooled_dim = k, embed_dim, pooled
        self.keep_slots = keep_slots
        # phi sees the context too: a job's worth depends on the VM asking (locality, GPU)
        self.phi = _mlp([SLOT_DIM + CONTEXT_DIM, *hidden, embed_dim], nn.ReLU)
        self.context = _mlp([CONTEXT_DIM, context_dim], nn.ReLU)
        self.attention = (
            nn.MultiheadAttention(embed_dim, heads, batch_first=True) if attention else None
        )
        self.norm = nn.LayerNorm(embed_dim) if attention else None

    def encode(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """(pooled [B, pooled_dim], slot embeddings [B, K, E] zero where empty, valid [B, K]);
        the critic-only features, if any, take no part."""
        if self.critic_dim:
            obs = obs[..., : obs.shape[-1] - self.critic_dim]
        ctx, slots = split_observation(obs)
        valid = slots[..., VALID] > 0.5
        # empty slots are zeroed before phi, so nothing they hold (even NaN) reaches the
        # attention, the pooling or the gradients
        slots = th.where(valid.unsqueeze(-1), slots, 0.0)
        per_slot = th.cat([slots, ctx.unsqueeze(-2).expand(-1, self.k, -1)], dim=-1)
        h = self.phi(per_slot)
        if self.attention is not None:
            # a row with no valid slot would attend to nothing (NaN): let it attend to all,
            # its embeddings are zeroed below anyway
            pad = ~valid & valid.any(dim=-1, keepdim=True)
            a, _ = self.attention(h, h, h, key_padding_mask=pad, need_weights=False)
            h = self.norm(h + a)
        # empty slots contribute nothing to the pooling
        v = valid.unsqueeze(-1)
        h = th.where(v, h, 0.0)
        count = v.sum(dim=-2).clamp(min=1).to(h.dtype)
        mean = h.sum(dim=-2) / count
        top = th.where(v, h, -th.inf).amax(dim=-2)
        top = th.where(valid.any(dim=-1, keepdim=True), top, 0.0)
        return th.cat([mean, top, self.context(ctx)], dim=-1), h, valid

    def forward(self, observations: th.Tensor) -> th.Tensor:
        pooled, h, _ = self.encode(observations)
        if not self.keep_slots:
            return pooled
        parts = [pooled, h.flatten(start_dim=-2)]
        if self.critic_dim:  # every policy step runs this: no empty slice without them
            parts.append(observations[..., observations.shape[-1] - self.critic_dim :])
        return th.cat(parts, dim=-1)


class AttentionJobSetExtractor(JobSetExtractor):
    """:class:`JobSetExtractor` with self-attention over the slots (``attention=True``)."""

    def __init__(self, observation_space: spaces.Box, attention: bool = True, **kwargs: Any):
        super().__init__(observation_space, attention=attention, **kwargs)


class _PooledLatent(nn.Module):
    """The policy's ``mlp_extractor``: the actor's latent is the extractor's pooled features
    and slot embeddings (read by :class:`_SlotActionHead`), the critic's an MLP of the
    pooled part (the value of a state cannot depend on slot order) and of the critic-only
    features, the last ``critic_dim`` of the extractor's output, which the actor never
    gets."""

    def __init__(
        self,
        features_dim: int,
        pooled_dim: int,
        vf: list[int],
        act: type[nn.Module],
        critic_dim: int = 0,
    ):
        super().__init__()
        self.pooled_dim, self.critic_dim = pooled_dim, critic_dim
        self.value_net = _mlp([pooled_dim + critic_dim, *vf], act)
        self.latent_dim_pi = features_dim - critic_dim
        self.latent_dim_vf = vf[-1] if vf else pooled_dim + critic_dim

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return features[..., : self.latent_dim_pi]

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        seen = features[..., : self.pooled_dim]
        if self.critic_dim:
            seen = th.cat([seen, features[..., self.latent_dim_pi :]], dim=-1)
        return self.value_net(seen)

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class _SlotActionHead(nn.Module):
    """The policy's ``action_net``: logits of slot k's PER_SLOT actions = psi(e_k + g), one
    psi for all slots (e_k: slot k's embedding, g: the pooled features), laid out as
    ``action_of(k, kind)``; the ``extra`` actions after them (decline) from an MLP of g."""

    def __init__(
        self, k: int, embed_dim: int, pooled_dim: int, extra: int, pi: list[int], act: type
    ):
        super().__init__()
        self.k, self.embed_dim, self.pooled_dim = k, embed_dim, pooled_dim
        self.psi = _mlp([embed_dim + pooled_dim, *pi], act)
        self.slot_logits = nn.Linear(pi[-1] if pi else embed_dim + pooled_dim, PER_SLOT)
        self.extra_net = _mlp([pooled_dim, *pi], act)
        self.extra_logits = nn.Linear(pi[-1] if pi else pooled_dim, extra)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        g = latent[..., : self.pooled_dim]
        h = latent[..., self.pooled_dim :].reshape(*latent.shape[:-1], self.k, self.embed_dim)
        x = th.cat([h, g.unsqueeze(-2).expand(*h.shape[:-1], -1)], dim=-1)
        per_slot = self.slot_logits(self.psi(x)).flatten(start_dim=-2)  # 3k + kind
        return th.cat([per_slot, self.extra_logits(self.extra_net(g))], dim=-1)


class JobSetPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with slot-equivariant action logits (see the module docstring).

    ``features_extractor_class`` must be a :class:`JobSetExtractor` (default: deep sets;
    ``AttentionJobSetExtractor`` for attention); ``net_arch`` ``dict(pi=..., vf=...)``
    gives the hidden layers of the shared slot head psi (and of the extra-action MLP) and
    of the value MLP.  Only ``_build`` differs from the parent: its ``mlp_extractor``,
    ``action_net`` and ``value_net`` are replaced, so ``forward``, ``evaluate_actions``,
    ``get_distribution`` and ``predict_values`` run unchanged, masking included.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        action_space: spaces.Discrete,
        lr_schedule: Schedule,
        *args: Any,
        features_extractor_class: type[BaseFeaturesExtractor] = JobSetExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        if not (
            isinstance(features_extractor_class, type)
            and issubclass(features_extractor_class, JobSetExtractor)
        ):
            raise ValueError(
                f"JobSetPolicy: features_extractor_class must be a JobSetExtractor "
                f"('deepsets' or 'attention'), got {features_extractor_class!r}"
            )
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError(f"JobSetPolicy: needs a Discrete action space, got {action_space}")
        fe_kwargs = {**(features_extractor_kwargs or {}), "keep_slots": True}
        super().__init__(
            observation_space,
            action_space,
            lr_schedule,
            *args,
            features_extractor_class=features_extractor_class,
            features_extractor_kwargs=fe_kwargs,
            **kwargs,
        )

    def _arch(self) -> tuple[list[int], list[int]]:
        arch = self.net_arch
        if isinstance(arch, dict):
            return list(arch.get("pi", [])), list(arch.get("vf", []))
        return list(arch or []), list(arch or [])

    def _build_mlp_extractor(self) -> None:
        fe = self.features_extractor
        assert isinstance(fe, JobSetExtractor)
        self.mlp_extractor = _PooledLatent(
            self.features_dim, fe.pooled_dim, self._arch()[1], self.activation_fn, fe.critic_dim
        )

    def _build(self, lr_schedule: Schedule) -> None:
        """The parent's ``_build`` with :class:`_SlotActionHead` as ``action_net``."""
        self._build_mlp_extractor()
        fe = self.features_extractor
        assert isinstance(fe, JobSetExtractor)
        n = int(self.action_space.n)
        # MRCluster-v0's layout: slot k's actions are action_of(k, 0..PER_SLOT-1), slot-major,
        # and the extra actions (decline) follow the K slots
        first_extra = action_of(fe.k, 0)
        if first_extra != fe.k * PER_SLOT or n <= first_extra:
            raise ValueError(
                f"JobSetPolicy: {n} actions do not fit {fe.k} job slots x {PER_SLOT} + extras"
            )
        self.action_net = _SlotActionHead(
            fe.k, fe.embed_dim, fe.pooled_dim, n - first_extra, self._arch()[0], self.activation_fn
        )
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        if self.ortho_init:
            # the parent's gains: sqrt(2) for hidden layers, 0.01 for the logits (a near-
            # uniform start), 1 for the value
            gains: dict[nn.Module, float] = {
                self.mlp_extractor: np.sqrt(2),
                self.action_net: np.sqrt(2),
                self.value_net: 1.0,
            }
            extractors = [self.features_extractor]
            if not self.share_features_extractor:
                extractors = [self.pi_features_extractor, self.vf_features_extractor]
            for m in extractors:
                gains[m] = np.sqrt(2)
            for module, gain in gains.items():
                module.apply(partial(self.init_weights, gain=gain))
            for out in (self.action_net.slot_logits, self.action_net.extra_logits):
                out.apply(partial(self.init_weights, gain=0.01))
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )


EXTRACTORS: dict[str, type[BaseFeaturesExtractor]] = {
    "deepsets": JobSetExtractor,
    "attention": AttentionJobSetExtractor,
}
POLICIES: dict[str, type[MaskableActorCriticPolicy]] = {
    "JobSetPolicy": JobSetPolicy,
    "CriticInputsPolicy": CriticInputsPolicy,
}


def resolve_policy(
    policy: str, hyperparameters: dict[str, Any], critic_inputs: bool = False
) -> tuple[Any, dict[str, Any]]:
    """The policy (a class for a ``POLICIES`` name, else the string, e.g. ``MlpPolicy``) and
    a copy of ``hyperparameters`` whose ``policy_kwargs.features_extractor_class``, when an
    ``EXTRACTORS`` name, is the class.  With ``critic_inputs`` (``env.critic_inputs``) a
    ``JobSetPolicy``'s extractor is told the observation ends with the critic-only
    features, which its value then reads.  The input is left as is (the config is saved)."""
    hp = dict(hyperparameters)
    if critic_inputs and policy == "JobSetPolicy":
        pk = dict(hp.get("policy_kwargs") or {})
        fe = {**(pk.get("features_extractor_kwargs") or {}), "critic_inputs": True}
        hp["policy_kwargs"] = {**pk, "features_extractor_kwargs": fe}
    pk = hp.get("policy_kwargs")
    if isinstance(pk, dict) and isinstance(pk.get("features_extractor_class"), str):
        name = pk["features_extractor_class"]
        if name not in EXTRACTORS:
            raise ValueError(
                f"policy_kwargs.features_extractor_class: unknown {name!r}; "
                f"expected one of {sorted(EXTRACTORS)}"
            )
        hp["policy_kwargs"] = {**pk, "features_extractor_class": EXTRACTORS[name]}
    return POLICIES.get(policy, policy), hp
