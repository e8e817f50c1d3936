"""Action codec: K job slots x (map, reduce, speculate) + decline, and the legality mask."""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import Job
from mrgym.sim.scheduler import DECLINE, MAP, REDUCE, SPECULATE, Decision

KINDS = (MAP, REDUCE, SPECULATE)
QUEUE_ORDERS = ("arrival", "deficit", "remaining")


class ActionCodec:
    def __init__(
        self, job_slots: int, queue_order: str, speculation: bool, work_conserving: bool = False
    ):
        if job_slots < 1:
            raise ValueError(f"job_slots: must be >= 1, got {job_slots}")
        if queue_order not in QUEUE_ORDERS:
            raise ValueError(f"queue_order: must be one of {QUEUE_ORDERS}, got {queue_order!r}")
        self.k = job_slots
        self.queue_order = queue_order
        self.speculation = speculation
        self.work_conserving = work_conserving
        self.n = 3 * job_slots + 1
        self.decline = 3 * job_slots

    def slots(self, jobs: list[Job], slot_kind: str) -> list[Job]:
        """The jobs behind the K slots: arrival order, furthest below fair share first, or
        fewest remaining tasks first (pending + running, as shortest-remaining-first)."""
        if self.queue_order == "deficit":
            attr = "running_maps" if slot_kind == MAP else "running_reduces"
            jobs = sorted(jobs, key=lambda j: getattr(j, attr) / j.weight)
        elif self.queue_order == "remaining":
            jobs = sorted(
                jobs, key=lambda j: len(j.maps) - j.maps_done + len(j.reduces) - j.reduces_done
            )
        return jobs[: self.k]

    def mask(self, sim, vm, slot_kind: str, slots: list[Job]) -> np.ndarray:
        m = np.zeros(self.n, dtype=bool)
        m[self.decline] = True
        if vm is None:
            return m
        for i, job in enumerate(slots):
            if job.allowed_pools is not None and not sim._pool_ok(job, vm):
                continue
            if slot_kind == MAP:
                m[3 * i] = job.n_pending_maps > 0
            else:
                m[3 * i + 1] = job.ready and job.n_pending_reduces > 0
            if self.speculation:
                m[3 * i + 2] = sim.has_speculation_target(job, slot_kind, vm)
        if self.work_conserving and m[: self.decline].any():
            m[self.decline] = False  # a launch is possible: no idling
        return m

    def decode(self, action: int, slots: list[Job]) -> Decision:
        if action == self.decline:
            return DECLINE
        i, k = divmod(action, 3)
        return Decision(KINDS[k], slots[i].id)

    def encode(self, d: Decision, slots: list[Job]) -> int:
        if d.kind is None:
            return self.decline
        for i, job in enumerate(slots):
            if job.id == d.job:
                return 3 * i + KINDS.index(d.kind)
        raise ValueError(
            f"decision {d} names job {d.job}, which is not among the {self.k} job slots "
            f"(queue_order={self.queue_order!r}); raise job_slots to express it"
        )

    def describe(self, action: int) -> str:
        if action == self.decline:
            return "decline"
        i, k = divmod(action, 3)
        return f"{KINDS[k]} of job slot {i}"
