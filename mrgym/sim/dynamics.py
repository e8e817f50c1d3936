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
from mrgym.sim.jobs import DONE, MAP, RUNNING
from mrgym.sim.migration import live_migrate
from mrgym.sim.part import Part
from mrgym.sim.scheduler import (
    Balloon,
    Commission,
    Decommission,
    Kill,
    Migrate,
    Pause,
    Resume,
    Throttle,
)
from mrgym.sim.shuffle import output_lost
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
        # Lee ch. 4: hosts switched off (standby or decommissioned), starts per host (a spot
        # or drain process of an earlier start quits), draining hosts, spot-lifetime streams
        self.off: set[int] = set()
        self.starts: dict[int, int] = {}
        self._draining: set[int] = set()
        self._spot_rng: dict[int, np.random.Generator] = {}
        self.hosts_commissioned = 0
        self.hosts_decommissioned = 0

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
        streams = self.rng
        if dyn.spot is not None and dyn.spot.hazard_per_hour > 0:
            for h in self.topo.hosts:
                if h.is_spot:
                    gen = streams.keyed("spot", h.id)
                    self.evict_at[h.id] = float(gen.exponential(3600.0 / dyn.spot.hazard_per_hour))
        if dyn.failures is not None and dyn.failures.mtbf_hours:
            # One stream per host, spawned now: its failure times are drawn lazily (an
            # unbounded horizon cannot hang the reset) yet do not depend on the policy.
            for h in self.topo.hosts:
                self.fail_rng[h.id] = streams.keyed("failures", h.id)
        for vm, spec in self.topo.interactive_specs:
            app = InteractiveApp(vm, spec, streams.keyed("interactive", vm.id))
            app.set_load(app.load_at(0.0, 1.0))
            vm.host.cpu.interactive.append(app)
            self.apps.append(app)
            self.app_of[vm.id] = app
        for h in self.topo.hosts:  # initial shares (interactive demand, utilization)
            h.cpu.recompute(0.0)
        self._draw_standby()

    def spot(self, host: Host, t_evict: float):
        notice = self.scenario.dynamics.spot.notice_s
        env = self.env
        start = self.starts.get(host.id, 0)  # a decommission ends this instance's lifetime
        if t_evict - notice > 0:
            yield env.timeout(t_evict - notice)
        if self.starts.get(host.id, 0) != start or host.id in self.off:
            return
        host.evicting = True
        yield env.timeout(min(notice, t_evict))
        if self.starts.get(host.id, 0) != start or host.id in self.off:
            return
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
        host.evicting = False
        self._halt(host, outcome)
        self.hdfs.invalidate()
        moved = []
        for vm in host.vms:
            if vm.datanode:
                moved += self.hdfs.rereplicate(vm, self.rng.stream("rereplicate"), durable=durable)
        self.tracker.reindex(moved)
        self.beats.wake_all()

    def _halt(self, host: Host, outcome: str) -> None:
        """Stop a live host now (a failure, an eviction, a release): its attempts end with
        ``outcome`` and the map outputs it held for unfinished jobs are lost and re-run."""
        now = self.env.now
        host.cpu.account(now)
        host.alive = False
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
                        output_lost(job)
                        t = job.maps[o.map_index]
                        if t.state == DONE:
                            for a in t.attempts:
                                if a.outcome == "success":
                                    a.outcome = "lost_output"
                            job.maps_done -= 1
                            t.state = RUNNING  # so requeue accepts it
                            self.tracker.requeue(t)

    def end_soon(self):
        yield self.env.timeout(0)  # after the eviction's own bookkeeping
        if self.tracker.active or not self.tracker.all_arrived():
            self.sim.end(truncated=True)

    def repair(self, host: Host) -> None:
        if host.gone or host.alive or host.id in self.off:  # a switched-off host stays off
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
            vm.paused = False  # a rebooted domain: no pause or cap survives it
            vm.cpu_cap = None
            vm.free_map = vm.map_slots
            vm.free_reduce = vm.reduce_slots
            if vm.datanode:
                moved += self.hdfs.restore(vm, self.rng.stream("rereplicate"))
        self.tracker.reindex(moved)
        for vm in host.vms:
            self.beats.schedule_beat(vm)
        self.beats.wake_all()

    # -- Lee ch. 4: hosts started and released at run time (the cloud driver) -------------
    def _host(self, action: Commission | Decommission) -> Host:
        n = len(self.topo.hosts)
        if not isinstance(action.host, int) or not 0 <= action.host < n:
            raise InvalidDecision(f"{action!r}: host must be an index in 0..{n - 1}")
        return self.topo.hosts[action.host]

    def _draw_standby(self) -> None:
        """Hosts of ``standby`` groups start off (unbilled, no heartbeats); a spot-lifetime
        stream per spot host, drawn after every other reset draw (nothing else changes)."""
        k = 0
        for g in self.scenario.cluster.hosts:
            for h in self.topo.hosts[k : k + g.count]:
                if g.standby:
                    self.off.add(h.id)
                    self.evict_at.pop(h.id, None)  # its lifetime starts when it does
                    h.alive = False
                    for vm in h.vms:
                        vm.alive = False
                    self.sim.monitor.sessions[h.id].clear()
            k += g.count
        spot = self.scenario.dynamics.spot
        if spot is not None and spot.hazard_per_hour > 0:
            for h in self.topo.hosts:
                if h.is_spot:  # its lifetimes after a commission: a second stream of its own
                    self._spot_rng[h.id] = self.rng.keyed("spot", h.id, 1)

    def _commission(self, action: Commission) -> None:
        """Start a switched-off host now: empty slots, a new billing session, a fresh spot
        lifetime; a draining host stays on (its drain is called off); a host that is on (or
        evicted for good) is left as it is."""
        host = self._host(action)
        if host.id in self._draining:  # still on: the drain is called off
            self._draining.discard(host.id)
            t_evict = self.evict_at.get(host.id)
            notice = self.scenario.dynamics.spot.notice_s if t_evict is not None else 0.0
            host.evicting = t_evict is not None and t_evict - notice <= self.env.now
            return
        if host.id not in self.off or host.gone:
            return
        now = self.env.now
        self.off.discard(host.id)
        self.starts[host.id] = self.starts.get(host.id, 0) + 1
        self.hosts_commissioned += 1
        self.sim.monitor.sessions[host.id].append([now, None])
        host.alive = True
        host.evicting = False
        host.up_since = now
        host.cpu.t_energy = now
        for vm in host.vms:
            vm.alive = True
            vm.paused = False  # a new instance: no pause or cap of an earlier one
            vm.cpu_cap = None
            vm.free_map = vm.map_slots
            vm.free_reduce = vm.reduce_slots
        gen = self._spot_rng.get(host.id)
        if gen is not None:  # memoryless: a new instance draws a new lifetime
            life = float(gen.exponential(3600.0 / self.scenario.dynamics.spot.hazard_per_hour))
            self.evict_at[host.id] = now + life
            self.env.process(self.spot(host, life))
        for vm in host.vms:
            self.beats.schedule_beat(vm)
        self.beats.wake_all()

    def _decommission(self, action: Decommission) -> None:
        host = self._host(action)
        if host.id in self.off or host.gone:
            return
        if any(vm.datanode for vm in host.vms):
            # releasing a DataNode needs HDFS decommissioning (its blocks copied first):
            # Lee §4.2 only ever releases data-less accelerator nodes
            raise InvalidDecision(
                f"Decommission({host.id}): host {host.name} holds HDFS blocks (a DataNode); "
                "only data-less hosts can be released"
            )
        if not action.drain:
            self._switch_off(host)
        elif host.id not in self._draining:
            self._draining.add(host.id)
            host.evicting = True  # no new tasks, as in a spot notice
            self.env.process(self._drain(host, self.starts.get(host.id, 0)))

    def _drain(self, host: Host, start: int):
        """Release ``host`` once it runs no attempt and no active job needs its outputs."""
        while True:
            if (
                self.starts.get(host.id, 0) != start
                or host.id not in self._draining  # called off by a Commission
                or host.id in self.off
                or host.gone
            ):
                self._draining.discard(host.id)
                return
            if not any(vm.running for vm in host.vms) and not self._outputs_needed(host):
                break
            yield self.env.timeout(self.hb)
        self._switch_off(host)

    def _outputs_needed(self, host: Host) -> bool:
        for job in self.tracker.active_list:
            if job.reduces_done < len(job.reduces) and any(
                o.vm.host is host and not o.lost for o in job.outputs
            ):
                return True
        return False

    def _switch_off(self, host: Host) -> None:
        """Terminate the instance: kill its attempts and lose the map outputs still needed
        (re-executed as after a failure), close its billing session.  It holds no HDFS
        blocks, so nothing is re-replicated."""
        now = self.env.now
        self._draining.discard(host.id)
        self.off.add(host.id)
        self.starts[host.id] = self.starts.get(host.id, 0) + 1
        self.hosts_decommissioned += 1
        self.sim.monitor.sessions[host.id][-1][1] = now
        host.evicting = False
        if not host.alive:  # down for repair: already without tasks or outputs
            return
        self._halt(host, "decommissioned")
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

    def _balloon(self, action: Balloon) -> None:
        vm = self.topo.vms[action.vm]
        if vm.memory_gb > 0:  # the guest cache's budget reads it at the next write
            vm.balloon_gb = max(-vm.memory_gb, min(vm.memory_gb, action.balloon_gb))

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
        """Live-migrate a worker VM (Xen pre-copy, then stop-and-copy): migration.py."""
        return live_migrate(self, vm, target, downtime)


_CONTROL = {
    Pause: Dynamics._pause,
    Resume: Dynamics._resume,
    Throttle: Dynamics._throttle,
    Balloon: Dynamics._balloon,
    Kill: Dynamics._kill,
    Migrate: Dynamics._migrate_action,
    Commission: Dynamics._commission,
    Decommission: Dynamics._decommission,
}
