"""Baseline schedulers and their registry: ``baselines.make(name, **params)``."""

from __future__ import annotations

from collections.abc import Callable

from baselines.classic import (
    CapacityScheduler,
    DelayScheduler,
    DlSchedScheduler,
    FairScheduler,
    FifoScheduler,
    LateScheduler,
    RandSchedScheduler,
)
from mrgym.sim.scheduler import Scheduler

_REGISTRY: dict[str, Callable[..., Scheduler]] = {
    "fifo": FifoScheduler,
    "fair": FairScheduler,
    "delay": DelayScheduler,
    "capacity": CapacityScheduler,
    "late": LateScheduler,
    "dl-sched": DlSchedScheduler,
    "rand-sched": RandSchedScheduler,
}


def available() -> list[str]:
    """Registered names, in registry order (classic first)."""
    return list(_REGISTRY)


def make(name: str, **params) -> Scheduler:
    try:
        factory = _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; expected one of {available()}") from None
    return factory(**params)


def register(name: str, factory: Callable[..., Scheduler]) -> None:
    _REGISTRY[name.lower()] = factory
