"""Baseline schedulers and their registry: ``baselines.make(name, **params)``."""

from __future__ import annotations

from collections.abc import Callable

from baselines.classic import DlSchedScheduler, FifoScheduler
from mrgym.sim.scheduler import Scheduler

_REGISTRY: dict[str, Callable[..., Scheduler]] = {
    "fifo": FifoScheduler,
    "dl-sched": DlSchedScheduler,
}


def available() -> list[str]:
    return sorted(_REGISTRY)


def make(name: str, **params) -> Scheduler:
    try:
        factory = _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r}; expected one of {available()}") from None
    return factory(**params)


def register(name: str, factory: Callable[..., Scheduler]) -> None:
    _REGISTRY[name.lower()] = factory
