"""Episode metrics: the one definition every runner, harness and callback uses (docs/model.md §5).

All values are plain Python numbers.  JCT = finish - arrival of completed jobs; makespan =
last finish - first arrival; locality fractions are over successful map attempts that
read an input block; utilization and energy integrate over the episode; cost bills every
host from its start until the end of the episode (or its eviction/failure) at its
instance price, spot hosts at ``dynamics.spot.price_factor`` of it, pro rata or per begun
instance-hour (``dynamics.billing``; ``mrgym.sim.monitoring`` states the rule).

:data:`METRICS` names them once for every output: each metric's label in ``mrgym
simulate``'s table, its column in ``mrgym compare``'s table and plots, its TensorBoard tag
and how its value is shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mrgym.sim.hdfs import LEVELS
from mrgym.sim.jobs import MAP

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
        if a.task.kind == MAP and a.locality is not None:
            loc[LEVELS[a.locality]] += 1
    n_loc = sum(loc.values())
    # re-executions: tasks queued again after an eviction, a host failure, a failed attempt,
    # a lost map output or a control kill (a speculative pair's losing copy is not one)
    reexec = sim.tracker.n_reexecuted
    slots = sum(v.map_slots + v.reduce_slots for v in sim.topo.workers)
    busy = sum(((a.end_s if a.end_s is not None else now) - a.start_s) for a in atts)
    horizon = now
    by_class = {}
    for name, lo, hi in SIZE_CLASSES:
        xs = [j.finish_s - j.arrived_s for j in done if lo <= len(j.maps) <= hi]
        by_class[name] = float(np.mean(xs)) if xs else None
    fair = sim.monitor.fair_samples
    if fair:
        wts = np.array([f[0] for f in fair])
        jain = float(np.average([f[1] for f in fair], weights=wts))
        dist = float(np.average([f[2] for f in fair], weights=wts))
    else:
        jain, dist = 1.0, 0.0
    cost = sim.monitor.final_cost()  # dynamics.billing: seconds (pro rata) or hourly
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
        "map_outputs_lost": int(sim.dynamics.outputs_lost),
        "host_failures": int(sim.dynamics.host_failures),
        "hosts_evicted": int(sim.dynamics.hosts_evicted),
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
        "shuffle_mb": float(sim.tasks.shuffle_mb),
        "shuffle_cross_rack_bytes": float(sim.tasks.shuffle_cross_rack_mb * 1024 * 1024),
        "fairness_jain": jain,
        "fairness_distance": dist,
        "slot_utilization": busy / (slots * horizon) if slots and horizon > 0 else 0.0,
        "cpu_utilization": cpu_busy / (cores * horizon) if cores and horizon > 0 else 0.0,
        "cost_usd": float(cost),
        "energy_kwh": energy_j / 3.6e6,
        "sla_violation_s": float(sum(app.violation_s for app in sim.dynamics.apps)),
        "sim_time_s": float(now),
        # the time cap ended the run with jobs unfinished (failed jobs are finished)
        "truncated": len(done) + len(failed) < len(jobs),
    }


# --- how each metric is shown -----------------------------------------------------------
# One table for every place that names a metric: ``mrgym simulate``'s table, ``mrgym
# compare``'s columns (and ``mrgym.evaluate``'s summary and plots), the TensorBoard tags of
# training runs (``agents.callbacks``) and of compared policies (``agents.tensorboard``).

#: ``fmt`` kinds: "number" (``mrgym simulate`` picks the decimals by size; ``compare``
#: shows one decimal), "ratio" (a 0..1 value, three decimals in ``compare``), "percent"
#: (a 0..1 value ``mrgym simulate`` shows as ``12.3 %``).
FORMATS = ("number", "ratio", "percent")


@dataclass(frozen=True)
class Metric:
    """One metric: its key, its names in each output and how its value is shown."""

    key: str
    """Its key in a flat row (:func:`mrgym.rows.flatten`): ``"mean_jct_s"``, a nested
    value as ``"map_locality.node"``; :func:`metric_value` reads either form."""
    label: str
    """Its row label in ``mrgym simulate``'s table."""
    fmt: str = "number"
    """One of :data:`FORMATS`."""
    scale: float = 1.0
    """Shown value = stored value x ``scale`` (bytes -> GB)."""
    column: str | None = None
    """Its column header in ``mrgym compare``'s table (None: not a column)."""
    axis: str | None = None
    """Its axis label in ``mrgym compare``'s plots (None: ``label``)."""
    tag: str | None = None
    """Its TensorBoard tag under ``mr/`` and ``mr_eval/`` (None: not logged)."""
    simulate: bool = True
    """A row of ``mrgym simulate``'s table (False: a harness-derived value)."""

    @property
    def axis_label(self) -> str:
        return self.axis or self.label

    @property
    def bounded(self) -> bool:
        """A 0..1 value (error bars are cut at 1)."""
        return self.fmt in ("ratio", "percent")


#: Every named metric, in ``mrgym simulate``'s row order.
METRICS: tuple[Metric, ...] = (
    Metric("jobs_completed", "jobs completed", tag="jobs_completed"),
    Metric("jobs_failed", "jobs failed"),
    Metric("jobs_submitted", "jobs submitted"),
    Metric("tasks_completed", "tasks completed"),
    Metric("tasks_reexecuted", "tasks re-executed", column="re-executed"),
    Metric("mean_jct_s", "mean JCT (s)", column="mean JCT (s)", tag="mean_jct"),
    Metric("median_jct_s", "median JCT (s)"),
    Metric(
        "p95_jct_s",
        "p95 JCT (s)",
        column="p95 JCT (s)",
        axis="95th-percentile JCT (s)",
        tag="p95_jct",
    ),
    Metric("makespan_s", "makespan (s)", column="makespan (s)", tag="makespan"),
    Metric("throughput_jobs_per_h", "throughput (jobs/h)", column="jobs/h", tag="throughput"),
    Metric(
        "fairness_jain",
        "fairness (Jain)",
        "ratio",
        column="Jain",
        axis="fairness (Jain's index, 1 = equal shares)",
        tag="fairness",
    ),
    Metric("slot_utilization", "slot utilization", "ratio", column="slot util.", tag="utilization"),
    Metric("cpu_utilization", "CPU utilization", "ratio"),
    Metric("shuffle_cross_rack_bytes", "cross-rack shuffle (GB)", scale=1 / 1024**3),
    Metric("cost_usd", "cost ($)", tag="cost"),
    Metric("energy_kwh", "energy (kWh)"),
    Metric("sla_violation_s", "SLA violation (s)", column="SLA violation (s)", tag="sla_violation"),
    *(
        Metric(
            f"map_locality.{lv}",
            f"map locality: {lv.replace('_', '-')}",
            "percent",
            tag=f"locality_{lv}",
        )
        for lv in LEVELS
    ),
    *(Metric(f"mean_jct_by_class_s.{c}", f"mean JCT, {c} jobs (s)") for c, _, _ in SIZE_CLASSES),
    # derived by mrgym.rows.flatten for the comparison
    Metric("small_jct_s", "small-job JCT (s)", column="small-job JCT (s)", simulate=False),
    Metric(
        "local_frac",
        "node+server local",
        "ratio",
        column="node+server local",
        simulate=False,
    ),
)
METRIC: dict[str, Metric] = {m.key: m for m in METRICS}

#: ``mrgym compare``'s columns, in order.
COMPARE_KEYS = (
    "mean_jct_s",
    "p95_jct_s",
    "small_jct_s",
    "makespan_s",
    "throughput_jobs_per_h",
    "local_frac",
    "fairness_jain",
    "slot_utilization",
    "tasks_reexecuted",
)
COMPARE_COLUMNS: tuple[Metric, ...] = tuple(METRIC[k] for k in COMPARE_KEYS)
#: ``mrgym compare``'s columns shown only where some policy's mean is non-zero: a scenario
#: without interactive VMs would get a column of zeros.
OPTIONAL_COMPARE_KEYS = ("sla_violation_s",)
OPTIONAL_COMPARE_COLUMNS: tuple[Metric, ...] = tuple(METRIC[k] for k in OPTIONAL_COMPARE_KEYS)
#: ``mrgym simulate``'s rows, in order.
SIMULATE_ROWS: tuple[Metric, ...] = tuple(m for m in METRICS if m.simulate)
#: metric key -> TensorBoard tag (``mr/TAG``, ``mr_eval/TAG``), in table order.
TENSORBOARD_TAGS: dict[str, str] = {m.key: m.tag for m in METRICS if m.tag is not None}


def metric_value(metrics: dict[str, Any], key: str) -> Any:
    """``key``'s value in an episode's metrics (``"map_locality.node"`` reads the nested
    ``metrics["map_locality"]["node"]``) or in a flat row (where it is a key itself)."""
    if key in metrics:
        return metrics[key]
    head, dot, rest = key.partition(".")
    if not dot:
        raise KeyError(key)
    return metrics[head][rest]


def slowdowns(sim, isolated_jct: dict[int, float]) -> dict[int, float]:
    """JCT / isolated JCT per completed job, given each job's isolated JCT (computed by
    :func:`mrgym.runner.isolated_jct` on request, since it needs one run per job)."""
    return {
        j.id: (j.finish_s - j.arrived_s) / isolated_jct[j.id]
        for j in sim.jobs
        if j.finish_s is not None and isolated_jct.get(j.id)
    }
