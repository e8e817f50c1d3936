"""Progress-share, heterogeneity-aware scheduling (Lee thesis, ch. 4, §4.3) and the
thesis' Fair/Delay comparator (Algorithm 1).

* **Computing rate** (§4.2, §4.3.1.4). CR(i, j) is the relative speed of host type i for job
  j. It is measured in a *calibration phase*: "at least one map task is launched on each
  type of node. By measuring the completion time of these tasks, the scheduler can
  determine the CR". Here CR(i, j) is the MB/s of job j's finished maps on host type i
  (``ClusterView.rate_by_host_type``: input MB / map seconds, monitoring only). A job is
  calibrated once every host type it may use (alive workers of its pools) has a finished
  map; its CR is then frozen, as written (``update_rates=True`` keeps measuring instead).
* **Progress share** (eq. 4.1): PS(j) = Σ_{s∈S_j} CR(s, j) / Σ_{s∈S} CR(s, j), S_j the map
  slots running tasks of j, S every map slot the job may use.
* **Task selection** (§4.3.1.2, Algorithm 2 line 3): b = argmax_b' BS(s, j, b'). T(s, j, r)
  = Tr(s, r) + Tp(s, j, b); Tp = block MB / CR(s, j) (the same for every block of a job on
  one slot), so the best block is the one of least read time: node-local, else rack-local,
  else any — Hadoop's own choice (``ctx.best_map``), which is also the environment's
  "launch a map of job j", so the scheduler replays exactly in MRCluster-v0.
* **Preference** (eqs. 4.2-4.4): Score_j(s, r) = 1 / T(s, j, r); BS_{j,b}(s) = max_r Score;
  Pref_{j,b}(s) = Σ_{s': BS(s) ≥ BS(s')} BS(s') / Σ_{s''} BS(s''). Tr is analytic (the
  thesis' second option): 0 from the slot's own VM, else block MB / the MB/s a new flow
  from the replica's host would get now (``ClusterView.path_bandwidth``; the host's disk
  for a co-hosted replica).
* **Launch decision** (§4.3.1.3, Algorithm 2 line 4): launch when (1 − Pref_{j,b}(s)) ≤
  delay(j) / max_delay, else try the next job. delay(j) is the time since the job was first
  skipped; it starts again when the job launches on its most preferred slot (Pref = 1),
  not after a launch it had to wait for — as delay scheduling keeps its wait (Zaharia et
  al., EuroSys'10: the skip count is reset by a local launch; ``classic.DelayScheduler``
  keeps the level reached), so a job that waited long enough for a worse slot takes the
  next ones too. (Resetting at every launch instead leaves a job alone on the cluster
  taking one less preferred slot per wait: Sort's JCT on lee-gpu, seeds 0-2, 274 s
  against 228 s.) If every job is skipped the slot stays free until the next heartbeat.

Algorithm 2 is for map slots; a reduce slot goes to the job furthest below its fair share
of running reduces (the comparator's rule, ``classic.fair_order`` / ``first_reduce``): CR
is measured on maps only and the thesis says nothing of reduces.

``lee-fair`` (Algorithm 1, "how Hadoop schedulers operate", the "fair scheduler" of
§4.4.2): jobs sorted by share = running tasks per unit weight; the best (most local) task
launches if it is "good enough" by delay scheduling with the thesis' waits — "launches
local tasks immediately while it waits five or ten seconds before launching rack-local or
remote tasks": ``node_wait_s`` = 5, ``rack_wait_s`` = 5 (remote after 10 s). It is
``classic.DelayScheduler`` with those waits (Hadoop 1's automatic wait is 4.5 s).

Parameters: ``max_delay_s`` = 10 (the thesis gives none; the longest wait of the delay
scheduler its threshold generalizes, "five or ten seconds"), ``aware`` = True,
``update_rates`` = False.

Choices where the thesis is silent, and deviations:
* The text says "the slot is taken if the delay made to the job j is less than Pref ·
  max_delay", but its own example ("if the preference value is 0.5, the task is launched
  only if the delay for the job so far is more than half of the maximum delay") and
  Algorithm 2's line 4 say the opposite; Algorithm 2 is implemented.
* Calibration: a job that has no map running or finished on the asking slot's host type
  launches its calibration task there without the Pref test (the job keeps its place in
  the progress-share order). Until a type is measured its CR is the mean CR of the job's
  measured types; before any map of the job finished, every CR is equal (PS = slot share)
  and Tp is the time to read the block from the slot's own disk (the fastest the task
  could be), so locality alone ranks the slots, as in delay scheduling.
* Maps without input (0 MB) have no MB/s rate: such jobs keep equal CRs and Pref = 1.
* Jobs are sorted by PS(j) / weight (weighted fair sharing; the thesis has no weights),
  ties to the oldest. S and S_j count alive workers' map slots the job's pools allow.
* ``aware=False`` is an ablation, not in the thesis: every host type gets the job's overall
  measured rate (``job_stats``), so PS is the slot share and Pref sees locality only.
* Eq. 4.4 ranks slots strictly: a host type measured 1 % slower than another of as many
  slots already has Pref ≈ 0.5, so a job whose rates differ only by measurement noise
  waits up to half of ``max_delay`` for the faster type. Implemented as written; on
  lee-gpu Sort's calibration maps, run beside Crypto's, measure one of the two identical
  nodes faster at random, so Sort declines the other one's slots; where it picks cg1, as
  Crypto does, both jobs crowd one node (claim ``lee-ps-jct`` gives the measured JCTs).
* The gym loop replays ``run_sim`` exactly (``job_slots`` >= the active jobs,
  ``work_conserving=False`` so that Algorithm 2's declines stay legal): launches name the
  job only, and reduces follow the fair order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from baselines.classic import DelayScheduler, fair_order, first_reduce
from mrgym.sim.jobs import Job
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
)
from mrgym.sim.view import ClusterView

MAX_DELAY_S = 10.0  # the delay scheduler's longest wait in §4.3.1.3's example
LEE_NODE_WAIT_S = 5.0  # §4.3.1.3: "waits five ... seconds before launching rack-local"
LEE_RACK_WAIT_S = 5.0  # ... "or ten seconds" (in all) "before launching ... remote tasks"


# -- eqs. 4.1-4.4 and Algorithm 2's test, on plain numbers -------------------------------
def progress_share(
    running: Mapping[str, int], slots: Mapping[str, int], cr: Mapping[str, float]
) -> float:
    """Eq. 4.1: Σ CR over the slots running the job / Σ CR over all slots, slots grouped
    by host type (``running`` and ``slots``: type -> slot count; ``cr``: type -> CR)."""
    total = sum(n * cr[t] for t, n in slots.items())
    if total <= 0:
        return 0.0
    return sum(n * cr[t] for t, n in running.items()) / total


def score(t_s: float) -> float:
    """Eq. 4.2: Score = 1 / T(s, j, r) (a zero time scores infinitely high)."""
    return float("inf") if t_s <= 0 else 1.0 / t_s


def best_score(times_s: Iterable[float]) -> float:
    """Eq. 4.3: BS = the highest score over the block's replicas (its least T)."""
    return max(score(t) for t in times_s)


def preference(bs: float, all_bs: Iterable[tuple[float, int]]) -> float:
    """Eq. 4.4: the sum of the best scores of the slots no better than this one over the
    sum of all slots' best scores; ``all_bs``: (best score, number of such slots)."""
    groups = list(all_bs)
    if any(b == float("inf") for b, _ in groups):  # zero-time slots: only they count
        return 1.0 if bs == float("inf") else 0.0
    total = sum(b * n for b, n in groups)
    if total <= 0:
        return 1.0
    return min(1.0, sum(b * n for b, n in groups if b <= bs) / total)


def may_launch(pref: float, delay_s: float, max_delay_s: float) -> bool:
    """Algorithm 2, line 4: (1 − Pref) ≤ delay(j) / max_delay."""
    if max_delay_s <= 0:
        return True
    return 1.0 - pref <= delay_s / max_delay_s + 1e-12


# -- the scheduler ------------------------------------------------------------------------
class ProgressShareScheduler(Scheduler):
    """Algorithm 2 (§4.3.1), with §4.3.1.4's calibration phase."""

    name = "progress-share"

    def __init__(
        self, max_delay_s: float = MAX_DELAY_S, aware: bool = True, update_rates: bool = False
    ):
        if max_delay_s < 0:
            raise ValueError(f"progress-share.max_delay_s: must be >= 0, got {max_delay_s}")
        self.max_delay_s = max_delay_s
        self.aware = aware
        self.update_rates = update_rates
        # plain ids and numbers only: the state is deep-copied with environment snapshots
        self._since: dict[int, float] = {}  # job id -> when it was first skipped
        self._cr: dict[int, dict[str, float]] = {}  # job id -> frozen CR per host type
        self.n_calibration = 0  # calibration tasks launched without the Pref test
        self.n_skipped = 0  # jobs passed over by Algorithm 2's line 4

    def reset(self, seed: int | None) -> None:
        self._since.clear()
        self._cr.clear()
        self.n_calibration = self.n_skipped = 0

    def calibrated_rates(self, job_id: int) -> dict[str, float] | None:
        """The CR per host type the job's calibration fixed (None before it ended)."""
        cr = self._cr.get(job_id)
        return None if cr is None else dict(cr)

    # -- computing rates -------------------------------------------------------------
    @staticmethod
    def _slots(view: ClusterView, job: Job) -> dict[str, int]:
        """Map slots per host type of the alive workers the job may run on (S)."""
        out: dict[str, int] = {}
        for v in view.topology.workers:
            if v.alive and v.map_slots and view.pool_ok(job, v):
                t = v.host.type.name
                out[t] = out.get(t, 0) + v.map_slots
        return out

    def rates(self, view: ClusterView, job: Job, types: Iterable[str]) -> dict[str, float] | None:
        """CR per host type (MB/s), None before any map of the job finished."""
        if not self.aware:
            st = view.job_stats(job, MAP)
            if st is None or st["mean_mb"] <= 0:
                return None
            return dict.fromkeys(types, st["mean_mb"] / st["mean_s"])
        frozen = self._cr.get(job.id)
        if frozen is not None and all(t in frozen for t in types):
            return frozen
        measured = {t: r for t, r in view.rate_by_host_type(job).items() if r > 0}
        if not measured:
            return None
        types = list(types)
        if not self.update_rates and all(t in measured for t in types):
            self._cr[job.id] = measured  # calibration done: the job enters the normal phase
            return measured
        mean = sum(measured.values()) / len(measured)
        return {t: measured.get(t, mean) for t in types}

    def share(self, view: ClusterView, job: Job, slots: dict[str, int], cr) -> float:
        """Eq. 4.1 for ``job`` now (slot share while nothing is measured)."""
        running: dict[str, int] = {}
        for a in view.running_attempts(job):
            if a.task.kind == MAP:
                t = a.vm.host.type.name
                running[t] = running.get(t, 0) + 1
        crs = cr if cr is not None else dict.fromkeys(slots, 1.0)
        crs = {**dict.fromkeys(running, 0.0), **crs}  # a type no longer in S adds nothing
        return progress_share(running, slots, crs)

    def _calibrating_here(self, view: ClusterView, job: Job, vm) -> bool:
        """Has the job no map running or finished on this slot's host type yet?"""
        if not self.aware:
            return False
        t = vm.host.type.name
        frozen = self._cr.get(job.id)
        if (frozen is not None and t in frozen) or t in view.rate_by_host_type(job):
            return False
        return not any(
            a.task.kind == MAP and a.vm.host.type.name == t for a in view.running_attempts(job)
        )

    # -- eqs. 4.2-4.4 for the block the slot would get ---------------------------------
    def pref(self, view: ClusterView, job: Job, task, vm, cr) -> float:
        """Pref_{j,b}(s) of the asking slot for the job's chosen block."""
        mb = task.input_mb
        if mb <= 0 or (cr is None and task.block is None):
            return 1.0
        replicas = task.block.replicas if task.block is not None else []
        groups: list[tuple[float, int]] = []
        mine = 0.0
        for v in view.topology.workers:
            if not (v.alive and v.map_slots and view.pool_ok(job, v)):
                continue
            # nothing measured yet: the time to read the block from the slot's own disk
            tp = mb / (cr[v.host.type.name] if cr is not None else v.host.disk.capacity)
            tr = min((self._read_s(view, r, v, mb) for r in replicas), default=0.0)
            bs = best_score([tr + tp])
            groups.append((bs, v.map_slots))
            if v is vm:
                mine = bs
        return preference(mine, groups)

    @staticmethod
    def _read_s(view: ClusterView, replica, vm, mb: float) -> float:
        """Tr(s, r): 0 from the slot's own VM, else MB over a new flow's MB/s."""
        if replica is vm:
            return 0.0
        return mb / max(view.path_bandwidth(replica, vm), 1e-9)

    # -- Algorithm 2 ---------------------------------------------------------------------
    def decide(self, ctx: DecisionContext) -> Decision:
        if ctx.slot_kind != MAP:
            return first_reduce(ctx, fair_order(ctx))
        view, vm, now = ctx.view, ctx.vm, ctx.now
        cands = []
        for job in ctx.jobs:
            if not ctx.can_launch(job, MAP):
                continue
            slots = self._slots(view, job)
            cr = self.rates(view, job, slots)
            cands.append((self.share(view, job, slots, cr) / job.weight, job, cr))
        cands.sort(key=lambda c: c[0])  # stable: ties to the oldest job
        for _, job, cr in cands:
            best = ctx.best_map(job)
            if best is None:
                continue
            if self._calibrating_here(view, job, vm):
                self.n_calibration += 1
                return self._launch(job)
            since = self._since.get(job.id)
            delay = 0.0 if since is None else now - since
            pref = self.pref(view, job, best[0], vm, cr)
            if may_launch(pref, delay, self.max_delay_s):
                if pref >= 1.0:  # its most preferred slot: the wait starts again
                    self._since.pop(job.id, None)
                return launch_map(job.id)
            self.n_skipped += 1
            self._since.setdefault(job.id, now)
        return DECLINE

    def _launch(self, job: Job) -> Decision:
        self._since.pop(job.id, None)
        return launch_map(job.id)


class LeeFairScheduler(DelayScheduler):
    """Algorithm 1 with delay scheduling's "good enough" test at the thesis' waits."""

    name = "lee-fair"

    def __init__(self, node_wait_s: float = LEE_NODE_WAIT_S, rack_wait_s: float = LEE_RACK_WAIT_S):
        # Algorithm 1 decides every slot itself; the thesis' simulator has no speculation
        super().__init__(node_wait_s, rack_wait_s, speculation=False)
