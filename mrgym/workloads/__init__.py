"""Workloads: the papers' job mixes, a synthetic generator and trace readers.

``generate(scenario, rng)`` returns the episode's :class:`~mrgym.sim.jobs.JobSpec` list; it
is called once per reset with the episode's streams: each job draws from its own (keyed by
its index), so every policy sees the same jobs and adding a job changes no other.

Size limits (also enforced by the scenario schema where the size is known before drawing):
at most ``MAX_JOBS`` = 100 000 jobs, ``MAX_TASKS`` = 1 000 000 map tasks and as many
reduce tasks in one workload, and an explicit job repeats at most ``MAX_REPEAT`` = 10 000
times.  A bigger workload would only exhaust memory or run for days; the bundled scale
test, ``ila2400``, has 100 jobs with 15 000 maps and 5 000 reduces.
"""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import JobSpec
from mrgym.sim.rng import Streams, WorkloadDraws, as_workload_draws

MAX_JOBS = 100_000
MAX_TASKS = 1_000_000
MAX_REPEAT = 10_000

# after the limits: the modules below may import them
from mrgym.workloads.explicit import explicit_jobs  # noqa: E402
from mrgym.workloads.paper_mixes import ila_table4, pna_batch  # noqa: E402
from mrgym.workloads.rumen import read_rumen, rumen_jobs  # noqa: E402
from mrgym.workloads.swim import read_swim, swim_jobs  # noqa: E402
from mrgym.workloads.synthetic import synthetic  # noqa: E402

__all__ = [
    "MAX_JOBS",
    "MAX_REPEAT",
    "MAX_TASKS",
    "check_size",
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


def generate(scenario, rng: Streams | np.random.Generator) -> list[JobSpec]:
    """The episode's jobs: drawn per job (``Streams.workload``), so a job's draws never
    depend on the others (a bare Generator seeds the streams with one draw)."""
    jobs = _draw(scenario, as_workload_draws(rng))
    check_size(jobs)
    return jobs


def _draw(scenario, rng: WorkloadDraws) -> list[JobSpec]:
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


def check_size(jobs: list[JobSpec]) -> None:
    """Refuse a drawn workload over the limits before any task object exists (a synthetic
    mix or a trace can only be sized once drawn)."""
    if len(jobs) > MAX_JOBS:
        raise ValueError(
            f"workload: {len(jobs):,} jobs, more than the limit of {MAX_JOBS:,} "
            "(lower workload.n_jobs or workload.max_jobs)"
        )
    for what, n in (
        ("map", sum(j.n_maps for j in jobs)),
        ("reduce", sum(j.n_reduces for j in jobs)),
    ):
        if n > MAX_TASKS:
            raise ValueError(
                f"workload: {n:,} {what} tasks, more than the limit of {MAX_TASKS:,} "
                f"(lower workload.n_jobs, max_jobs, max_maps or raise reduce_mb)"
            )
