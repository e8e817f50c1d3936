"""The classic Hadoop schedulers (ILA §5.1, lsap §III.A and §IV.D name them as baselines).

All map choices within a job go through the simulator's ``best_map`` (by default Hadoop's
own choice: the first node-local pending map, else the first rack-local one — a co-hosted
block is rack-local to Hadoop —, else any; ``execution.task_choice`` selects the
server-aware or look-ahead variants), which is also what the environment's "launch a map
of job j" action does.  Their backups are named by a rule (Hadoop's first candidate in
launch order, LATE's slow task with the longest time left) that ``pick_task`` gives the
environment, whose speculate action under ``EnvPolicy`` then launches the same task.  So
``fifo``, ``fair``, ``delay``, ``capacity`` and ``late`` play exactly in the gym loop
(given a job slot for every active job) — not ``dl-sched`` and ``rand-sched``, whose
random task picks the action space cannot name (docs/baselines.md, "Baselines in the gym
loop").

* ``fifo`` — Hadoop 1's JobQueueTaskScheduler: jobs in submission order; the head job with
  work gets the slot and launches its closest map (node- or rack-local first, else
  non-local). Reduces to the oldest job whose slow-start is reached.
* ``dl-sched`` — lsap §III.A, "the default scheduling algorithm in Hadoop": node-local,
  else rack-local, else "a task is randomly picked" (a co-hosted block is rack-local, as
  Hadoop does not know VMs, unless ``execution.task_choice`` says otherwise).
* ``fair`` — PureFair (ILA §5.1): fair sharing with greedy locality, "always selecting the
  closest task from the scheduled job without any delay". The scheduled job is the one
  furthest below its weighted fair share (fewest running tasks of the slot's kind per
  unit weight; ties to the oldest), as Hadoop's FairScheduler sorts jobs.
* ``delay`` — delay scheduling (Zaharia et al., EuroSys'10, as ILA §4.2 describes it): a
  job that cannot launch a task at its allowed locality level is skipped; after waiting
  ``node_wait_s`` it may launch rack-local tasks and after a further ``rack_wait_s`` any
  task; a launch sets its level to the launched task's level and resets the wait. Default
  waits: Hadoop 1's automatic value min(15 s, 1.5 x heartbeat) = 4.5 s for 3 s heartbeats.
  Delay is not VM-aware: a server-local task counts as rack-local.
* ``capacity`` — Yahoo's Capacity scheduler: one queue per pool (``job.spec.pool``) with a
  capacity share (``capacities`` or equal); the queue with the lowest used/capacity ratio
  is served first, FIFO inside it; a job skips non-node-local slots for up to
  ``node_locality_delay`` scheduling opportunities. Default 0: ILA ran Hadoop 0.20.205,
  whose CapacityTaskScheduler takes the closest task greedily (ILA §5.2 counts Capacity
  among "schedulers using greedy locality policy"); ``node_locality_delay=40`` is YARN's
  CapacityScheduler default.
* ``late`` — LATE (Zaharia et al., OSDI'08) on top of ``fair``: when no new task is to be
  launched, and fewer than SpeculativeCap = 10 % of slots run backup copies, and the
  requesting node is not slow (its finished tasks' progress rate is not below the 25th
  percentile of nodes: SlowNodeThreshold), back up the running task with the longest
  approximate time to end, (1 - progress) / progress rate, among those whose progress rate
  is below the 25th percentile of their job's running and finished tasks (SlowTaskThreshold;
  per job, since rates of different applications are not comparable; finished tasks count
  at their mean rate, so a job's last stragglers still compare with normal tasks). A
  reduce is a candidate only once its job's maps are done (until then its copy phase waits
  for maps, not for its node, and a backup would wait just the same). As in Hadoop
  (SPECULATIVE_LAG), a task must have run ``min_runtime_s`` = 60 s before it is compared.
* Speculation: ``fifo``, ``fair``, ``delay`` and ``capacity`` back up stragglers as Hadoop
  0.20/1.x does by default (``mapred.map.tasks.speculative.execution`` and
  ``mapred.reduce.tasks.speculative.execution`` are true): when a job has no pending task
  of the slot's kind, its first running task (launch order) that has run >= 60 s with one
  attempt, is >= 0.2 behind the job's average progress of that kind and never ran on this
  VM gets a backup (``hadoop_backup``).  ILA §5.1 ran Hadoop 0.20.205 with "all other
  parameters ... set to their default configurations" and PNA §III Hadoop 1.2.1; neither
  says it turned speculation off.  ``speculation=False`` turns it off.  Deviation: Hadoop
  looks at the node's data-local running maps first.  ``dl-sched`` and ``rand-sched``
  do not speculate: lsap §III.A describes dl-sched's task choice only, and its
  simulations have no stragglers.  On ``ila72`` (seeds 0-2) it adds 30-160 backups a run
  and moves mean JCT by -2 % to +1 % (``fair`` 170.5 -> 170.7 s).
* ``rand-sched`` — lsap §IV.D: with probability ``randomness`` a uniformly random pending
  map of the FIFO head job, else dl-sched ("if its value is 100%, the scheduling will be
  thoroughly random; if its value is 0%, rand-sched degenerates to dl-sched").
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    REDUCE,
    SPECULATE,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
    launch_reduce,
    speculate,
)

# Hadoop 0.20/1.x speculation (TaskInProgress.hasSpeculativeTask): a task is backed up once
# its progress is SPECULATIVE_GAP behind its job's average and it has run SPECULATIVE_LAG.
SPECULATIVE_GAP = 0.2
SPECULATIVE_LAG_S = 60.0


def hadoop_backup(ctx: DecisionContext, job) -> Decision | None:
    """Hadoop 0.20/1.x's default speculative execution for ``job`` on the slot's kind
    (JobInProgress.findSpeculativeTask, ``mapred.{map,reduce}.tasks.speculative.execution``
    = true): only once the job has no pending task of that kind, back up the first running
    task (in launch order) with a single attempt that has run >= 60 s, whose progress is >=
    0.2 below the job's average progress of that kind (Hadoop's JobStatus map/reduce
    progress: the mean over all the kind's tasks, done = 1, pending = 0) and none of whose
    attempts ran on this VM.  Hadoop looks at the node's data-local running maps before the
    others; here every candidate is in launch order (documented deviation)."""
    kind = ctx.slot_kind
    if kind == MAP:
        if job.n_pending_maps > 0 or job.running_maps == 0:
            return None
        n, done = len(job.maps), job.maps_done
    else:
        if job.n_pending_reduces > 0 or job.running_reduces == 0:
            return None
        n, done = len(job.reduces), job.reduces_done
    if job.allowed_pools is not None and not ctx.view.pool_ok(job, ctx.vm):
        return None
    now = ctx.now
    vm = ctx.vm
    # the cheap tests first: most heartbeats find no task old enough, and then no progress
    # (the costly part) is computed
    running = job.running_of[kind]  # the kind's running tasks, in launch order
    old = [
        t
        for t in running
        if len(t.running) == 1
        and now - t.running[0].start_s >= SPECULATIVE_LAG_S
        and not any(a.vm is vm for a in t.attempts)  # hasRunOnMachine
    ]
    if not old:
        return None
    # each old task's progress once: the job's average needs it, then the comparison
    p_old = {t: t.running[0].progress(now) for t in old}
    total = float(done)
    for t in running:
        p = p_old.get(t)
        total += p if p is not None else max(a.progress(now) for a in t.running)
    floor = total / n - SPECULATIVE_GAP
    for t in old:
        if p_old[t] <= floor:
            return speculate(job.id, t.index)
    return None


class HadoopSpeculation(Scheduler):
    """A classic scheduler with Hadoop 0.20/1.x's default speculation (``speculation``:
    on unless turned off).  ILA §5.1 ran Hadoop 0.20.205 with "all other parameters ...
    set to their default configurations" and PNA §III Hadoop 1.2.1, whose
    ``mapred.map.tasks.speculative.execution`` and ``...reduce...`` default to true; a
    subclass that does not call ``__init__`` keeps it off."""

    speculates = False
    speculation = False

    def __init__(self, speculation: bool = True) -> None:
        if not isinstance(speculation, (bool, np.bool_)):
            raise ValueError(f"speculation: must be true or false, got {speculation!r}")
        self.speculation = bool(speculation)
        self.speculates = self.speculation

    def backup(self, ctx: DecisionContext, job) -> Decision | None:
        """A backup of one of ``job``'s tasks when speculation is on (None: none)."""
        return hadoop_backup(ctx, job) if self.speculation else None

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        """Hadoop's backup (the first candidate in launch order, ``hadoop_backup``) for a
        speculate action on ``job``: the environment's speculate action would otherwise
        take the job's longest-time-left task (``Scheduler.pick_task``)."""
        if kind != SPECULATE:
            return None
        d = self.backup(ctx, job)
        return None if d is None else d.task


def first_reduce(ctx: DecisionContext, jobs, sched: HadoopSpeculation | None = None) -> Decision:
    """The first job (in order) with a reduce to launch; with ``sched``'s speculation on, a
    job with none pending may back one up instead (Hadoop's obtainNewReduceTask)."""
    for job in jobs:
        if ctx.can_launch(job, REDUCE):
            return launch_reduce(job.id)
        if sched is not None and (d := sched.backup(ctx, job)) is not None:
            return d
    return DECLINE


def fair_order(ctx: DecisionContext) -> list:
    """Jobs furthest below their weighted fair share first (ties: oldest)."""
    kind = ctx.slot_kind
    if kind == MAP:
        return sorted(ctx.jobs, key=lambda j: j.running_maps / j.weight)
    return sorted(ctx.jobs, key=lambda j: j.running_reduces / j.weight)


class FifoScheduler(HadoopSpeculation):
    name = "fifo"

    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, ctx.jobs, self)
        for job in ctx.jobs:
            if ctx.can_launch(job, MAP):
                return launch_map(job.id)
            if self.speculation and (d := self.backup(ctx, job)) is not None:
                return d
        return DECLINE


class DlSchedScheduler(Scheduler):
    """Hadoop default (lsap's dl-sched): node-local, else rack-local, else random."""

    name = "dl-sched"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, ctx.jobs)
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


class FairScheduler(HadoopSpeculation):
    """PureFair: weighted fair sharing, greedy locality, no delay."""

    name = "fair"

    def decide(self, ctx: DecisionContext) -> Decision:
        order = fair_order(ctx)
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, order, self)
        for job in order:
            if ctx.can_launch(job, MAP):
                return launch_map(job.id)
            if self.speculation and (d := self.backup(ctx, job)) is not None:
                return d
        return DECLINE


# Delay scheduling's locality levels (not VM-aware: server-local is rack-local).
_DELAY_LEVEL = {NODE: 0, SERVER: 1, RACK: 1, OFF_RACK: 2, None: 0}


class DelayScheduler(HadoopSpeculation):
    name = "delay"

    def __init__(
        self,
        node_wait_s: float | None = None,
        rack_wait_s: float | None = None,
        speculation: bool = True,
    ):
        super().__init__(speculation)
        self.node_wait_s = node_wait_s
        self.rack_wait_s = rack_wait_s
        self._level: dict[int, int] = {}
        self._since: dict[int, float] = {}

    def reset(self, seed: int | None) -> None:
        self._level.clear()
        self._since.clear()

    def _waits(self, ctx: DecisionContext) -> tuple[float, float]:
        auto = min(15.0, 1.5 * ctx.view.heartbeat_s)  # Hadoop 1's automatic delay
        return (
            self.node_wait_s if self.node_wait_s is not None else auto,
            self.rack_wait_s if self.rack_wait_s is not None else auto,
        )

    def allowed(self, job, now: float, waits: tuple[float, float]) -> int:
        level = self._level.get(job.id, 0)
        since = self._since.get(job.id)
        if since is None:
            return level
        waited = now - since
        if level == 0 and waited >= waits[0]:
            level, waited = 1, waited - waits[0]
        if level == 1 and waited >= waits[1]:
            level = 2
        return level

    def decide(self, ctx: DecisionContext) -> Decision:
        order = fair_order(ctx)
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, order, self)
        waits = self._waits(ctx)
        now = ctx.now
        for job in order:
            if not ctx.can_launch(job, MAP):
                if self.speculation and (d := self.backup(ctx, job)) is not None:
                    return d
                continue
            best = ctx.best_map(job)
            if best is None:
                continue
            task, loc = best
            level = _DELAY_LEVEL[loc]
            if level <= self.allowed(job, now, waits):
                self._level[job.id] = level
                self._since.pop(job.id, None)
                return launch_map(job.id)
            self._since.setdefault(job.id, now)
        return DECLINE


class CapacityScheduler(HadoopSpeculation):
    name = "capacity"

    def __init__(
        self,
        capacities: dict[str, float] | None = None,
        node_locality_delay: int = 0,
        speculation: bool = True,
    ):
        super().__init__(speculation)
        self.capacities = capacities
        self.node_locality_delay = node_locality_delay
        self._missed: dict[int, int] = {}

    def reset(self, seed: int | None) -> None:
        self._missed.clear()

    def _queues(self, ctx: DecisionContext) -> list[list]:
        queues: dict[str, list] = {}
        for job in ctx.jobs:
            queues.setdefault(job.spec.pool, []).append(job)
        caps = self.capacities or {}
        equal = 1.0 / max(1, len(queues))

        def ratio(item):
            pool, jobs = item
            used = sum(j.running_tasks for j in jobs)
            return used / caps.get(pool, equal), pool

        return [jobs for _, jobs in sorted(queues.items(), key=ratio)]

    def decide(self, ctx: DecisionContext) -> Decision:
        queues = self._queues(ctx)
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, [j for q in queues for j in q], self)
        for q in queues:
            for job in q:
                if not ctx.can_launch(job, MAP):
                    if self.speculation and (d := self.backup(ctx, job)) is not None:
                        return d
                    continue
                best = ctx.best_map(job)
                if best is None:
                    continue
                loc = best[1]
                if (
                    loc is None
                    or loc == NODE
                    or self._missed.get(job.id, 0) >= self.node_locality_delay
                ):
                    self._missed[job.id] = 0
                    return launch_map(job.id)
                self._missed[job.id] = self._missed.get(job.id, 0) + 1
        return DECLINE


@lru_cache(maxsize=8)
def _percentile(values: tuple[float, ...], pct: float) -> float:
    """``np.percentile(values, pct)``, kept for the next call: LATE's SlowNodeThreshold is
    asked at every decision, the nodes' rates change only when a task finishes."""
    return float(np.percentile(list(values), pct))


class LateScheduler(FairScheduler):
    name = "late"
    speculates = True
    speculation = False  # LATE replaces Hadoop's speculation with its own (below)

    def __init__(
        self,
        speculative_cap: float = 0.1,
        slow_task_pct: float = 25.0,
        slow_node_pct: float = 25.0,
        min_runtime_s: float = 60.0,
    ):
        self.min_runtime_s = min_runtime_s
        self.speculative_cap = speculative_cap
        self.slow_task_pct = slow_task_pct
        self.slow_node_pct = slow_node_pct

    def decide(self, ctx: DecisionContext) -> Decision:
        d = super().decide(ctx)
        if not d.declines:
            return d
        return self._speculate(ctx)

    def _speculate(self, ctx: DecisionContext) -> Decision:
        best = _longest_left(self._slow_attempts(ctx))
        if best is None:
            return DECLINE
        return speculate(best.task.job.id, best.task.index)

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        """LATE's backup within ``job`` (its slow task with the longest time left, when
        LATE would speculate at all) for a speculate action on it; the one LATE's own
        decision names is the best of its job too (``Scheduler.pick_task``)."""
        if kind != SPECULATE:
            return None
        best = _longest_left(
            [(a, left) for a, left in self._slow_attempts(ctx) if a.task.job is job]
        )
        return None if best is None else best.task.index

    def _slow_attempts(self, ctx: DecisionContext) -> list:
        """(attempt, approximate time to end) of every backup candidate below its job's
        SlowTaskThreshold, grouped by job in running order; [] when LATE would not back
        anything up here (SpeculativeCap reached, a slow node)."""
        view = ctx.view
        now = ctx.now
        running = [a for job in ctx.jobs for a in view.running_attempts(job)]
        slots = sum(v.map_slots + v.reduce_slots for v in view.topology.workers)
        if sum(1 for a in running if a.speculative) >= self.speculative_cap * slots:
            return []
        # SlowNodeThreshold: the requesting node's progress rate of finished tasks
        rates = view.node_progress_rates()
        mine = rates.get(ctx.vm.id)
        if (
            mine is not None
            and len(rates) >= 4
            and mine < _percentile(tuple(rates.values()), self.slow_node_pct)
        ):
            return []
        # a reduce is compared only once its job's maps are all done: before that its copy
        # phase waits for maps, not for its node
        cands = [
            a
            for a in running
            if a.task.kind == ctx.slot_kind
            and len(a.task.running) == 1
            and a.vm is not ctx.vm
            and now - a.start_s >= self.min_runtime_s
            and (a.task.kind == MAP or a.task.job.maps_done == len(a.task.job.maps))
        ]
        # SlowTaskThreshold: a task is slow when its progress rate is below the 25th
        # percentile of the rates of its job's running tasks of the same kind
        by_job: dict[int, list] = {}
        for a in cands:
            by_job.setdefault(a.task.job.id, []).append(a)
        out = []
        for atts in by_job.values():
            job = atts[0].task.job
            prog = np.array([a.progress(now) for a in atts])
            rate = prog / np.array([now - a.start_s for a in atts])
            # finished tasks progressed at 1 / duration: the threshold is taken over the
            # job's running and finished tasks, so a job's last stragglers still compare
            # with the tasks that finished normally
            n_done, sum_s = job.stats[ctx.slot_kind][0], job.stats[ctx.slot_kind][1]
            done_rate = [n_done / sum_s] * n_done if n_done and sum_s > 0 else []
            slow = np.percentile(np.concatenate([rate, done_rate]), self.slow_task_pct)
            for a, p, r in zip(atts, prog, rate):
                if r <= slow:
                    out.append((a, (1.0 - p) / r if r > 0 else np.inf))
        return out


def _longest_left(slow: list):
    """The attempt with the longest time to end (the first of equals), or None."""
    best, best_left = None, -1.0
    for a, left in slow:
        if left > best_left:
            best, best_left = a, left
    return best


class RandSchedScheduler(DlSchedScheduler):
    name = "rand-sched"
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self, randomness: float = 1.0):
        super().__init__()
        if not 0.0 <= randomness <= 1.0:
            raise ValueError(f"rand-sched.randomness: must be in [0, 1], got {randomness}")
        self.randomness = randomness

    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind == MAP and self.randomness > 0 and self.rng.random() < self.randomness:
            for job in ctx.jobs:
                if ctx.can_launch(job, MAP):
                    return launch_map(job.id, random_pending_map(job, self.rng))
            return DECLINE
        return super().decide(ctx)
