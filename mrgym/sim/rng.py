"""Independent random streams of one episode, spawned from one ``SeedSequence``.

Streams drawn at reset (``workload``, ``noise``, ``placement``, ``failures``,
``interactive``) are consumed the same way whatever the policy does, so every policy faces
the same jobs, block placement, task luck, failures and interactive load for a seed.
``dynamic`` serves draws whose number depends on the run (replicas of output blocks).
``tail`` (heavy-tailed outliers of the task noise) and ``slowvm`` (persistently slow VMs)
were added after the others, so that drawing them never shifts an older stream's draws.
"""

from __future__ import annotations

import numpy as np

NAMES = (
    "workload",
    "noise",
    "placement",
    "failures",
    "interactive",
    "dynamic",
    "tail",
    "slowvm",
)


class Streams:
    def __init__(self, seed: int):
        children = np.random.SeedSequence(seed).spawn(len(NAMES))
        for name, ss in zip(NAMES, children):
            setattr(self, name, np.random.default_rng(ss))

    workload: np.random.Generator
    noise: np.random.Generator
    placement: np.random.Generator
    failures: np.random.Generator
    interactive: np.random.Generator
    dynamic: np.random.Generator
    tail: np.random.Generator
    slowvm: np.random.Generator
