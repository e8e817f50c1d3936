"""TaskTracker heartbeats: one dispatcher over every VM's heartbeat grid, and the serving
of a heartbeat's free slots, slot by slot, by whoever decides.

Heartbeats follow each VM's fixed grid (``hb_offset + k * heartbeat_s``) plus an
out-of-band heartbeat when a task finishes.  One dispatcher walks the grid in time order
over the VMs that could be given a task; a VM with no free slot, or nothing it could run,
is parked until a slot frees or work appears: the decisions are exactly those of an
always-beating cluster, without the idle events.  A due heartbeat is queued and served
between SimPy segments (``Simulation.advance``): :meth:`Dispatcher.serve` lets a
scheduler answer every slot (``run_sim``), and the environment answers one
:class:`Heartbeat` slot per step — the same path, so both make identical decisions.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import simpy

from mrgym.sim.jobs import MAP, REDUCE, Attempt
from mrgym.sim.part import Part
from mrgym.sim.scheduler import Decision, DecisionContext
from mrgym.sim.topology import VM

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class Heartbeat:
    """One VM's heartbeat being served: its free slots one at a time, maps first, then
    reduces (Hadoop 1); a declined kind is not offered again in this heartbeat."""

    __slots__ = ("disp", "vm", "declined", "kind")

    def __init__(self, disp: Dispatcher, vm: VM):
        self.disp = disp
        self.vm = vm
        self.declined: set[str] = set()
        self.kind: str | None = None

    def next_slot(self) -> str | None:
        """The kind of the next free slot that needs a decision (None: heartbeat over)."""
        self.kind = self.disp.next_slot(self.vm, self.declined)
        return self.kind

    def answer(self, d: Decision) -> Attempt | None:
        """Carry out the decision for the current slot; the launched attempt, if any."""
        disp = self.disp
        disp.n_decisions += 1
        if d.kind is None:
            self.declined.add(self.kind)
            return None
        return disp.tracker.apply(self.vm, d, self.kind)


class Dispatcher(Part):
    """The heartbeat heap, the parked VMs and the queue of due heartbeats."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self._beats: list[tuple[float, int]] = []
        self._in_heap: set[int] = set()
        self._parked: dict[int, VM] = {}
        self._disp_ev: simpy.Event | None = None
        self._disp_target = math.inf
        self._hb_queue: deque[VM] = deque()
        self._queued: set[int] = set()
        self.n_heartbeats = 0
        self.n_decisions = 0

    def bind(self, tracker) -> None:
        self.tracker = tracker

    def draw_offsets(self, streams) -> None:
        """Each TaskTracker's heartbeat phase, at reset, from the VM's own stream."""
        for vm in self.topo.workers:
            vm.hb_offset = float(streams.keyed("heartbeat", vm.id).uniform(0.0, self.hb))

    def start(self) -> None:
        """Every worker's first heartbeat, and the dispatcher's process."""
        for vm in self.topo.workers:
            self.schedule_beat(vm, vm.hb_offset)
        self.env.process(self.dispatcher())

    def due(self) -> VM | None:
        """The next queued heartbeat's VM, if any."""
        if not self._hb_queue:
            return None
        vm = self._hb_queue.popleft()
        self._queued.discard(vm.id)
        self.n_heartbeats += 1
        return vm

    def open(self, vm: VM) -> Heartbeat:
        return Heartbeat(self, vm)

    def serve(self, vm: VM, decide: Callable[[DecisionContext], Decision]) -> None:
        """Let ``decide`` answer every free slot of ``vm``'s heartbeat."""
        beat = Heartbeat(self, vm)
        context = self.sim.context
        while (kind := beat.next_slot()) is not None:
            beat.answer(decide(context(vm, kind)))

    def request_heartbeat(self, vm: VM) -> None:
        if vm.id not in self._queued:
            self._queued.add(vm.id)
            self._hb_queue.append(vm)
            self.sim.stop_segment()

    def next_slot(self, vm: VM, declined: set[str]) -> str | None:
        """The kind of the heartbeat's next free slot that could take work (maps first,
        then reduces, as Hadoop 1 assigns them), or None when the heartbeat is over."""
        if not vm.alive or vm.paused or vm.host.evicting:
            return None
        spec = self.scheduler.speculates and self.tracker.n_running > 0
        if MAP not in declined and vm.free_map > 0 and (self.tracker.n_pending_maps > 0 or spec):
            return MAP
        if (
            REDUCE not in declined
            and vm.free_reduce > 0
            and (self.tracker.n_ready_reduces > 0 or spec)
        ):
            return REDUCE
        return None

    def has_work(self, vm: VM) -> bool:
        if vm.free_map > 0 and self.tracker.n_pending_maps > 0:
            return True
        if vm.free_reduce > 0 and self.tracker.n_ready_reduces > 0:
            return True
        return (
            self.scheduler.speculates
            and self.tracker.n_running > 0
            and (vm.free_map + vm.free_reduce) > 0
        )

    def needs_beat(self, vm: VM) -> bool:
        return vm.alive and not vm.paused and not vm.host.evicting and self.has_work(vm)

    def _next_grid(self, vm: VM, after: float) -> float:
        """The VM's first periodic heartbeat at or after ``after``."""
        hb = self.hb
        k = math.ceil((after - vm.hb_offset) / hb - 1e-9)
        return vm.hb_offset + max(k, 0) * hb

    def schedule_beat(self, vm: VM, t: float | None = None) -> None:
        """Put a VM with something to do on the heartbeat heap (once)."""
        if vm.id in self._in_heap or not vm.is_worker:
            return
        if not self.needs_beat(vm):
            self._parked[vm.id] = vm
            return
        self._parked.pop(vm.id, None)
        if t is None:
            t = self._next_grid(vm, self.env.now)
        heapq.heappush(self._beats, (t, vm.id))
        self._in_heap.add(vm.id)
        if t < self._disp_target:
            self._poke()

    def _poke(self) -> None:
        ev = self._disp_ev
        if ev is not None and not ev.triggered:
            ev.succeed()

    def dispatcher(self):
        """Every TaskTracker's periodic heartbeat, in time order, from one heap.

        Only VMs that could be given a task are on the heap; a VM without a free slot, or
        with nothing it could run, is parked (its heartbeats would change nothing) and
        comes back when a slot frees or work appears.  The decisions are those of an
        always-beating cluster, without its idle events."""
        env = self.env
        heap = self._beats
        vms = self.topo.vms
        hb = self.hb
        tracker = self.tracker
        while True:
            if not heap:
                yield self._wait(None)
                continue
            if not (
                tracker.n_pending_maps > 0
                or tracker.n_ready_reduces > 0
                or (self.scheduler.speculates and tracker.n_running > 0)
            ):
                # No VM has work (has_work is False for all): the loop below would pop
                # every entry in turn and park the live VMs; do it at once.
                self._park_all()
                continue
            t, vid = heap[0]
            vm = vms[vid]
            if not self.needs_beat(vm):
                heapq.heappop(heap)
                self._in_heap.discard(vid)
                if vm.alive:
                    self._parked[vid] = vm
                continue
            now = env.now
            if t > now + 1e-9:
                yield self._wait(t - now)
                continue  # re-examine: a poke may have put an earlier beat on top
            heapq.heapreplace(heap, (t + hb, vid))  # parked lazily if idle by then
            self.request_heartbeat(vm)

    def _park_all(self) -> None:
        """Empty the heap, parking its live VMs (as popping each idle entry would)."""
        vms = self.topo.vms
        parked = self._parked
        for _t, vid in self._beats:
            vm = vms[vid]
            if vm.alive:
                parked[vid] = vm
        self._beats.clear()
        self._in_heap.clear()

    def _wait(self, dt: float | None) -> simpy.Event:
        ev = self.env.event()
        self._disp_ev = ev
        self._disp_target = math.inf if dt is None else self.env.now + dt
        if dt is not None:
            self.env.timeout(dt).callbacks.append(lambda _e: None if ev.triggered else ev.succeed())
        return ev

    def wake_all(self) -> None:
        """New work appeared: parked VMs that can take some of it go back on the heap.

        Equivalent to ``schedule_beat`` on each parked VM that needs a beat, batched: the
        heap's keys ``(t, vm id)`` are unique, so the order of pops does not depend on the
        order of pushes, and one heapify replaces thousands of pushes."""
        parked = self._parked
        if not parked:
            return
        tr = self.tracker
        pm = tr.n_pending_maps > 0
        rr = tr.n_ready_reduces > 0
        spec = self.scheduler.speculates and tr.n_running > 0
        if not (pm or rr or spec):
            return  # has_work is False for every VM
        hb = self.hb
        now = self.env.now
        ceil = math.ceil
        in_heap = self._in_heap
        new: list[tuple[float, int]] = []
        for vid, vm in parked.items():
            # schedule_beat's checks and needs_beat(vm), inlined
            if vid in in_heap or not vm.alive or vm.paused or vm.host.evicting:
                continue
            fm, fr = vm.free_map, vm.free_reduce
            if not ((fm > 0 and pm) or (fr > 0 and rr) or (spec and fm + fr > 0)):
                continue
            # _next_grid(vm, now), inlined
            k = ceil((now - vm.hb_offset) / hb - 1e-9)
            new.append((vm.hb_offset + max(k, 0) * hb, vid))
            in_heap.add(vid)
        if not new:
            return
        for _t, vid in new:
            del parked[vid]
        heap = self._beats
        if len(new) > 8:
            heap.extend(new)
            heapq.heapify(heap)
        else:
            for e in new:
                heapq.heappush(heap, e)
        if min(new)[0] < self._disp_target:
            self._poke()
