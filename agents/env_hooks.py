"""A baseline's environment hooks around a learning agent (``env.hooks`` in a training config).

Some schedulers act outside the task choice: HybridMR's phase I places each job in the
native or the virtual pool (``place_job``), its phase II caps, pauses and migrates VMs
beside interactive ones every 3 s (``control``; HybridMR §III).  An agent's actions (which
job's task on the slot that asked) cannot express these, so without the hooks an agent on
hybrid48 cannot do what HybridMR does there.  With ``env.hooks: hybridmr`` the
scheduler's hooks run inside the environment, as under ``EnvPolicy``, and the agent takes
the place of its ``decide``; the agent's own ``work_conserving`` and ``speculation``
settings stay in force (``set_hooks(..., decides=False)``).  What HybridMR's ``decide``
did is then the agent's to learn: its FairScheduler order, the I/O gate (no map on a disk
where one more stream would thrash), no new task on a host under SLA pressure or a paused
VM, and the relaunch of a task that phase II killed on the VM Algorithm 3 chose; its
observation shows host CPU and disk load, not the pressure or the reservations.  With
``env.hooks_gate: true`` (the env's ``hooks_gate``) the scheduler keeps that part
(``Scheduler.gate``): the slots it gates are answered without the agent, whose choices on
the rest are then the task order alone.  A composition ``<gater>-gate+<order>`` (e.g.
``hybridmr-gate+srpt``) is a hooks scheduler too: its gater's hooks and gate run in the
environment, and naming it as ``pretrain.expert`` as well clones its order on the slots
the gate leaves.

One hooks scheduler is built per environment, reset at every ``env.reset``: for training
(:func:`make_env`, :class:`WithHooks` in SB3's vector envs, worker processes and domain
randomization's rebuilt envs included), for the held-out evaluations, and by
:class:`mrgym.ModelPolicy` at every ``bind`` (it reads the setting from the saved config),
so ``mrgym compare --models`` runs the model with them too.  A policy without hooks bound
to the same env afterwards leaves them installed (as after ``env.set_hooks``).  A warm
start may clone the hooks' own scheduler (``pretrain.expert`` equal to ``env.hooks``): its
decisions then come with its own placement and control.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

ENV_ID = "MRCluster-v1"


def _overrides(scheduler, *methods: str) -> bool:
    """Whether ``scheduler``'s class overrides any of ``Scheduler``'s ``methods``."""
    from mrgym.sim.scheduler import Scheduler

    cls = type(scheduler)
    return any(getattr(cls, m, None) is not getattr(Scheduler, m, None) for m in methods)


def has_hooks(scheduler) -> bool:
    """Whether ``scheduler`` overrides ``place_job`` or ``control`` (acts through hooks)."""
    return _overrides(scheduler, "place_job", "control")


def check_gate(name: str) -> None:
    """``env.hooks_gate: true`` with ``env.hooks: name``: the scheduler must override
    ``gate``, or the setting would claim no slot (a ValueError names the key)."""
    from mrgym.registry import make

    if not _overrides(make(name), "gate"):
        raise ValueError(
            f"env.hooks_gate: true, but env.hooks {name!r} has no gate "
            "(it never claims a slot); expected a scheduler that overrides gate, "
            "e.g. hybridmr, or hooks_gate: false"
        )


def check_hooks(name: str | None) -> str | None:
    """``env.hooks``: None, a registered scheduler that has hooks, or a composition
    ``<gater>-gate+<order>`` (a ValueError names the key and what was expected)."""
    if name is None:
        return None
    from mrgym import registry

    # a composition <gater>-gate+<order> (e.g. hybridmr-gate+srpt) has its gater's hooks, so
    # that its order can be the warm start's expert (pretrain.expert: the same name)
    known = name in registry.available() or registry.composition(name) is not None
    if known and _hooked(name):
        return name
    # only the error lists the alternatives (it builds every registered scheduler)
    with_hooks = [n for n in registry.available() if _hooked(n)]
    why = "has no environment hooks" if known else "is not registered"
    raise ValueError(
        f"{name!r} {why}; expected a registered scheduler with place_job/control hooks, "
        f"one of {with_hooks}, a composition <gater>-gate+<order> (e.g. "
        "hybridmr-gate+srpt), or no env.hooks"
    )


def _hooked(name: str) -> bool:
    """Whether the registered ``name``, built with its defaults, has hooks (one that needs
    parameters cannot be env.hooks)."""
    from mrgym.registry import make

    try:
        return has_hooks(make(name))
    except TypeError:  # a factory with required parameters
        return False


def install(env: gym.Env, name: str | None):
    """Give ``env`` a fresh ``name`` scheduler's hooks; returns that scheduler (None: none)."""
    if name is None:
        return None
    from mrgym.registry import make

    scheduler = make(name)
    # the agent decides: its work conservation and speculation settings stay in force
    env.unwrapped.set_hooks(scheduler, decides=False)
    return scheduler


class WithHooks(gym.Wrapper):
    """SB3's ``wrapper_class`` for ``make_vec_env``: installs the hooks, changes nothing else."""

    def __init__(self, env: gym.Env, hooks: str | None = None):
        super().__init__(env)
        install(env, hooks)


def make_env(kwargs: dict[str, Any], hooks: str | None = None) -> gym.Env:
    """``gym.make(MRCluster-v1, **kwargs)`` with ``hooks`` installed."""
    import mrgym  # noqa: F401  (registers MRCluster-v0)

    env = gym.make(ENV_ID, **kwargs)
    install(env, hooks)
    return env
