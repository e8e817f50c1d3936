"""Action codec: K job slots x (map, reduce, speculate) + decline (+ W waits), and the mask.

The K slots hold, in queue order, the first K active jobs that can launch something on the
requesting VM for the slot's kind: a pending map (map slot), a ready pending reduce (reduce
slot) or, with speculation on, a backup copy of a running task of that kind; jobs whose
pools exclude the VM are skipped.  A job with nothing to launch here would only waste a
slot, and a policy's choice (which is always a job that can launch) is then expressible
whenever it is among the first K such jobs.
"""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import Job
from mrgym.sim.scheduler import DECLINE, MAP, REDUCE, SPECULATE, Decision

# What each job slot's actions launch, in order: slot i's actions are 3i, 3i+1, 3i+2.
KINDS = (MAP, REDUCE, SPECULATE)
PER_SLOT = len(KINDS)
QUEUE_ORDERS = ("arrival", "deficit", "remaining")
# a wait holds a VM's slot kind for up to this many more asks (heartbeats): longer fixed
# waits cost JCT when forced (CHANGELOG, Learning II), and each wait is one more output
MAX_WAIT_ACTIONS = 16
# 21 observation features per slot: 1 024 slots is a 21 527-float observation, beyond which
# memory and step time grow with nothing to gain (ila2400 has 100 jobs in all)
MAX_JOB_SLOTS = 1024


def action_of(slot: int, kind: int) -> int:
    """The action for job slot ``slot`` and kind index ``kind`` (``KINDS``): the one
    definition of MRCluster-v0's action layout, ``3 * slot + kind``."""
    return PER_SLOT * slot + kind


def split_action(action: int) -> tuple[int, int]:
    """(job slot, kind index) of a launch action (the inverse of :func:`action_of`)."""
    return divmod(action, PER_SLOT)


def _any_running(jobs: list[Job]) -> bool:
    return any(j.running_maps or j.running_reduces for j in jobs)


class ActionCodec:
    def __init__(
        self,
        job_slots: int,
        queue_order: str,
        speculation: bool,
        work_conserving: bool | str = False,
        wait_actions: int = 0,
    ):
        if isinstance(job_slots, bool) or not isinstance(job_slots, (int, np.integer)):
            raise ValueError(f"job_slots: must be an integer >= 1, got {job_slots!r}")
        if not 1 <= job_slots <= MAX_JOB_SLOTS:
            raise ValueError(f"job_slots: must be in [1, {MAX_JOB_SLOTS}], got {job_slots}")
        if queue_order not in QUEUE_ORDERS:
            raise ValueError(f"queue_order: must be one of {QUEUE_ORDERS}, got {queue_order!r}")
        if not (isinstance(work_conserving, (bool, np.bool_)) or work_conserving == "cluster"):
            raise ValueError(
                f"work_conserving: must be true, false or 'cluster', got {work_conserving!r}"
            )
        if isinstance(wait_actions, bool) or not isinstance(wait_actions, (int, np.integer)):
            raise ValueError(f"wait_actions: must be an integer >= 0, got {wait_actions!r}")
        if not 0 <= wait_actions <= MAX_WAIT_ACTIONS:
            raise ValueError(
                f"wait_actions: must be in [0, {MAX_WAIT_ACTIONS}], got {wait_actions}"
            )
        self.k = int(job_slots)
        self.waits = int(wait_actions)
        self.queue_order = queue_order
        self.speculation = speculation
        self.work_conserving = work_conserving
        self.decline = action_of(self.k, 0)  # after the launches: decline, then the waits
        self.n = self.decline + 1 + self.waits

    def order(self, jobs: list[Job], slot_kind: str) -> list[Job]:
        """Active jobs in queue order: arrival, furthest below weighted fair share first
        (ties: oldest, as the Fair scheduler sorts), or fewest remaining tasks first
        (pending + running, as shortest-remaining-first)."""
        if self.queue_order == "deficit":
            attr = "running_maps" if slot_kind == MAP else "running_reduces"
            return sorted(jobs, key=lambda j: getattr(j, attr) / j.weight)
        if self.queue_order == "remaining":
            return sorted(
                jobs, key=lambda j: len(j.maps) - j.maps_done + len(j.reduces) - j.reduces_done
            )
        return jobs

    def select(self, view, vm, slot_kind: str, jobs: list[Job]) -> tuple[list[Job], np.ndarray]:
        """The jobs behind the K slots for ``vm``'s free ``slot_kind`` slot and the mask.

        One pass in queue order that stops once K jobs are found; each job costs its
        counters, plus (speculation on, nothing new to launch) a scan of its running tasks.
        """
        m = np.zeros(self.n, dtype=bool)
        m[self.decline :] = True  # decline and the waits (legal together, as below)
        if vm is None:
            return [], m
        slots: list[Job] = []
        is_map = slot_kind == MAP
        spec = self.speculation
        k = self.k
        for job in self.order(jobs, slot_kind):
            if job.allowed_pools is not None and not view.pool_ok(job, vm):
                continue
            launch = job.n_pending_maps > 0 if is_map else (job.ready and job.n_pending_reduces > 0)
            backup = spec and view.has_speculation_target(job, slot_kind, vm)
            if not (launch or backup):
                continue
            i = len(slots)
            if launch:
                m[action_of(i, 0 if is_map else 1)] = True
            if backup:
                m[action_of(i, 2)] = True
            slots.append(job)
            if len(slots) == k:
                break
        # a launch is possible: no idling ("cluster": no idling of the whole cluster, so a
        # policy may hold a slot back but never wait with nothing running -- a
        # deterministic policy could otherwise decline the same state for ever)
        wc = self.work_conserving
        if slots and wc and (wc != "cluster" or not _any_running(jobs)):
            m[self.decline :] = False  # a wait is a decline that holds the next asks too
        return slots, m

    def held_asks(self, action: int) -> int:
        """How many more asks of the slot's VM and kind ``action`` declines (a wait's w)."""
        return max(0, action - self.decline)

    def decode(self, action: int, slots: list[Job]) -> Decision:
        if action >= self.decline:  # decline, or a wait (the env holds the next asks)
            return DECLINE
        i, k = split_action(action)
        return Decision(KINDS[k], slots[i].id)

    def encode(self, d: Decision, slots: list[Job]) -> int:
        """The action for ``d`` (strict: a job outside the slots raises ``ValueError``)."""
        if d.kind is None:
            return self.decline
        if d.kind not in KINDS:
            raise ValueError(f"decision {d}: unknown kind {d.kind!r}; expected one of {KINDS}")
        for i, job in enumerate(slots):
            if job.id == d.job:
                return action_of(i, KINDS.index(d.kind))
        raise ValueError(
            f"decision {d} names job {d.job}, which is not among the {self.k} job slots "
            f"(queue_order={self.queue_order!r}); raise job_slots to express it"
        )

    def closest(self, d: Decision, slots: list[Job], mask: np.ndarray) -> tuple[int, bool]:
        """The legal action nearest to ``d`` and whether it expresses ``d`` exactly (task
        picks aside): ``d``'s own action when legal, else the same kind for the first slot
        job that allows it, else the first legal launch, else decline."""
        decline = self.decline
        if d.kind is None:
            if mask[decline]:
                return decline, True
            kind = None  # work-conserving mask: the policy idles where the env may not
        elif d.kind in KINDS:
            kind = KINDS.index(d.kind)
            for i, job in enumerate(slots):
                if job.id == d.job:
                    a = action_of(i, kind)
                    if mask[a]:
                        return a, True
                    break
            for a in range(kind, decline, PER_SLOT):
                if mask[a]:
                    return a, False
        legal = np.flatnonzero(mask[:decline])
        if len(legal):
            return int(legal[0]), False
        return decline, False

    def describe(self, action: int) -> str:
        if action == self.decline:
            return "decline"
        if action > self.decline:
            return f"decline and wait {action - self.decline} more ask(s)"
        i, k = split_action(action)
        return f"{KINDS[k]} of job slot {i}"
