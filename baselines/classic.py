"""Classic Hadoop schedulers (reference implementations of the Scheduler protocol).

* ``fifo`` — Hadoop's original FIFO queue, locality-oblivious: every free slot goes to the
  oldest job with work, which launches its lowest-numbered pending task.  The lower bound
  every locality-aware policy is measured against.
* ``dl-sched`` — Hadoop 1's default scheduler as lsap §III.A describes it: jobs in FIFO
  order; "the master node first tries to find a map task whose input data are stored on
  that slave node ... Otherwise, Hadoop tries to find a task that can achieve rack-level
  data locality ... If it still fails, a task is randomly picked and dispatched."
  Deviation: Hadoop is unaware of VMs, so a co-hosted (server-local) task counts as one of
  the rack-local tasks it may pick; the simulator returns it first among them.

Both give reduces to the oldest job whose slow-start has been reached.
"""

from __future__ import annotations

import numpy as np

from mrgym.sim.hdfs import OFF_RACK
from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
    launch_reduce,
)


def _first_reduce(ctx: DecisionContext) -> Decision:
    for job in ctx.jobs:
        if ctx.can_launch(job, "reduce"):
            return launch_reduce(job.id)
    return DECLINE


class FifoScheduler(Scheduler):
    name = "fifo"

    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return _first_reduce(ctx)
        for job in ctx.jobs:
            if ctx.can_launch(job, MAP):
                # the job's splits in queue order, wherever their data lives
                t = ctx.view.next_pending_map(job)
                if t is not None:
                    return launch_map(job.id, t.index)
        return DECLINE


class DlSchedScheduler(Scheduler):
    """Hadoop default (lsap's dl-sched): node-local, else rack-local, else random."""

    name = "dl-sched"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return _first_reduce(ctx)
        for job in ctx.jobs:
            if not ctx.can_launch(job, MAP):
                continue
            best = ctx.best_map(job)
            if best is None:
                continue
            task, level = best
            if level is not None and level < OFF_RACK:
                return launch_map(job.id, task.index)
            return launch_map(job.id, random_pending_map(job, self.rng))
        return DECLINE


def random_pending_map(job, rng: np.random.Generator) -> int:
    """A uniformly random start, then the next pending map (O(1) while many are pending)."""
    n = len(job.maps)
    start = int(rng.integers(n))
    for k in range(n):
        t = job.maps[(start + k) % n]
        if t.state == PENDING:
            return t.index
    raise ValueError(f"job {job.id} has no pending map")
