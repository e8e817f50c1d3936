"""Episode metrics: the one definition every runner, harness and callback uses (DESIGN §5).

All values are plain Python numbers.  JCT = finish - arrival of completed jobs; makespan =
last finish - first arrival; locality fractions are over successful map attempts that
read an input block; utilization and energy integrate over the episode; cost bills every
host from its start until the end of the episode (or its eviction/failure) at its
instance price, spot hosts at ``dynamics.spot.price_factor`` of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mrgym.sim.hdfs import LEVELS

# Job-size classes by map count (ILA Table 4 bins: 1-20 small, 21-300 medium, > 300 large)
SIZE_CLASSES = (("small", 1, 20), ("medium", 21, 300), ("large", 301, 10**12))


@dataclass(frozen=True)
class TaskRecord:
    """One task attempt, as the task log reports it."""

    job: int
    task: int
    kind: str
    attempt: int
    vm: str
    host: str
    rack: str
    start: float
    end: float | None
    locality: str | None
    outcome: str
    speculative: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def task_log(sim) -> list[TaskRecord]:
    out = []
    for a in sim.attempts:
        vm = a.vm
        out.append(
            TaskRecord(
                a.task.job.id,
                a.task.index,
                a.task.kind,
                a.number,
                vm.name,
                vm.host.name,
                vm.host.rack.name,
                a.start_s,
                a.end_s,
                None if a.locality is None else LEVELS[a.locality],
                a.outcome,
                a.speculative,
            )
        )
    return out


def _pct(x: list[float], q: float) -> float:
    return float(np.percentile(x, q)) if x else float("nan")


def episode_metrics(sim) -> dict[str, Any]:
    jobs = sim.jobs
    arrived = [j for j in jobs if j.arrived_s is not None]
    done = [j for j in arrived if j.finish_s is not None]
    failed = [j for j in arrived if j.failed_s is not None]
    jct = [j.finish_s - j.arrived_s for j in done]
    now = sim.env.now
    t0 = min((j.arrived_s for j in arrived), default=0.0)
    t_end = max((j.finish_s for j in done), default=now)
    makespan = (t_end - t0) if done else 0.0
    atts = sim.attempts
    ok = [a for a in atts if a.outcome == "success"]
    loc = dict.fromkeys(LEVELS, 0)
    for a in ok:
        if a.task.kind == "map" and a.locality is not None:
            loc[LEVELS[a.locality]] += 1
    n_loc = sum(loc.values())
    # re-executions: tasks queued again after an eviction, a host failure, a failed attempt,
    # a lost map output or a control kill (a speculative pair's losing copy is not one)
    reexec = sim.n_reexecuted
    slots = sum(v.map_slots + v.reduce_slots for v in sim.topo.workers)
    busy = sum(((a.end_s if a.end_s is not None else now) - a.start_s) for a in atts)
    horizon = now
    by_class = {}
    for name, lo, hi in SIZE_CLASSES:
        xs = [j.finish_s - j.arrived_s for j in done if lo <= len(j.maps) <= hi]
        by_class[name] = float(np.mean(xs)) if xs else None
    fair = sim.fair_samples
    if fair:
        wts = np.array([f[0] for f in fair])
        jain = float(np.average([f[1] for f in fair], weights=wts))
        dist = float(np.average([f[2] for f in fair], weights=wts))
    else:
        jain, dist = 1.0, 0.0
    spot = sim.scenario.dynamics.spot
    cost = 0.0
    for h in sim.topo.hosts:
        price = h.type.price_per_hour
        if (h.type.spot or h.pool == "spot") and spot is not None:
            price *= spot.price_factor
        cost += price * h.up_seconds / 3600.0
    energy_j = sum(h.cpu.energy_j for h in sim.topo.hosts)
    cores = sum(h.type.cores for h in sim.topo.hosts)
    cpu_busy = sum(h.cpu.busy_core_s for h in sim.topo.hosts)
    return {
        "jobs_submitted": len(arrived),
        "jobs_completed": len(done),
        # a task failed all its attempts (e.g. every replica of its block was lost)
        "jobs_failed": len(failed),
        "tasks_completed": sum(len(j.maps) + len(j.reduces) for j in done),
        "tasks_reexecuted": int(reexec),
        "map_outputs_lost": int(sim.outputs_lost),
        "host_failures": int(sim.host_failures),
        "hosts_evicted": int(sim.hosts_evicted),
        "attempts": len(atts),
        "speculative_attempts": sum(1 for a in atts if a.speculative),
        "mean_jct_s": float(np.mean(jct)) if jct else float("nan"),
        "median_jct_s": _pct(jct, 50),
        "p95_jct_s": _pct(jct, 95),
        "mean_jct_by_class_s": by_class,
        "makespan_s": float(makespan),
        "throughput_jobs_per_h": len(done) / (makespan / 3600.0) if makespan > 0 else 0.0,
        "throughput_task_work_per_h": (sum(a.end_s - a.start_s for a in ok) / (makespan / 3600.0))
        if makespan > 0
        else 0.0,
        "map_locality": {k: (v / n_loc if n_loc else 0.0) for k, v in loc.items()},
        "shuffle_mb": float(sim.shuffle_mb),
        "shuffle_cross_rack_bytes": float(sim.shuffle_cross_rack_mb * 1024 * 1024),
        "fairness_jain": jain,
        "fairness_distance": dist,
        "slot_utilization": busy / (slots * horizon) if slots and horizon > 0 else 0.0,
        "cpu_utilization": cpu_busy / (cores * horizon) if cores and horizon > 0 else 0.0,
        "cost_usd": float(cost),
        "energy_kwh": energy_j / 3.6e6,
        "sla_violation_s": float(sum(app.violation_s for app in sim.apps)),
        "sim_time_s": float(now),
        # the time cap ended the run with jobs unfinished (failed jobs are finished)
        "truncated": len(done) + len(failed) < len(jobs),
    }


def slowdowns(sim, isolated_jct: dict[int, float]) -> dict[int, float]:
    """JCT / isolated JCT per completed job, given each job's isolated JCT (computed by
    :func:`mrgym.runner.isolated_jct` on request, since it needs one run per job)."""
    return {
        j.id: (j.finish_s - j.arrived_s) / isolated_jct[j.id]
        for j in sim.jobs
        if j.finish_s is not None and isolated_jct.get(j.id)
    }
