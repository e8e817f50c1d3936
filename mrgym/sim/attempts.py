"""Task attempts as SimPy processes: a map reads its block, computes and writes its output;
a reduce shuffles map outputs, computes and writes to HDFS.  Each attempt's compute phase
also carries its child JVM's start-up (``task_jvm_start_s``).

The fluid model (``execution.py``) sets every phase's rate; an attempt reports its end
to the job tracker (``succeeded`` / ``fail``); a killed attempt waits on a cancelled
work that never fires, so its process simply never resumes.

Per-attempt variability (``params.py``): the task's noise draw for this attempt stretches
its compute phase and, with ``noise_phases: all``, divides the rate factor of each of its
own I/O streams by it when it is above 1 (a flow moves at most at its fair share of a
link, so only the slow side of the draw applies to I/O; LATE, Mantri: stragglers on shared
clusters are as often I/O-slow); a
persistently slow VM (Bobtail) divides the factor of every phase its attempts run.  Which
VMs are slow lives here only (``_slow_vm``), never in the ClusterView.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrgym.sim.hdfs import NODE, SERVER
from mrgym.sim.jobs import Attempt, Job
from mrgym.sim.part import Part
from mrgym.sim.shuffle import copy_outputs
from mrgym.sim.topology import VM, Link

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class AttemptRunner(Part):
    """Runs map and reduce attempts; counts the shuffle's bytes."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self.shuffle_mb = 0.0
        self.shuffle_cross_rack_mb = 0.0
        # hidden ground truth: VM id -> its slow factor (> 1), drawn at reset
        self._slow_vm: dict[int, float] = {}
        self._noise_io = self.params.noise_phases == "all"

    def draw_slow_vms(self, streams) -> None:
        """Mark each VM of a virtualized host slow with probability ``slow_vm_p`` (one
        uniform per VM from the VM's own stream: policy- and workload-independent)."""
        p = self.params
        if p.slow_vm_p <= 0 or p.slow_vm_factor == 1.0:
            return
        for vm in self.topo.vms:
            if vm.host.virtualized and streams.keyed("slowvm", vm.id).random() < p.slow_vm_p:
                self._slow_vm[vm.id] = p.slow_vm_factor

    def slow_factor(self, vm: VM) -> float:
        """How many times slower ``vm`` runs every phase (1: not slow; native: never)."""
        if not self._slow_vm or not vm.host.virtualized:
            return 1.0
        return self._slow_vm.get(vm.id, 1.0)

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
                c = None
                if h is not None and link is h.disk:
                    c = self.caches[h.id].take(mb, now, att.vm)
                if c is not None:
                    absorbed.append(c)
                else:
                    kept.append(link)
            links = tuple(kept)
        hosts = []
        for link in links:
            h = link.host
            if h is not None and h not in hosts:
                hosts.append(h)
        dom0 = tuple(h for h in hosts if h.virtualized)
        f = self.io_factor(hosts, job) * extra
        if self._noise_io:  # noise_phases "all": this attempt's draw stretches its I/O too
            noise = att.task.noise[att.number % len(att.task.noise)]
            if noise > 1.0:  # a lucky draw cannot move data faster than its link share
                f /= noise
        if self._slow_vm:
            f /= self.slow_factor(att.vm)
        w = self.engine.flow(links, mb, f, dom0, tag)
        if absorbed:
            w.absorbed = tuple(absorbed)
        if att.vm.paused:  # a paused VM's attempts make no progress until it resumes
            self.engine.suspend(w)
        att.work = w
        return w

    def compute(self, att: Attempt, vm: VM, job: Job, core_s: float):
        """The attempt's compute phase: ``core_s`` reference core-seconds on ``vm``."""
        att.cpu_s = core_s
        f = self.cpu_factor(vm, job)
        if self._slow_vm:
            f /= self.slow_factor(vm)
        w = self.engine.compute(vm, core_s, f, job.profile)
        if vm.paused:  # a paused VM's attempts make no progress until it resumes
            self.engine.suspend(w)
        att.work = w
        return w

    def hdfs_write_path(self, vm: VM, job: Job) -> tuple[Link, ...]:
        """Pipeline over the replicas of a new output block of ``job`` (one flow, all
        links); the replicas are drawn from the job's own output stream."""
        if job.out_rng is None:
            job.out_rng = self.rng.keyed("output", job.key)
        replicas = self.hdfs.place(job.out_rng, writer=vm)
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
            disk_mb = mb
            if self.params.compressed_input:  # the block holds mb / ratio on disk
                disk_mb = mb / prof.input_compression
                att.read_mb = disk_mb
            if level == NODE:
                links = (src.host.disk,)
                extra = 1.0
            elif level == SERVER:
                links = (src.host.disk,)
                extra = 1.0 - self.params.server_read_penalty
            else:
                links = (src.host.disk, *self.topo.path(src.host, vm.host))
                extra = 1.0
            yield self.flow(att, links, disk_mb, job, extra).event
        att.phase = 1
        cpu = prof.map_cpu_s_per_mb * mb * noise + self.params.task_jvm_start_s
        if self.params.compressed_input and task.block is not None:
            cpu += prof.decompress_cpu_s_per_mb * mb * noise  # inflating the records
        yield self.compute(att, vm, job, cpu).event
        att.phase = 2
        if job.reduces:
            out = mb * prof.map_output_ratio
            yield self.flow(att, (vm.host.disk,), out, job, tag="write").event
        else:
            out = mb * prof.output_ratio
            yield self.flow(att, self.hdfs_write_path(vm, job), out, job, tag="write").event
        att.work = None
        self.tracker.succeeded(att, out)

    def run_reduce(self, att: Attempt):
        task, vm = att.task, att.vm
        job = task.job
        prof = job.profile
        noise = task.noise[att.number % len(task.noise)]
        att.fetched = 0
        att.n_maps = len(job.maps)
        if att.outcome != "running":
            return
        shuffled = yield from copy_outputs(self, att)  # shuffle.py
        if shuffled is None:  # the attempt ended while copying
            return
        att.phase = 1
        att.read_mb = shuffled
        cpu = prof.reduce_cpu_s_per_mb * shuffled * noise + self.params.task_jvm_start_s
        yield self.compute(att, vm, job, cpu).event
        att.phase = 2
        total_in = sum(t.input_mb for t in job.maps)
        out = total_in * prof.output_ratio / len(job.reduces)
        yield self.flow(att, self.hdfs_write_path(vm, job), out, job, tag="write").event
        att.work = None
        self.tracker.succeeded(att, out)
