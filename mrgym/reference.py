"""Each job's JCT alone on the cluster: the denominator of a job's slowdown.

:func:`isolated_jct` runs each job of an episode's workload alone (submitted at time 0)
under a scheduler; :func:`reference_jct` is that under :data:`REFERENCE_SCHEDULER`, kept
per (scenario, seed) in the process, for the ``slowdown`` reward term and the fairness
track (:mod:`mrgym.benchmark.tracks`).  It sits beside the metrics, below the
environment, so that the environment can compute its reward."""

from __future__ import annotations

import numbers
from dataclasses import replace

from mrgym import disk_cache, registry
from mrgym.config import Scenario, load_scenario
from mrgym.sim.scheduler import Scheduler
from mrgym.sim.simulation import Simulation

#: The scheduler of each job's reference JCT: alone on an idle cluster, Hadoop's fair
#: scheduler runs one job as FIFO does, taking every free slot the job can use.
REFERENCE_SCHEDULER = "fair"
_REFERENCE: dict[tuple[str, int], dict[int, float]] = {}
_REFERENCE_KEEP = 64  # (scenario, seed) pairs kept per process


def _scheduler(s: Scheduler | str) -> Scheduler:
    return registry.make(s) if isinstance(s, str) else s


def isolated_jct(
    scenario: Scenario | str | dict, scheduler: Scheduler | str, seed: int = 0
) -> dict[int, float]:
    """Each job's JCT when it runs alone on the cluster (submitted at time 0), keyed by job
    id: the denominator of :func:`mrgym.metrics.slowdowns`.  One simulation per job."""
    # numpy integers too, as the runner's seeds (a bool is no seed)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**63:
        raise ValueError(f"seed: expected an integer >= 0 and < 2**63, got {seed!r}")
    seed = int(seed)
    sc = load_scenario(scenario)
    # the episode's jobs, in id (submission) order, as the simulator draws them
    specs = [j.spec for j in Simulation(sc, _scheduler(scheduler), seed).view.all_jobs]
    out = {}
    for jid, spec in enumerate(specs):
        sim = Simulation(sc, _scheduler(scheduler), seed, [replace(spec, submit_s=0.0)])
        sim.run()
        job = sim.jobs[0]
        if job.finish_s is not None:
            out[jid] = job.finish_s - job.arrived_s
    return out


def reference_jct(
    scenario: Scenario | str | dict, seed: int, keep: bool = True
) -> dict[int, float]:
    """Each job's reference JCT, keyed by job id: :func:`isolated_jct` under
    :data:`REFERENCE_SCHEDULER`.  The same for every policy on a seed; kept per (scenario,
    seed) in the process, since it costs one simulation per job, and with ``keep`` on disk
    between processes too (:mod:`mrgym.disk_cache`): the seeds a benchmark or evaluation
    names, not a training episode's drawn one.  A trace workload's are not kept on disk
    (the key holds the trace's path, not its contents)."""
    sc = load_scenario(scenario)
    key = (sc.model_dump_json(), int(seed))
    if key not in _REFERENCE:
        if len(_REFERENCE) >= _REFERENCE_KEEP:
            _REFERENCE.pop(next(iter(_REFERENCE)))

        def compute() -> dict[int, float]:
            return isolated_jct(sc, REFERENCE_SCHEDULER, key[1])

        if keep and sc.workload.path is None:
            _REFERENCE[key] = disk_cache.cached(
                "reference_jct", [REFERENCE_SCHEDULER, *key], compute
            )
        else:
            _REFERENCE[key] = compute()
    return _REFERENCE[key]
