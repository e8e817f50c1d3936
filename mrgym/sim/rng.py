"""An episode's random streams, each keyed by the entity it serves.

Every stream is ``SeedSequence(seed, spawn_key=(tag, *key))``: the episode seed, the
stream's purpose (``tag``, a fixed hash of its name) and the entity it serves (a job, a
host, a VM).  So a job's draws (its input blocks' replicas, its tasks' luck, its output
blocks' replicas) do not depend on how many other jobs there are, how big they are or when
they arrive, and a host's failures and a VM's heartbeat phase do not depend on the
workload.  Adding, removing or resizing a job leaves every other entity's draws unchanged,
and nothing drawn before a job arrives depends on that job: a run's past never depends on
its future (docs/model.md §2).  The same seed and policy give the same run; every policy
faces the same jobs, block placement, task luck, failures and interactive load for a seed.

Streams drawn at reset serve the cluster (``provision``, ``heartbeat``, ``slowvm``,
``failures``, ``spot``, ``interactive``) and the workload (``workload``, one stream per
job index).  A job's own streams (``placement``, ``noise``, ``tail``, ``output``) are drawn
from when it arrives; ``rereplicate`` serves the replicas HDFS restores after a loss.
"""

from __future__ import annotations

import zlib
from collections import Counter

import numpy as np

#: every purpose a stream serves (the tag is a hash of the name, so the order is free)
NAMES = (
    "workload",
    "provision",
    "heartbeat",
    "slowvm",
    "failures",
    "spot",
    "interactive",
    "placement",
    "noise",
    "tail",
    "output",
    "rereplicate",
)


def _tag(name: str) -> int:
    return zlib.crc32(name.encode())


_TAGS = {name: _tag(name) for name in NAMES}


class Streams:
    """The random streams of one episode of ``seed``."""

    def __init__(self, seed: int):
        self.seed = int(seed)
        self._fixed: dict[str, np.random.Generator] = {}

    def keyed(self, name: str, *key: int) -> np.random.Generator:
        """A generator for ``name``'s draws of the entity ``key`` (non-negative integers):
        the same for the same seed, name and key, whatever else the episode holds."""
        tag = _TAGS.get(name)
        if tag is None:
            raise ValueError(f"random stream {name!r}: expected one of {NAMES}")
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(tag, *key)))

    def stream(self, name: str) -> np.random.Generator:
        """A stream that serves one fixed thing of the episode (the cluster's provisioning,
        HDFS's re-replication) rather than one entity of many: one generator per episode,
        whose draws continue from call to call."""
        g = self._fixed.get(name)
        if g is None:
            g = self._fixed[name] = self.keyed(name)
        return g

    @property
    def workload(self) -> WorkloadDraws:
        """Per-job draws for the workload generators (:mod:`mrgym.workloads`)."""
        return WorkloadDraws(self)


class WorkloadDraws:
    """What a workload generator draws from: ``job(k)``, job ``k``'s own generator, and
    ``keyed(what, k)`` for a second family of draws (e.g. the k-th interarrival gap)."""

    def __init__(self, streams: Streams):
        self._s = streams

    def job(self, k: int) -> np.random.Generator:
        return self._s.keyed("workload", 0, int(k))

    def keyed(self, what: str, k: int) -> np.random.Generator:
        return self._s.keyed("workload", _tag(what), int(k))


def as_workload_draws(rng: Streams | WorkloadDraws | np.random.Generator) -> WorkloadDraws:
    """A generator's or a :class:`Streams`' per-job workload draws.  A bare
    ``numpy.random.Generator`` seeds a :class:`Streams` with one draw of its own."""
    if isinstance(rng, WorkloadDraws):
        return rng
    if isinstance(rng, Streams):
        return rng.workload
    if isinstance(rng, np.random.Generator):
        return Streams(int(rng.integers(2**63))).workload
    raise TypeError(f"workload draws: expected a Streams or a numpy Generator, got {rng!r}")


def job_keys(names: list[str]) -> list[int]:
    """A stable integer key per job from its name (a name's n-th repeat adds n << 32), so a
    job's streams follow the job, not its position in the workload.  Two names with the
    same CRC-32 would share their streams' draws (not their events)."""
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        k = seen[name]
        seen[name] += 1
        out.append(_tag(name) + (k << 32))
    return out
