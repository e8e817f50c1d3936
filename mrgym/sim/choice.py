"""Task choice: which pending map of a job a free slot gets (``execution.task_choice``),
whether a job can launch on a VM, and which running task a backup copy targets.

Pure queries over the job tracker's indices; the tracker launches what they pick.
"""

from __future__ import annotations

import math

import simpy

from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER, Hdfs
from mrgym.sim.jobs import MAP, PENDING, REDUCE, RUNNING, Job, Task
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import VM


class TaskChoice:
    """Hadoop's (or a variant's) choice of a job's task for a slot."""

    def __init__(self, params: ModelParams, hdfs: Hdfs, env: simpy.Environment):
        self.params = params
        self.hdfs = hdfs
        self.env = env

    def can_launch(self, job: Job, kind: str, vm: VM) -> bool:
        if job.allowed_pools is not None and not self.pool_ok(job, vm):
            return False
        if kind == MAP:
            return job.n_pending_maps > 0
        if kind == REDUCE:
            return job.ready and job.n_pending_reduces > 0
        return False

    def pool_ok(self, job: Job, vm: VM) -> bool:
        pools = job.allowed_pools
        h = vm.host
        return (
            h.pool in pools
            or ("native" in pools and not h.virtualized)
            or ("virtual" in pools and h.virtualized)
        )

    def best_map(self, job: Job, vm: VM, pick: bool = True) -> tuple[Task, int | None] | None:
        """The pending map of ``job`` a free slot of ``vm`` gets, and its locality level.

        ``execution.task_choice`` (ModelParams) says how: "hadoop" takes the first pending
        node-local task, else the first rack-local one (a co-hosted block is rack-local to
        Hadoop, which does not know VMs), else the first of any; "nodegroup" puts the
        server level between node and rack; "lookahead" is nodegroup's order picking,
        among the first few of a level, the block with the fewest replicas on other idle
        VMs.  Without rack awareness (``Hdfs.rack_aware``) every node is in the map's rack:
        a map that is not node- (or server-) local is the first of any, and its level is at
        most RACK, as Hadoop sees it.  ``pick=False`` only finds the level (the look-ahead
        never changes it)."""
        if job.n_pending_maps == 0:
            return None
        host = vm.host
        rack = host.rack
        choice = self.params.task_choice
        node = (job.pending_by_vm.get(vm.id), NODE, lambda t: vm in t.block.replicas)
        server = (
            job.pending_by_host.get(host.id),
            SERVER,
            lambda t: any(r.host is host for r in t.block.replicas),
        )
        in_rack = (
            job.pending_by_rack.get(rack.id),
            RACK,
            lambda t: any(r.host.rack is rack for r in t.block.replicas),
        )
        anywhere = (job.pending_maps, OFF_RACK, lambda t: True)
        if not self.hdfs.rack_aware:  # /default-rack: every node is in the map's rack
            levels = (node, anywhere) if choice == "hadoop" else (node, server, anywhere)
        elif choice == "hadoop":
            levels = (node, in_rack, anywhere)
        else:
            levels = (node, server, in_rack, anywhere)
        for lst, level, ok in levels:
            if not lst:
                continue
            while lst and not (lst[-1].state == PENDING and ok(lst[-1])):
                lst.pop()
            if not lst:
                continue
            lookahead = choice == "lookahead" and pick
            best = self._least_contended(lst, ok, vm) if lookahead else lst[-1]
            if best.block is None:
                return best, None
            if level >= RACK:  # the task's own level: a rack (or any) pick may be closer
                level = self.hdfs.locality(best.block, vm)
                if not self.hdfs.rack_aware:  # Hadoop cannot tell rack from off-rack
                    level = min(level, RACK)
            return best, level
        return None  # pragma: no cover - n_pending_maps said otherwise

    def _least_contended(self, lst: list[Task], ok, vm: VM, window: int = 8) -> Task:
        first = lst[-1]
        if first.block is None or len(lst) == 1:
            return first
        best, best_n = None, 1 << 30
        seen = 0
        for i in range(len(lst) - 1, -1, -1):
            t = lst[i]
            if t.state != PENDING or not ok(t):
                continue
            n = 0
            for r in t.block.replicas:
                if r is not vm and r.free_map > 0 and r.alive:
                    n += 1
            if n < best_n:
                best, best_n = t, n
                if n == 0:
                    break
            seen += 1
            if seen >= window:
                break
        return best

    def has_speculation_target(self, job: Job, kind: str, vm: VM) -> bool:
        """Cheap check: some running ``kind`` task of the job could get a backup on ``vm``."""
        return any(len(t.running) == 1 and t.running[0].vm is not vm for t in job.running_of[kind])

    def speculation_target(self, job: Job, kind: str, vm: VM) -> Task | None:
        return self.speculation_target_at(job, kind, vm, None)

    def speculation_target_at(self, job: Job, kind: str, vm: VM, index: int | None) -> Task | None:
        """The running task of ``kind`` with the longest estimated time left that has no
        backup copy yet and does not already run on ``vm``."""
        now = self.env.now
        if index is not None:
            t = (job.maps if kind == MAP else job.reduces)[index]
            ok = t.state == RUNNING and len(t.running) == 1 and t.running[0].vm is not vm
            return t if ok else None
        best, best_left = None, -1.0
        for t in job.running_of[kind]:
            if len(t.running) != 1:
                continue
            a = t.running[0]
            if a.vm is vm:
                continue
            elapsed = now - a.start_s
            p = a.progress(now)
            left = math.inf if p <= 0 else elapsed * (1.0 - p) / p
            if left > best_left:
                best, best_left = t, left
        return best
