"""The cloud driver of Lee's thesis (ch. 4, §4.2, §4.4.1): an elastic Hadoop cluster of
long-lived *core* nodes (TaskTracker + DataNode) and temporary, data-less *accelerator*
nodes that it starts when production jobs come and releases when they are done.

* **Architecture** (§4.2, Fig. 4.1): "participating nodes are grouped into one of two pools:
  (1) long-living core nodes to host both data and computations, and (2) accelerator nodes
  that are added to the cluster temporarily when additional computing power is needed.
  A MapReduce system ... runs on nodes in both pools whereas a storage system (e.g., HDFS)
  is deployed only on core nodes."  The scenario says which hosts are which (a ``pool``
  per host group; accelerators ``datanode: false`` and ``standby: true`` so they start
  off and unbilled); the driver only starts and releases hosts of its ``pool``.
* **When to add** (§4.2): "When many production jobs ... are anticipated or a large ad-hoc
  job is submitted, the cloud driver will add nodes to the accelerator pool temporarily
  to handle them".  Here: when a job is active (arrived, not finished) the driver starts
  ``max_nodes`` hosts of the pool (§4.4.1's configurations are fixed counts: "5 m1 + 4 c1",
  "5m1+8c1", ...), through the control action ``Commission``.
* **When to release** (§4.4.1): "accelerator nodes can be released after the jobs were
  done ... 5m1+8c1 can finish all jobs less than 2 hours, we need to pay for only 2 hours'
  usage of accelerator nodes".  Here: once no job is active (the queue of Fig. 4.9 is
  empty), every host the driver runs is released (``Decommission``).  As the jobs are done
  the hosts are idle, so the immediate release loses nothing; ``drain=True`` releases
  each through a drain instead (no new tasks, gone once its work and outputs are not
  needed), which matters only for ablations that release earlier.
* **Which type** (§4.2): "By using the computing rate information and the cost of each
  instance type, the cloud driver can make a decision on which instance type to use";
  §4.4.1 prefers c1.medium for its "faster CPUs at lower prices" (Table 4.1's $/CU).  The
  driver ranks the pool's switched-off hosts by computing rate per dollar: CR(i) is the
  measured MB/s of finished jobs' maps on type i (``ClusterView.rate_by_host_type``, the
  §4.3.1.4 calibration's measure), each job's rates normalized by its best type, averaged
  over the finished jobs measured on every candidate type; until such history exists, CR
  is Table 4.1's compute units (cores x core speed).  Ties go to the lower host id.

Parameters: ``inner`` = "fair" (the scheduler of §4.4.1 is not named for this case study;
§4.4.2 uses "the fair scheduler"), ``inner_params`` = {}, ``pool`` = "accelerator",
``max_nodes`` = None (every host of the pool), ``period_s`` = 3 (one TaskTracker heartbeat:
the driver learns of a job when the master does), ``drain`` = False.  The inner scheduler
answers ``place_job`` / ``decide``; its own ``control`` actions, if it has any, are passed
on at the driver's period.

Choices where the thesis is silent, and deviations:
* An instance joins at once when started (no boot or registration delay; ch. 5 §5.2.2
  models worker arrival, ch. 4 does not) and holds no data, so a map on it always reads
  its block over the network from a core node's disk.
* Billing follows ``dynamics.billing``; the thesis' numbers are EC2's 2011 hourly rule
  (``billing: hourly``, stated in ``mrgym.sim.monitoring``).
* The history of production jobs (§4.2: "keeps the history of job executions to estimate
  the submission rate") is not used to start nodes ahead of a round: the driver reacts to
  arrivals within one period.  Core-pool sizing (by storage) is the scenario's.
* State is plain ids and numbers (deep-copyable with environment snapshots).
"""

from __future__ import annotations

from typing import Any

from mrgym import registry
from mrgym.sim.monitoring import price_per_hour
from mrgym.sim.scheduler import Commission, Decision, DecisionContext, Decommission, Scheduler
from mrgym.sim.view import ClusterView

PERIOD_S = 3.0  # Hadoop 1's heartbeat: the driver sees a new job when the master does


class CloudDriver(Scheduler):
    """Lee §4.2 cloud driver around an inner scheduler (made by ``registry.make``)."""

    name = "cloud-driver"

    def __init__(
        self,
        inner: str = "fair",
        pool: str = "accelerator",
        max_nodes: int | None = None,
        period_s: float = PERIOD_S,
        drain: bool = False,
        inner_params: dict[str, Any] | None = None,
    ):
        if max_nodes is not None and max_nodes < 0:
            raise ValueError(f"cloud-driver.max_nodes: must be >= 0, got {max_nodes}")
        if period_s <= 0:
            raise ValueError(f"cloud-driver.period_s: must be > 0, got {period_s}")
        self.inner = registry.make(inner, **(inner_params or {}))
        self.pool = pool
        self.max_nodes = max_nodes
        self.drain = drain
        self.speculates = self.inner.speculates
        # the inner scheduler's control period wins (its phase II actions keep their pace)
        self.control_period_s = self.inner.control_period_s or period_s
        self.running: list[int] = []  # hosts of the pool the driver runs now
        self.log: list[tuple[float, str, int]] = []  # (time, "start"/"release", host id)
        self._seen = False  # the pool's hosts up at the first control call are known

    def reset(self, seed: int | None) -> None:
        self.inner.reset(seed)
        self.running = []
        self.log = []
        self._seen = False

    # -- the inner scheduler answers the per-job and per-slot questions ------------------
    def place_job(self, job, view: ClusterView) -> frozenset[str] | None:
        return self.inner.place_job(job, view)

    def decide(self, ctx: DecisionContext) -> Decision:
        return self.inner.decide(ctx)

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        return self.inner.pick_task(ctx, job, kind)

    # -- §4.2: add / remove accelerator nodes ---------------------------------------------
    def control(self, view: ClusterView) -> list:
        actions = list(self.inner.control(view) or ())
        hosts = [h for h in view.topology.hosts if h.pool == self.pool and not h.gone]
        if not self._seen:  # hosts of the pool already up at the start are the driver's
            self._seen = True
            self.running = [h.id for h in hosts if h.alive]
        self.running = [i for i in self.running if not view.topology.hosts[i].gone]
        busy = bool(view.jobs)
        target = (len(hosts) if self.max_nodes is None else self.max_nodes) if busy else 0
        now = view.now
        if len(self.running) < target:
            for h in self.rank(view, [h for h in hosts if h.id not in self.running]):
                if len(self.running) >= target:
                    break
                self.running.append(h.id)
                self.log.append((now, "start", h.id))
                actions.append(Commission(h.id))
        elif not busy and self.running:
            for i in self.running:
                self.log.append((now, "release", i))
                actions.append(Decommission(i, drain=self.drain))
            self.running = []
        return actions

    def rank(self, view: ClusterView, hosts: list) -> list:
        """``hosts`` best first: computing rate per dollar of their instance type."""
        types = sorted({h.type.name for h in hosts})
        cr = self.computing_rates(view, types)
        spot = view.scenario.dynamics.spot

        def per_dollar(h) -> float:  # a free instance ranks first
            return cr[h.type.name] / max(price_per_hour(h, spot), 1e-9)

        return sorted(hosts, key=lambda h: (-per_dollar(h), h.id))

    @staticmethod
    def computing_rates(view: ClusterView, types: list[str]) -> dict[str, float]:
        """CR per instance type: finished jobs' measured map MB/s, each job normalized by
        its best type, averaged; compute units while no job was measured on every type."""
        rows = []
        for job in view.all_jobs:
            if job.finish_s is None:
                continue
            rates = view.rate_by_host_type(job)
            if all(rates.get(t, 0.0) > 0 for t in types):
                best = max(rates[t] for t in types)
                rows.append([rates[t] / best for t in types])
        if rows:
            return {t: sum(r[k] for r in rows) / len(rows) for k, t in enumerate(types)}
        cat = {h.type.name: h.type for h in view.topology.hosts}
        return {t: cat[t].cores * cat[t].core_speed for t in types}
