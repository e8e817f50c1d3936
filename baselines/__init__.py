"""Baseline schedulers (``baselines.classic``) and the scheduler registry's functions.

The registry lives in the library, :mod:`mrgym.registry`, where every classic scheduler
is registered by an entry-point string (``"baselines.classic:FairScheduler"``), imported
on first use; ``baselines.make(name, **params)``, ``baselines.available()`` and
``baselines.register(name, factory)`` are the same functions, kept here for scripts that
import the baselines.
"""

from __future__ import annotations

from baselines.classic import (
    CapacityScheduler,
    DelayScheduler,
    DlSchedScheduler,
    FairScheduler,
    FifoScheduler,
    LateScheduler,
    RandSchedScheduler,
)
from mrgym.registry import available, make, register, unregister

__all__ = [
    "CapacityScheduler",
    "DelayScheduler",
    "DlSchedScheduler",
    "FairScheduler",
    "FifoScheduler",
    "LateScheduler",
    "RandSchedScheduler",
    "available",
    "make",
    "register",
    "unregister",
]
