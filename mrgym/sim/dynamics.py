"""What happens to the cluster besides scheduling: spot evictions, host failures and
repairs, interactive load, and the scheduler's control actions (HybridMR phase II: pause,
resume, throttle, kill, migrate).

Eviction and failure times are drawn at reset (``draw``), so every policy meets the same
ones for a seed; a failure stream per host is spawned then and drawn lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mrgym.sim.interactive import InteractiveApp
from mrgym.sim.jobs import DONE, MAP, PENDING, RUNNING
from mrgym.sim.part import Part
from mrgym.sim.scheduler import Kill, Migrate, Pause, Resume, Throttle
from mrgym.sim.topology import VM, Host
from mrgym.sim.tracker import InvalidDecision

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class Dynamics(Part):
    """Spot market, failures, interactive VMs and control actions of one episode."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self.evict_at: dict[int, float] = {}
        self.fail_rng: dict[int, np.random.Generator] = {}
        self.apps: list[InteractiveApp] = []
        self.app_of: dict[int, InteractiveApp] = {}
        self.host_failures = 0  # failure events (a host may fail, be repaired, fail again)
        self.hosts_evicted = 0  # spot hosts evicted (each at most once: it never returns)
        self.outputs_lost = 0  # finished maps' outputs lost with their host
        self._migrating: set[int] = set()  # VMs in a live migration

    def bind(self, tracker, beats) -> None:
        self.tracker = tracker
        self.beats = beats

    def start(self) -> None:
        """Create the processes of evictions, failures, interactive load and control."""
        env = self.env
        for hid, t in self.evict_at.items():
            env.process(self.spot(self.topo.hosts[hid], t))
        for hid, gen in self.fail_rng.items():
            env.process(self.failures(self.topo.hosts[hid], gen))
        for app in self.apps:
            env.process(self.interactive(app))
        if self.scheduler.control_period_s:
            env.process(self.control_loop(self.scheduler.control_period_s))

    def draw(self) -> None:
        """Eviction times, failure streams and interactive load, at reset."""
        dyn = self.scenario.dynamics
        rng = self.rng.failures
        if dyn.spot is not None and dyn.spot.hazard_per_hour > 0:
            for h in self.topo.hosts:
                if h.is_spot:
                    self.evict_at[h.id] = float(rng.exponential(3600.0 / dyn.spot.hazard_per_hour))
        if dyn.failures is not None and dyn.failures.mtbf_hours:
            # One stream per host, spawned now: its failure times are drawn lazily (an
            # unbounded horizon cannot hang the reset) yet do not depend on the policy.
            for h in self.topo.hosts:
                self.fail_rng[h.id] = np.random.default_rng(rng.integers(2**63))
        for vm, spec in self.topo.interactive_specs:
            app = InteractiveApp(
                vm, spec, np.random.default_rng(self.rng.interactive.integers(2**63))
            )
            app.set_load(app.load_at(0.0, 1.0))
            vm.host.cpu.interactive.append(app)
            self.apps.append(app)
            self.app_of[vm.id] = app
        for h in self.topo.hosts:  # initial shares (interactive demand, utilization)
            h.cpu.recompute(0.0)

    def spot(self, host: Host, t_evict: float):
        notice = self.scenario.dynamics.spot.notice_s
        env = self.env
        if t_evict - notice > 0:
            yield env.timeout(t_evict - notice)
        host.evicting = True
        yield env.timeout(min(notice, t_evict))
        self.lose_host(host, "evicted")

    def failures(self, host: Host, gen: np.random.Generator):
        """A host fails after an exponential up-time (MTBF) and is repaired ``repair_s``
        later, again and again, until the episode ends or the host is evicted."""
        env = self.env
        fail = self.scenario.dynamics.failures
        mtbf = fail.mtbf_hours * 3600.0
        while True:
            yield env.timeout(float(gen.exponential(mtbf)))
            if host.gone:
                return
            self.lose_host(host, "failed")
            yield env.timeout(fail.repair_s)
            if host.gone:
                return
            self.repair(host)

    def lose_host(self, host: Host, outcome: str) -> None:
        """A host is gone (``outcome`` "failed": until repaired; "evicted": for good):
        kill its attempts, lose its map outputs and replicas."""
        if host.gone:
            return
        evicted = outcome == "evicted"
        if evicted:
            host.gone = True
            self.hosts_evicted += 1
            if all(h.gone for h in self.topo.hosts):
                # no worker can ever run again: end now rather than idle to the time cap
                self.env.process(self.end_soon())
        if not host.alive:
            # already down for repair: an eviction now only makes it permanent (its
            # up-time, tasks and outputs were accounted for when it failed)
            host.evicting = False
            for vm in host.vms:
                if vm.datanode:
                    self.hdfs.forget(vm)
            return
        if not evicted:
            self.host_failures += 1
        # a failed host's disk survives the repair unless the scenario says otherwise
        fail = self.scenario.dynamics.failures
        durable = not evicted and (fail is None or fail.keeps_disk)
        now = self.env.now
        host.cpu.account(now)
        host.alive = False
        host.evicting = False
        host.up_seconds += now - host.up_since
        self.caches[host.id].drop()
        for vm in host.vms:
            vm.alive = False
            self.beats._parked.pop(vm.id, None)
            for att in list(vm.running):
                self.tracker.kill(att, outcome)
            for job in self.tracker.active_list:
                if not job.reduces or job.reduces_done == len(job.reduces):
                    continue
                for o in job.outputs:
                    if o.vm is vm and not o.lost:
                        o.lost = True
                        self.outputs_lost += 1
                        t = job.maps[o.map_index]
                        if t.state == DONE:
                            for a in t.attempts:
                                if a.outcome == "success":
                                    a.outcome = "lost_output"
                            job.maps_done -= 1
                            t.state = RUNNING  # so _requeue accepts it
                            self.tracker.requeue(t)
        self.hdfs.invalidate()
        moved = []
        for vm in host.vms:
            if vm.datanode:
                moved += self.hdfs.rereplicate(vm, self.rng.dynamic, durable=durable)
        self.tracker.reindex(moved)
        self.beats.wake_all()

    def end_soon(self):
        yield self.env.timeout(0)  # after the eviction's own bookkeeping
        if self.tracker.active or not self.tracker.all_arrived():
            self.sim.end(truncated=True)

    def repair(self, host: Host) -> None:
        if host.gone or host.alive:
            return
        now = self.env.now
        host.alive = True
        host.up_since = now
        host.cpu.t_energy = now
        # a spot host repaired during its eviction notice still takes no new tasks
        t_evict = self.evict_at.get(host.id)
        if t_evict is not None:
            host.evicting = t_evict - self.scenario.dynamics.spot.notice_s <= now
        self.hdfs.invalidate()
        moved = []
        for vm in host.vms:
            vm.alive = True
            vm.free_map = vm.map_slots
            vm.free_reduce = vm.reduce_slots
            if vm.datanode:
                moved += self.hdfs.restore(vm, self.rng.dynamic)
        self.tracker.reindex(moved)
        for vm in host.vms:
            self.beats.schedule_beat(vm)
        self.beats.wake_all()

    def interactive(self, app: InteractiveApp):
        env = self.env
        spec = app.spec
        while True:
            yield env.timeout(spec.update_s)
            noise = float(app.rng.lognormal(0.0, spec.noise_sigma)) if spec.noise_sigma > 0 else 1.0
            app.set_load(app.load_at(env.now, noise))
            if app.vm.host.alive:
                app.vm.host.cpu.recompute(env.now)
                self.engine.kick()

    def control_loop(self, period: float):
        env = self.env
        while True:
            yield env.timeout(period)
            for action in self.scheduler.control(self.view) or ():
                self.apply_control(action)

    def apply_control(self, action: Any) -> None:
        """Carry out one control action (HybridMR phase II) through the dispatch table."""
        handler = _CONTROL.get(type(action))
        if handler is None:
            raise InvalidDecision(f"unknown control action {action!r}")
        handler(self, action)

    def _pause(self, action: Pause) -> None:
        vm = self.topo.vms[action.vm]
        if not vm.paused:
            vm.paused = True
            for att in vm.running:
                for w in ([att.work] if att.work else []) + att.works:
                    self.engine.suspend(w)

    def _resume(self, action: Resume) -> None:
        vm = self.topo.vms[action.vm]
        if vm.paused:
            vm.paused = False
            for att in vm.running:
                for w in ([att.work] if att.work else []) + att.works:
                    self.engine.resume(w)
            self.beats.schedule_beat(vm)

    def _throttle(self, action: Throttle) -> None:
        vm = self.topo.vms[action.vm]
        vm.cpu_cap = action.cpu_cap
        vm.host.cpu.recompute(self.env.now)
        self.engine.kick()

    def _kill(self, action: Kill) -> None:
        job = self.tracker.active.get(action.job)
        if job is None:
            return
        task = (job.maps if action.kind == MAP else job.reduces)[action.task]
        for a in list(task.running):
            self.tracker.kill(a, "killed")

    def _migrate_action(self, action: Migrate) -> None:
        vm = self.topo.vms[action.vm]
        if vm.id in self._migrating:  # one live migration of a VM at a time (as Xen)
            return
        self._migrating.add(vm.id)
        self.env.process(self.migrate(vm, self.topo.hosts[action.host], action.downtime_s))

    def migrate(self, vm: VM, target: Host, downtime: float):
        """Live-migrate a worker VM: paused for ``downtime``, then its running compute and
        local I/O continue on ``target``.  Its DataNode blocks move with its disk image."""
        self.apply_control(Pause(vm.id))
        yield self.env.timeout(downtime)
        self._migrating.discard(vm.id)
        if not vm.alive:
            return
        if not target.alive:  # the target failed meanwhile: the VM stays where it was
            self.apply_control(Resume(vm.id))
            return
        # every work of a paused VM is suspended (attempts start new ones suspended), so
        # none is on the old host's CPU pool or disk while it moves
        vm.host.vms.remove(vm)
        vm.host = target
        target.vms.append(vm)
        for att in vm.running:
            for w in ([att.work] if att.work else []) + att.works:
                if w.kind == "compute":
                    w.host = target
        self.topo._path_cache.clear()
        for job in self.tracker.active_list:  # host/rack locality of its replicas changed
            for t in job.maps:
                if t.state == PENDING and t.block is not None and vm in t.block.replicas:
                    self.tracker.index_map(job, t)
        self.apply_control(Resume(vm.id))


_CONTROL = {
    Pause: Dynamics._pause,
    Resume: Dynamics._resume,
    Throttle: Dynamics._throttle,
    Kill: Dynamics._kill,
    Migrate: Dynamics._migrate_action,
}
