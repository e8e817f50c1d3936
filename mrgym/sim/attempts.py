"""Task attempts as SimPy processes: a map reads its block, computes and writes its output;
a reduce shuffles map outputs, computes and writes to HDFS.

The fluid model (``execution.py``) sets every phase's rate; an attempt reports its end
to the job tracker (``succeeded`` / ``fail``); a killed attempt waits on a cancelled
work that never fires, so its process simply never resumes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import simpy

from mrgym.sim.hdfs import NODE, SERVER
from mrgym.sim.jobs import Attempt, Job, MapOutput
from mrgym.sim.part import Part
from mrgym.sim.topology import VM, Link

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class AttemptRunner(Part):
    """Runs map and reduce attempts; counts the shuffle's bytes."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self.shuffle_mb = 0.0
        self.shuffle_cross_rack_mb = 0.0

    def bind(self, tracker) -> None:
        self.tracker = tracker

    def io_factor(self, hosts, job: Job) -> float:
        if any(h.virtualized for h in hosts):
            return 1.0 / (1.0 + self.params.virt_io_overhead * job.profile.virt_sensitivity)
        return 1.0

    def cpu_factor(self, vm: VM, job: Job) -> float:
        f = 1.0
        if vm.host.virtualized:
            f /= 1.0 + self.params.virt_cpu_overhead * job.profile.virt_sensitivity
        if vm.host.type.gpus > 0:
            f *= job.profile.gpu_speedup
        return f

    def flow(
        self,
        att: Attempt,
        links: tuple[Link, ...],
        mb: float,
        job: Job,
        extra: float = 1.0,
        tag: str = "read",
    ):
        absorbed = None  # the page caches that took this write, if any
        if tag == "write":
            # a write the host's page cache can take leaves that disk to the flusher
            now = self.env.now
            kept, absorbed = [], []
            for link in links:
                h = link.host
                if h is not None and link is h.disk and self.caches[h.id].absorb(mb, now):
                    absorbed.append(self.caches[h.id])
                else:
                    kept.append(link)
            links = tuple(kept)
        hosts = []
        for link in links:
            h = link.host
            if h is not None and h not in hosts:
                hosts.append(h)
        dom0 = tuple(h for h in hosts if h.virtualized)
        w = self.engine.flow(links, mb, self.io_factor(hosts, job) * extra, dom0, tag)
        if absorbed:
            w.absorbed = tuple(absorbed)
        if att.vm.paused:  # a paused VM's attempts make no progress until it resumes
            self.engine.suspend(w)
        att.work = w
        return w

    def compute(self, att: Attempt, vm: VM, job: Job, core_s: float):
        """The attempt's compute phase: ``core_s`` reference core-seconds on ``vm``."""
        att.cpu_s = core_s
        w = self.engine.compute(vm, core_s, self.cpu_factor(vm, job))
        if vm.paused:  # a paused VM's attempts make no progress until it resumes
            self.engine.suspend(w)
        att.work = w
        return w

    def hdfs_write_path(self, vm: VM, mb: float) -> tuple[Link, ...]:
        """Pipeline over the replicas of a new output block (one flow, all links)."""
        replicas = self.hdfs.place(self.rng.dynamic, writer=vm)
        path: list[Link] = []
        prev = vm.host
        for r in replicas:
            if r.host is not prev:
                path.extend(self.topo.path(prev, r.host))
            path.append(r.host.disk)
            prev = r.host
        if not replicas:
            path.append(vm.host.disk)
        return tuple(dict.fromkeys(path))

    def run_map(self, att: Attempt):
        task, vm = att.task, att.vm
        job = task.job
        prof = job.profile
        noise = task.noise[att.number % len(task.noise)]
        if att.outcome != "running":
            return
        mb = task.input_mb
        if task.block is not None:
            src = self.hdfs.nearest_replica(task.block, vm)
            tries = 0
            while src is None:
                # No live replica: the DFS client asks the NameNode again a few times,
                # then the attempt fails (Hadoop's BlockMissingException).
                if tries >= self.params.block_acquire_failures:
                    self.tracker.fail(att, "missing_block")
                    return
                tries += 1
                yield self.env.timeout(self.params.block_retry_s)
                if att.outcome != "running":
                    return
                src = self.hdfs.nearest_replica(task.block, vm)
            level = self.hdfs.locality(task.block, vm)
            att.locality = level
            att.src = src
            att.read_mb = mb
            if level == NODE:
                links = (src.host.disk,)
                extra = 1.0
            elif level == SERVER:
                links = (src.host.disk,)
                extra = 1.0 - self.params.server_read_penalty
            else:
                links = (src.host.disk, *self.topo.path(src.host, vm.host))
                extra = 1.0
            yield self.flow(att, links, mb, job, extra).event
        att.phase = 1
        cpu = prof.map_cpu_s_per_mb * mb * noise
        yield self.compute(att, vm, job, cpu).event
        att.phase = 2
        if job.reduces:
            out = mb * prof.map_output_ratio
            yield self.flow(att, (vm.host.disk,), out, job, tag="write").event
        else:
            out = mb * prof.output_ratio
            yield self.flow(att, self.hdfs_write_path(vm, out), out, job, tag="write").event
        att.work = None
        self.tracker.succeeded(att, out)

    def run_reduce(self, att: Attempt):
        task, vm = att.task, att.vm
        job = task.job
        prof = job.profile
        env = self.env
        noise = task.noise[att.number % len(task.noise)]
        n_maps = len(job.maps)
        n_red = len(job.reduces)
        have: set[int] = set()
        att.fetched = 0
        att.n_maps = n_maps
        # The backlog (outputs not yet copied, in arrival order) is kept grouped by source
        # across rounds: a group's MB is summed again only when it grew, and a round costs
        # its new outputs, not the whole backlog.  Groups are rebuilt from the backlog, as
        # a fresh grouping would make them, when an output may have left it otherwise than
        # by a copy (one was lost, a map index came twice) or a VM moved (the keys change).
        groups: dict[tuple, list[MapOutput]] = {}
        sums: dict[tuple, float] = {}
        pos: dict[int, int] = {}  # id(output) -> its place in job.outputs
        seen: set[int] = set()  # map indices that entered the backlog
        dup = False
        epoch: tuple | None = None
        dyn, paths = self.sim.dynamics, self.topo._path_cache
        cursor = 0
        shuffled = 0.0
        my_rack = vm.host.rack
        last_round = -math.inf
        if att.outcome != "running":
            return
        while len(have) < n_maps:
            # Map-completion events reach a reduce through its TaskTracker's heartbeat, so
            # a copier learns of new outputs at most once per heartbeat period (Hadoop 1).
            wait = last_round + self.hb - env.now
            if wait > 0 and len(job.outputs) - cursor < n_maps - len(have):
                yield env.timeout(wait)
                if att.outcome != "running":
                    return
            outs = job.outputs
            here = vm.host
            fresh = []
            while cursor < len(outs):
                o = outs[cursor]
                if not o.lost and o.map_index not in have:
                    fresh.append(o)
                    pos[id(o)] = cursor
                    if o.map_index in seen:
                        dup = True
                    seen.add(o.map_index)
                cursor += 1
            now_epoch = (dyn.outputs_lost, paths.generation, here)
            if dup or now_epoch != epoch:
                backlog = [o for items in groups.values() for o in items]
                backlog.sort(key=lambda o: pos[id(o)])
                backlog += fresh
                backlog = [o for o in backlog if not o.lost and o.map_index not in have]
                groups, fresh = {}, backlog
                sums = {}
                epoch = now_epoch
            # group by source: this host (local disk) or a source rack
            for o in fresh:
                h = o.vm.host
                key = ("host",) if h is here else ("rack", h.rack.id)
                items = groups.get(key)
                if items is None:
                    groups[key] = [o]
                else:
                    items.append(o)
                    sums.pop(key, None)
            if not groups:
                if job.output_event is None:
                    job.output_event = env.event()
                yield job.output_event
                if att.outcome != "running":
                    return
                continue
            # each group's MB summed when it changed (the same sum, in the same order)
            for key, items in groups.items():
                if key not in sums:
                    sums[key] = sum([o.mb for o in items])
            order = sorted(groups.items(), key=lambda kv: -sums[kv[0]])
            take = order[: self.params.parallel_copies]
            works, batch = [], []
            for key, items in take:
                mb = sums[key] / n_red
                if key[0] == "host":
                    links = (here.disk,)
                else:
                    src = max(items, key=lambda o: o.mb).vm.host
                    # map outputs are served from the page cache: the aggregated copy
                    # crosses the network path minus the source NIC (documented)
                    links = self.topo.path(src, here)[1:] or (here.nic_down,)
                w = self.flow(att, links, mb, job, tag="shuffle")
                works.append(w)
                batch.append((items, mb, key))
            att.works = works
            last_round = env.now
            for key, _items in take:
                del groups[key]
                del sums[key]
            yield simpy.AllOf(env, [w.event for w in works])
            att.works = []
            att.work = None
            for items, _mb, key in batch:
                got = [o for o in items if not o.lost and o.map_index not in have]
                for o in got:
                    have.add(o.map_index)
                part = sum(o.mb for o in got) / n_red
                shuffled += part
                self.shuffle_mb += part
                if key[0] == "rack" and key[1] != my_rack.id:
                    self.shuffle_cross_rack_mb += part
            att.fetched = len(have)
        att.phase = 1
        att.read_mb = shuffled
        cpu = prof.reduce_cpu_s_per_mb * shuffled * noise
        yield self.compute(att, vm, job, cpu).event
        att.phase = 2
        total_in = sum(t.input_mb for t in job.maps)
        out = total_in * prof.output_ratio / n_red
        yield self.flow(att, self.hdfs_write_path(vm, out), out, job, tag="write").event
        att.work = None
        self.tracker.succeeded(att, out)
