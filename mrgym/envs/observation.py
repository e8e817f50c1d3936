"""The default observation: one normalized float32 vector in [0, 1].

Layout: VM_FEATURES, then GLOBAL_FEATURES, then JOB_FEATURES for each of the K job slots
(zero-padded, with a validity flag).  Everything comes from what Hadoop's master could see:
monitoring, job/HDFS metadata, topology, measured demand of finished tasks.
"""

from __future__ import annotations

import math

import numpy as np

from mrgym.envs.actions import action_of
from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import MAP

# Each feature once: (name, what it is).  The builder below computes them in this order;
# the module docstring's list and the tests' feature count come from these tables.
VM_FEATURE_TABLE = (
    ("slot_is_map", "1: the free slot is a map slot"),
    ("slot_is_reduce", "1: the free slot is a reduce slot"),
    ("free_map_frac", "the VM's free map slots / its map slots"),
    ("free_reduce_frac", "the VM's free reduce slots / its reduce slots"),
    ("vm_cpu_frac", "cores the VM's tasks use now / its vCPUs (Xentop)"),
    ("vm_read_frac", "the VM's read MB/s / its host disk's MB/s"),
    ("vm_write_frac", "the VM's write MB/s / its host disk's MB/s"),
    ("host_vm_cpu_frac", "cores all co-hosted VMs use / the host's cores"),
    ("host_dom0_cpu_frac", "Dom0's cores / the host's cores"),
    ("host_disk_util", "the host disk's throughput in use / its capacity (iostat)"),
    ("host_disk_streams", "log-scaled streams on the host's disk (iostat's queue) / 32"),
    ("host_virtualized", "1: a Xen host (else native)"),
    ("host_gpu", "1: the host has a GPU"),
    ("host_spot", "1: a spot host (evictable)"),
    ("host_core_speed", "the host's core speed / 5"),
    ("host_evicting", "1: the host is in its eviction notice"),
)
GLOBAL_FEATURE_TABLE = (
    ("busy_map_slots", "running maps / all map slots"),
    ("busy_reduce_slots", "running reduces / all reduce slots"),
    ("pending_maps", "log-scaled pending maps / the episode's maps"),
    ("ready_reduces", "log-scaled ready reduces / the episode's maps"),
    ("active_jobs", "active jobs / job slots"),
    ("jobs_completed", "finished jobs / the episode's jobs"),
    ("time", "simulated time / the episode's time cap"),
)
JOB_FEATURE_TABLE = (
    ("valid", "1: the slot holds a job (else all zero)"),
    ("maps_pending", "pending maps / the job's maps"),
    ("maps_running", "running maps / the job's maps"),
    ("maps_done", "finished maps / the job's maps"),
    ("reduces_pending", "pending reduces / the job's reduces"),
    ("reduces_running", "running reduces / the job's reduces"),
    ("reduces_done", "finished reduces / the job's reduces (1 without reduces)"),
    ("reduces_ready", "1: the job's reduces passed slow-start"),
    ("best_node", "1: its next map on this VM would be node-local"),
    ("best_server", "1: ... server-local (another VM of this host)"),
    ("best_rack", "1: ... rack-local"),
    ("best_off_rack", "1: ... off-rack (or reads no input)"),
    ("share_vs_fair", "its share of running tasks of the slot's kind / its fair share, / 4"),
    ("waiting", "log-scaled time since it arrived / the time cap"),
    ("gpu_affinity", "(its profile's GPU speed-up - 1) / 4"),
    ("est_map_time", "log-scaled mean time of its finished maps / 1 h"),
    ("est_cpu_intensity", "CPU seconds / seconds of its finished maps"),
    ("size", "log-scaled maps / the episode's maps"),
    ("weight", "its weight w as w / (1 + w)"),
    ("can_speculate", "1: a backup of one of its running tasks may launch here"),
    ("allowed_here", "1: its pools include this VM (always, as slots skip others)"),
)
# Critic-only inputs (``MRCluster-v0(critic_inputs=True)``, appended after the job slots):
# the exogenous workload still to come.  No scheduler can see it, but it drives the return
# from a state more than anything in the state does; a critic that sees it is an
# input-dependent baseline (Mao et al., ICLR 2019: variance reduction for input-driven
# environments), unbiased because the input is exogenous (no action changes it).  The
# actor must not act on it, as no scheduler knows the future: agents.critic_inputs.
# CriticInputsPolicy zeroes these features for the actor.
CRITIC_FEATURE_TABLE = (
    ("unarrived_jobs", "jobs yet to arrive / the episode's jobs"),
    ("unarrived_maps", "log-scaled maps of the jobs yet to arrive / the episode's maps"),
    ("unarrived_work", "log-scaled CPU work (ref. core-s) of the jobs yet to arrive / all"),
    ("next_arrival", "time to the next arrival / the time cap (0 when none is left)"),
    ("mean_arrival", "mean time to the arrivals still to come / the time cap"),
)
VM_FEATURES = tuple(n for n, _ in VM_FEATURE_TABLE)
CRITIC_FEATURES = tuple(n for n, _ in CRITIC_FEATURE_TABLE)
GLOBAL_FEATURES = tuple(n for n, _ in GLOBAL_FEATURE_TABLE)
JOB_FEATURES = tuple(n for n, _ in JOB_FEATURE_TABLE)


def _feature_list() -> str:
    parts = []
    for title, table in (
        ("Requesting VM and its host", VM_FEATURE_TABLE),
        ("Cluster", GLOBAL_FEATURE_TABLE),
        ("Per job slot", JOB_FEATURE_TABLE),
        ("Critic only, with critic_inputs=True (after the slots)", CRITIC_FEATURE_TABLE),
    ):
        parts.append(f"\n{title} ({len(table)}):\n")
        parts += [f"* ``{n}``: {d}\n" for n, d in table]
    return "".join(parts)


__doc__ = (__doc__ or "") + _feature_list()


def _log_frac(x: float, scale: float) -> float:
    if x <= 0.0:
        return 0.0
    return min(1.0, math.log1p(x) / math.log1p(scale))


def job_work(spec) -> float:
    """A job's CPU work in reference core-seconds: its maps', and its reduces' if it has
    any (a map-only job writes its maps' output to HDFS: attempts.run_map)."""
    p = spec.profile
    reduce = p.map_output_ratio * p.reduce_cpu_s_per_mb if spec.n_reduces else 0.0
    return spec.input_mb * (p.map_cpu_s_per_mb + reduce)


class ObservationBuilder:
    def __init__(self, job_slots: int, critic_inputs: bool = False):
        self.k = job_slots
        self.critic = critic_inputs
        self.size = len(VM_FEATURES) + len(GLOBAL_FEATURES) + job_slots * len(JOB_FEATURES)
        if critic_inputs:
            self.size += len(CRITIC_FEATURES)
        self._view = None  # the episode the constants below belong to
        self._consts: tuple[int, int] = (1, 1)
        self._static: dict[int, tuple] = {}
        # per episode, over the jobs in submission (= arrival) order: the sums of maps,
        # work and submit times from job i on, and log1p of the whole episode's maps/work
        self._suffix: tuple[list, list, list, float, float] | None = None

    def __getstate__(self) -> dict:
        # the per-episode cache refers to the live simulation: copies and pickles rebuild it
        state = self.__dict__.copy()
        state["_view"], state["_static"] = None, {}
        return state

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.float32)

    def build(
        self, view, vm, slot_kind: str, slots: list, max_time: float, mask: np.ndarray | None = None
    ) -> np.ndarray:
        """The observation of ``vm``'s free ``slot_kind`` slot, read from ``view``
        (a :class:`~mrgym.sim.view.ClusterView`) only."""
        if vm is None:
            return self.zeros()
        if view is not self._view:  # a new episode: per-episode and per-job constants
            self._view = view
            workers = view.topology.workers
            self._consts = (
                sum(w.map_slots for w in workers) or 1,
                sum(w.reduce_slots for w in workers) or 1,
            )
            self._static = {}
            self._suffix = None
        host = vm.host
        vmm = view.vm_metrics(vm)
        hm = view.host_metrics(host)
        disk = max(host.disk.capacity, 1e-9)
        cores = max(host.type.cores, 1e-9)
        v = [
            slot_kind == MAP,
            slot_kind != MAP,
            vm.free_map / vm.map_slots if vm.map_slots else 0.0,
            vm.free_reduce / vm.reduce_slots if vm.reduce_slots else 0.0,
            vmm.cpu_cores / max(vm.vcpus, 1e-9),
            vmm.read_mbps / disk,
            vmm.write_mbps / disk,
            hm.vm_cpu_cores / cores,
            hm.dom0_cpu_cores / cores,
            hm.disk_util,
            # with util, how far seeks have cut the disk's throughput (HybridMR's I/O gate)
            _log_frac(hm.disk_streams, 32.0),
            host.virtualized,
            host.type.gpus > 0,
            host.is_spot,
            host.type.core_speed / 5.0,
            host.evicting,
        ]
        map_slots, red_slots = self._consts
        active = view.jobs
        run_m = run_r = 0
        total_w = 0.0
        for j in active:
            run_m += j.running_maps
            run_r += j.running_reduces
            total_w += j.weight
        total_maps = view.total_maps or 1
        n_jobs = len(view.all_jobs) or 1
        now = view.now
        g = [
            run_m / map_slots,
            run_r / red_slots,
            _log_frac(view.n_pending_maps, total_maps),
            _log_frac(view.n_ready_reduces, total_maps),
            len(active) / self.k,
            (n_jobs - len(active) - view.n_unarrived) / n_jobs,
            now / max_time,
        ]
        vals = v + g
        total_w = total_w or 1.0
        is_map = slot_kind == MAP
        running_all = (run_m if is_map else run_r) or 0
        log_t = math.log1p(max_time)
        log_m = math.log1p(total_maps)
        log_h = math.log1p(3600.0)
        inv_fair = 1.0 / total_w
        statics = self._static
        for k, job in enumerate(slots):
            static = statics.get(job.id)
            if static is None:  # features fixed for the job's life
                nm = len(job.maps) or 1
                nr = len(job.reduces)
                w = job.spec.weight
                static = statics[job.id] = (
                    1.0 / nm,
                    1.0 / nr if nr else 0.0,
                    nr,
                    (job.profile.gpu_speedup - 1.0) / 4.0,
                    math.log1p(nm) / log_m,
                    w / (1.0 + w),
                    w,
                )
            inm, inr, nr, gpu, size, wfrac, weight = static
            level = -1
            if job.n_pending_maps:
                best = view.best_map(job, vm, pick=False)
                if best is not None:
                    level = OFF_RACK if best[1] is None else best[1]
            running = job.running_maps if is_map else job.running_reduces
            fair = weight * inv_fair
            n_done, sum_s, sum_cpu, *_ = job.stats[MAP]
            wait = now - job.arrived_s
            vals += (
                1.0,
                job.n_pending_maps * inm,
                job.running_maps * inm,
                job.maps_done * inm,
                job.n_pending_reduces * inr,
                job.running_reduces * inr,
                job.reduces_done * inr if nr else 1.0,
                job.ready,
                level == NODE,
                level == SERVER,
                level == RACK,
                level == OFF_RACK,
                (running / running_all) / fair * 0.25 if running_all else 0.0,
                math.log1p(wait) / log_t if wait > 0 else 0.0,
                gpu,
                math.log1p(sum_s / n_done) / log_h if n_done else 0.0,
                sum_cpu / sum_s if n_done and sum_s > 0 else 0.0,
                size,
                wfrac,
                mask[action_of(k, 2)] if mask is not None else False,
                # always 1 since the slots skip jobs whose pools exclude this VM; kept so
                # that the observation layout of MRCluster-v0 does not change
                job.allowed_pools is None or view.pool_ok(job, vm),
            )
        out = np.zeros(self.size, dtype=np.float32)
        out[: len(vals)] = vals
        if self.critic:
            n = len(CRITIC_FEATURES)
            out[-n:] = self._critic_inputs(view, max_time)
        np.clip(out, 0.0, 1.0, out=out)
        return out

    def _critic_inputs(self, view, max_time: float) -> list[float]:
        """CRITIC_FEATURE_TABLE: the jobs ``view.all_jobs[view.n_arrived:]`` (arrivals
        follow submission order, Simulation._submitter)."""
        if self._suffix is None:
            maps, work, sub = [0.0], [0.0], [0.0]
            for job in reversed(view.all_jobs):
                spec = job.spec
                maps.append(maps[-1] + spec.n_maps)
                work.append(work[-1] + job_work(spec))
                sub.append(sub[-1] + spec.submit_s)
            for lst in (maps, work, sub):
                lst.reverse()
            self._suffix = (maps, work, sub, math.log1p(maps[0]), math.log1p(work[0]))
        maps, work, sub, log_maps, log_work = self._suffix
        jobs = view.all_jobs
        i = view.n_arrived
        left = len(jobs) - i
        if left <= 0:
            return [0.0] * len(CRITIC_FEATURES)
        now = view.now
        return [
            left / len(jobs),
            math.log1p(maps[i]) / log_maps if log_maps > 0 else 0.0,
            math.log1p(work[i]) / log_work if log_work > 0 else 0.0,
            max(0.0, jobs[i].spec.submit_s - now) / max_time,
            max(0.0, sub[i] / left - now) / max_time,
        ]
