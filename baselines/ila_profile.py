"""What ILA's model reads: the system information N_info of a requesting VM (ILA Table 2,
§4.3) and the task profiler's decayed demand estimate (ILA §4.3, eq. 7).

Only monitoring is used — the Xentop/iostat-like :meth:`ClusterView.vm_metrics` and
:meth:`ClusterView.host_metrics`, and the CPU and FileSystem counters of finished tasks
(``job.stats``: CPU seconds, MB read, MB written) — never a task's hidden rates.

Units (a choice; the paper does not give its scaling): CPU quantities are fractions of the
server's cores and I/O rates fractions of its disk's single-stream MB/s, so the model's
exponents stay of order one and a model trained on one server type reads the same on a
bigger one.  ``io_u`` is iostat's %util ("Physical server I/O utilization ... measured via
Linux iostat", §4.3): whether the server's disk has a request outstanding
(``HostMetrics.disk_busy``), not its throughput over its single-stream MB/s, which falls
as seeks thrash a busy disk.

Feature order is :data:`FEATURES` (ILA Table 2): the task's demand ``t_c, t_r, t_w`` then
the system metrics ``c_u, c_a, c_0, r_u, w_u, r_a, w_a, io_u``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mrgym.sim.jobs import MAP

FEATURES = ("t_c", "t_r", "t_w", "c_u", "c_a", "c_0", "r_u", "w_u", "r_a", "w_a", "io_u")
#: eq. 1 reads the task's CPU demand and the three CPU metrics (c_u, c_a, c_0)
CPU_FEATURES = (0, 3, 4, 5)
#: eq. 2 reads the task's read/write demand, the five I/O metrics and Dom0's CPU
IO_FEATURES = (1, 2, 6, 7, 8, 9, 10, 5)
ALPHA = 0.8  # eq. 7's decay ("We set α to 0.8 in this work")


@dataclass(frozen=True)
class Demand:
    """A task's average demand: CPU (fraction of the server's cores), read and write rates
    (fractions of its disk's MB/s) — Table 2's t_c, t_r, t_w."""

    cpu: float
    read: float
    write: float

    def as_array(self) -> np.ndarray:
        return np.array([self.cpu, self.read, self.write])


def init_demand(vm) -> Demand:
    """eq. 7's *init*: "a high value to avoid interference" — the whole VM's vCPUs and the
    disk's full bandwidth for both reading and writing."""
    return Demand(min(1.0, vm.vcpus / vm.host.type.cores), 1.0, 1.0)


def node_info(view, vm) -> np.ndarray:
    """N_info for a request from ``vm`` (Table 2's eight system metrics, in order
    c_u, c_a, c_0, r_u, w_u, r_a, w_a, io_u)."""
    host = vm.host
    cores = host.type.cores
    disk = host.type.disk_mbps
    hm = view.host_metrics(host)
    own = view.vm_metrics(vm)
    r_a = w_a = 0.0
    for other in host.vms:
        if other is not vm and other.alive:
            m = view.vm_metrics(other)
            r_a += m.read_mbps
            w_a += m.write_mbps
    return np.array(
        [
            own.cpu_cores / cores,
            max(0.0, hm.vm_cpu_cores - own.cpu_cores) / cores,
            hm.dom0_cpu_cores / cores,
            own.read_mbps / disk,
            own.write_mbps / disk,
            r_a / disk,
            w_a / disk,
            hm.disk_busy,
        ]
    )


def features(demand: Demand, info: np.ndarray) -> np.ndarray:
    """One row of the model's input: the demand then N_info (FEATURES order)."""
    return np.concatenate([demand.as_array(), info])


def measured_demand(
    d_cpu_s: float, d_read_mb: float, d_write_mb: float, d_s: float, host
) -> Demand:
    """Demand of tasks that used ``d_cpu_s`` CPU seconds and read/wrote these MB over
    ``d_s`` task-seconds in all, on a server like ``host``."""
    return Demand(
        d_cpu_s / d_s / host.type.cores,
        d_read_mb / d_s / host.type.disk_mbps,
        d_write_mb / d_s / host.type.disk_mbps,
    )


@dataclass
class _JobEstimate:
    seen: tuple = (0, 0.0, 0.0, 0.0, 0.0)  # job.stats[kind] at the last update
    estimate: Demand | None = None  # None: no interval with a finished task yet (t = 0)


@dataclass
class TaskProfiler:
    """eq. 7: D̂_t = init (t = 0), D_0 (t = 1), α D_{t-1} + (1 - α) D̂_{t-1} after.

    The update interval t is the scheduler's: :meth:`update` is called at most once per
    ``interval_s`` (a heartbeat, by default) and folds in the measured demand of the tasks
    of each job that finished since the last update (their counters' sums: CPU seconds and
    MB over task-seconds)."""

    interval_s: float = 3.0
    alpha: float = ALPHA
    kind: str = MAP
    init: Demand | None = None  # eq. 7's init (None: init_demand of the requesting VM)
    _jobs: dict = field(default_factory=dict)
    _last: float = -np.inf

    def reset(self) -> None:
        self._jobs.clear()
        self._last = -np.inf

    def update(self, jobs, host, now: float) -> None:
        if now - self._last < self.interval_s:
            return
        self._last = now
        for job in jobs:
            st = job.stats[self.kind]
            est = self._jobs.get(job.id)
            if est is None:
                est = self._jobs[job.id] = _JobEstimate()
            n0, s0, c0, r0, w0 = est.seen
            n, s, c, r, w = st
            if n == n0 or s <= s0:
                continue
            d = measured_demand(c - c0, r - r0, w - w0, s - s0, host)
            est.seen = (n, s, c, r, w)
            if est.estimate is None:
                est.estimate = d
            else:
                e, a = est.estimate, self.alpha
                est.estimate = Demand(
                    a * d.cpu + (1 - a) * e.cpu,
                    a * d.read + (1 - a) * e.read,
                    a * d.write + (1 - a) * e.write,
                )

    def demand(self, job, vm) -> Demand:
        est = self._jobs.get(job.id)
        if est is None or est.estimate is None:
            return self.init if self.init is not None else init_demand(vm)
        return est.estimate
