"""Workloads: the papers' job mixes, a synthetic generator and trace readers.

``generate(scenario, rng)`` returns the episode's :class:`~mrgym.sim.jobs.JobSpec` list; it
is called once per reset with the ``workload`` stream, so every policy sees the same jobs.
"""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import JobSpec
from mrgym.workloads.explicit import explicit_jobs
from mrgym.workloads.paper_mixes import ila_table4, pna_batch
from mrgym.workloads.rumen import read_rumen, rumen_jobs
from mrgym.workloads.swim import read_swim, swim_jobs
from mrgym.workloads.synthetic import synthetic

__all__ = [
    "generate",
    "ila_table4",
    "pna_batch",
    "synthetic",
    "read_swim",
    "swim_jobs",
    "read_rumen",
    "rumen_jobs",
    "explicit_jobs",
]


def generate(scenario, rng: np.random.Generator) -> list[JobSpec]:
    w = scenario.workload
    block = scenario.hdfs.block_mb
    if w.kind == "ila-table4":
        return ila_table4(rng, w, block)
    if w.kind == "pna-batch":
        return pna_batch(rng, w, block)
    if w.kind == "synthetic":
        return synthetic(rng, w, block)
    if w.kind == "swim":
        return swim_jobs(read_swim(w.path), w, block)
    if w.kind == "rumen":
        return rumen_jobs(read_rumen(w.path), w, block)
    return explicit_jobs(w, block)
