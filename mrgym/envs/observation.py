"""The default observation: one normalized float32 vector in [0, 1].

Layout: the requesting VM's features, then the cluster's, then the job features for each of
the K job slots (zero-padded, with a validity flag), then, with ``critic_inputs=True``, the
critic's.  Everything but the critic's comes from what Hadoop's master could see:
monitoring, job/HDFS metadata, topology, measured demand of finished tasks.

Each feature is defined once, in :data:`GROUPS`: a :class:`Feature` holds its name, what it
is, and its value as a Python expression.  The expressions are compiled into
:meth:`ObservationBuilder.build` when this module is imported (the way ``dataclasses``
writes ``__init__``), so the vector is built by straight-line code, as fast as a
hand-written builder, and the layout, the observation's size, ``feature_names`` and the
tables below cannot disagree.  Adding a feature is adding one ``Feature`` to its group
(``BUILD_SOURCE`` shows the generated code; the golden hashes of ``tests/test_golden.py``
then change, as the observation does).
"""

from __future__ import annotations

import ast
import linecache
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

# the generated builder's names (ruff sees only the strings that use them)
from mrgym.envs.actions import action_of  # noqa: F401
from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER  # noqa: F401
from mrgym.sim.jobs import MAP  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.jobs import Job
    from mrgym.sim.view import ClusterView


@dataclass(frozen=True)
class Feature:
    """One entry of the observation: ``value`` is an expression over the names its
    group's code defines (:data:`GROUPS`' ``scope``), evaluated once per observation."""

    name: str
    doc: str
    value: str


@dataclass(frozen=True)
class Group:
    """Features that share one part of the builder's code and what it defines for them."""

    key: str
    title: str
    scope: str  # the names the value expressions may use, for the reader
    features: tuple[Feature, ...]


F = Feature
VM = Group(
    "vm",
    "Requesting VM and its host",
    "slot_kind, vm, host, vmm (its metrics), hm (its host's), disk (MB/s), cores",
    (
        F("slot_is_map", "1: the free slot is a map slot", "slot_kind == MAP"),
        F("slot_is_reduce", "1: the free slot is a reduce slot", "slot_kind != MAP"),
        F(
            "free_map_frac",
            "the VM's free map slots / its map slots",
            "vm.free_map / vm.map_slots if vm.map_slots else 0.0",
        ),
        F(
            "free_reduce_frac",
            "the VM's free reduce slots / its reduce slots",
            "vm.free_reduce / vm.reduce_slots if vm.reduce_slots else 0.0",
        ),
        F(
            "vm_cpu_frac",
            "cores the VM's tasks use now / its vCPUs (Xentop)",
            "vmm.cpu_cores / max(vm.vcpus, 1e-9)",
        ),
        F("vm_read_frac", "the VM's read MB/s / its host disk's MB/s", "vmm.read_mbps / disk"),
        F("vm_write_frac", "the VM's write MB/s / its host disk's MB/s", "vmm.write_mbps / disk"),
        F(
            "host_vm_cpu_frac",
            "cores all co-hosted VMs use / the host's cores",
            "hm.vm_cpu_cores / cores",
        ),
        F("host_dom0_cpu_frac", "Dom0's cores / the host's cores", "hm.dom0_cpu_cores / cores"),
        F(
            "host_disk_util",
            "the host disk's throughput in use / its capacity (iostat)",
            "hm.disk_util",
        ),
        # with util, how far seeks have cut the disk's throughput (HybridMR's I/O gate)
        F(
            "host_disk_streams",
            "log-scaled streams on the host's disk (iostat's queue) / 32",
            "_log_frac(hm.disk_streams, 32.0)",
        ),
        F("host_virtualized", "1: a Xen host (else native)", "host.virtualized"),
        F("host_gpu", "1: the host has a GPU", "host.type.gpus > 0"),
        F("host_spot", "1: a spot host (evictable)", "host.is_spot"),
        F("host_core_speed", "the host's core speed / 5", "host.type.core_speed / 5.0"),
        F("host_evicting", "1: the host is in its eviction notice", "host.evicting"),
    ),
)
CLUSTER = Group(
    "global",
    "Cluster",
    "view, run_m / run_r (running maps / reduces), map_slots, red_slots, active (jobs), "
    "total_maps, n_jobs, now, max_time, self.k",
    (
        F("busy_map_slots", "running maps / all map slots", "run_m / map_slots"),
        F("busy_reduce_slots", "running reduces / all reduce slots", "run_r / red_slots"),
        F(
            "pending_maps",
            "log-scaled pending maps / the episode's maps",
            "_log_frac(view.n_pending_maps, total_maps)",
        ),
        F(
            "ready_reduces",
            "log-scaled ready reduces / the episode's maps",
            "_log_frac(view.n_ready_reduces, total_maps)",
        ),
        F("active_jobs", "active jobs / job slots", "len(active) / self.k"),
        F(
            "jobs_completed",
            "finished jobs / the episode's jobs",
            "(n_jobs - len(active) - view.n_unarrived) / n_jobs",
        ),
        F("time", "simulated time / the episode's time cap", "now / max_time"),
    ),
)
JOB = Group(
    "job",
    "Per job slot",
    "job, k (its slot), inm / inr (1 / its maps, reduces), nr, level (its next map's "
    "locality here, -1: none), running (its tasks of the slot's kind), running_all, fair, "
    "wait, n_done / sum_s / sum_cpu (its finished maps), gpu, size, wfrac, mask, log_t, log_h",
    (
        F("valid", "1: the slot holds a job (else all zero)", "1.0"),
        F("maps_pending", "pending maps / the job's maps", "job.n_pending_maps * inm"),
        F("maps_running", "running maps / the job's maps", "job.running_maps * inm"),
        F("maps_done", "finished maps / the job's maps", "job.maps_done * inm"),
        F("reduces_pending", "pending reduces / the job's reduces", "job.n_pending_reduces * inr"),
        F("reduces_running", "running reduces / the job's reduces", "job.running_reduces * inr"),
        F(
            "reduces_done",
            "finished reduces / the job's reduces (1 without reduces)",
            "job.reduces_done * inr if nr else 1.0",
        ),
        F("reduces_ready", "1: the job's reduces passed slow-start", "job.ready"),
        F("best_node", "1: its next map on this VM would be node-local", "level == NODE"),
        F("best_server", "1: ... server-local (another VM of this host)", "level == SERVER"),
        F("best_rack", "1: ... rack-local", "level == RACK"),
        F("best_off_rack", "1: ... off-rack (or reads no input)", "level == OFF_RACK"),
        F(
            "share_vs_fair",
            "its share of running tasks of the slot's kind / its fair share, / 4",
            "(running / running_all) / fair * 0.25 if running_all else 0.0",
        ),
        F(
            "waiting",
            "log-scaled time since it arrived / the time cap",
            "math.log1p(wait) / log_t if wait > 0 else 0.0",
        ),
        F("gpu_affinity", "(its profile's GPU speed-up - 1) / 4", "gpu"),
        F(
            "est_map_time",
            "log-scaled mean time of its finished maps / 1 h",
            "math.log1p(sum_s / n_done) / log_h if n_done else 0.0",
        ),
        F(
            "est_cpu_intensity",
            "CPU seconds / seconds of its finished maps",
            "sum_cpu / sum_s if n_done and sum_s > 0 else 0.0",
        ),
        F("size", "log-scaled maps / the episode's maps", "size"),
        F("weight", "its weight w as w / (1 + w)", "wfrac"),
        F(
            "can_speculate",
            "1: a backup of one of its running tasks may launch here",
            "mask[action_of(k, 2)] if mask is not None else False",
        ),
        # always 1 since the slots skip jobs whose pools exclude this VM; kept so that the
        # observation layout of MRCluster-v0 does not change
        F(
            "allowed_here",
            "1: its pools include this VM (always, as slots skip others)",
            "job.allowed_pools is None or view.pool_ok(job, vm)",
        ),
    ),
)
# Critic-only inputs (``MRCluster-v0(critic_inputs=True)``, appended after the job slots):
# the exogenous workload still to come.  No scheduler can see it, but it drives the return
# from a state more than anything in the state does; a critic that sees it is an
# input-dependent baseline (Mao et al., ICLR 2019: variance reduction for input-driven
# environments), unbiased because the input is exogenous (no action changes it).  The
# actor must not act on it, as no scheduler knows the future: agents.critic_inputs.
# CriticInputsPolicy zeroes these features for the actor.
CRITIC = Group(
    "critic",
    "Critic only, with critic_inputs=True (after the slots)",
    "jobs (all, in arrival order), i (the next to arrive), left (jobs to come), maps / work "
    "/ sub (suffix sums of maps, CPU work, submit times), log_maps, log_work, now, max_time",
    (
        F("unarrived_jobs", "jobs yet to arrive / the episode's jobs", "left / len(jobs)"),
        F(
            "unarrived_maps",
            "log-scaled maps of the jobs yet to arrive / the episode's maps",
            "math.log1p(maps[i]) / log_maps if log_maps > 0 else 0.0",
        ),
        F(
            "unarrived_work",
            "log-scaled CPU work (ref. core-s) of the jobs yet to arrive / all",
            "math.log1p(work[i]) / log_work if log_work > 0 else 0.0",
        ),
        F(
            "next_arrival",
            "time to the next arrival / the time cap (0 when none is left)",
            "max(0.0, jobs[i].spec.submit_s - now) / max_time",
        ),
        F(
            "mean_arrival",
            "mean time to the arrivals still to come / the time cap",
            "max(0.0, sub[i] / left - now) / max_time",
        ),
    ),
)

# MRCluster-v1: the same layout, with every feature computable from what the master knows
# at that moment.  v0's cluster and job groups divide by episode totals (every job's maps,
# every job, including jobs not yet submitted), read the episode's time cap and the hidden
# GPU speed-up of a job's profile; v1 normalises by constants of the cluster and measures
# the GPU gain from the job's finished maps (docs/environment.md, version history).
CLUSTER_V1 = Group(
    "global",
    "Cluster",
    CLUSTER.scope + ", n_arr (jobs arrived so far), since_arr (s since the last arrival)",
    (
        CLUSTER.features[0],
        CLUSTER.features[1],
        F(
            "pending_maps",
            "log-scaled pending maps / 16 waves of the cluster's map slots",
            "_log_frac(view.n_pending_maps, 16.0 * map_slots)",
        ),
        F(
            "ready_reduces",
            "log-scaled ready reduces / 16 waves of the cluster's reduce slots",
            "_log_frac(view.n_ready_reduces, 16.0 * red_slots)",
        ),
        CLUSTER.features[4],
        F(
            "jobs_finished",
            "jobs over (finished or failed) / jobs arrived so far",
            "(n_arr - len(active)) / n_arr if n_arr else 0.0",
        ),
        F(
            "since_arrival",
            "log-scaled time since the last job arrived / 4 h",
            "math.log1p(since_arr) / log_w if since_arr > 0 else 0.0",
        ),
    ),
)
_JOB_V1_SWAP = {
    "waiting": F(
        "waiting",
        "log-scaled time since it arrived / 4 h",
        "math.log1p(wait) / log_w if wait > 0 else 0.0",
    ),
    "gpu_affinity": F(
        "gpu_gain",
        "measured: (its finished maps' MB/s on GPU hosts / on others - 1) / 4 (0 until both)",
        "_gpu_gain(view, job, gpu_types) if gpu_types else 0.0",
    ),
    "size": F(
        "size",
        "log-scaled maps / 16 waves of the cluster's map slots",
        "_log_frac(len(job.maps), 16.0 * map_slots)",
    ),
}
JOB_V1 = Group(
    "job",
    JOB.title,
    JOB.scope + ", gpu_types (host types with a GPU)",
    tuple(_JOB_V1_SWAP.get(f.name, f) for f in JOB.features),
)
del F
#: every group in layout order (the job group repeats once per job slot)
GROUPS = (VM, CLUSTER, JOB, CRITIC)
#: MRCluster-v1's groups, in layout order
GROUPS_V1 = (VM, CLUSTER_V1, JOB_V1, CRITIC)
#: the groups of each observation version
VERSIONS = {0: GROUPS, 1: GROUPS_V1}
#: every feature once, in layout order: each has ``.name``, ``.doc`` and ``.value``
FEATURES = tuple(f for g in GROUPS for f in g.features)

VM_FEATURES = tuple(f.name for f in VM.features)
GLOBAL_FEATURES = tuple(f.name for f in CLUSTER.features)
JOB_FEATURES = tuple(f.name for f in JOB.features)
CRITIC_FEATURES = tuple(f.name for f in CRITIC.features)
# (name, doc) pairs, per group
VM_FEATURE_TABLE = tuple((f.name, f.doc) for f in VM.features)
GLOBAL_FEATURE_TABLE = tuple((f.name, f.doc) for f in CLUSTER.features)
JOB_FEATURE_TABLE = tuple((f.name, f.doc) for f in JOB.features)
CRITIC_FEATURE_TABLE = tuple((f.name, f.doc) for f in CRITIC.features)


def observation_size(job_slots: int, critic_inputs: bool = False) -> int:
    """The length of the observation vector (the same in every version)."""
    n = len(VM_FEATURES) + len(GLOBAL_FEATURES) + job_slots * len(JOB_FEATURES)
    return n + (len(CRITIC_FEATURES) if critic_inputs else 0)


def feature_names(job_slots: int, critic_inputs: bool = False, version: int = 0) -> list[str]:
    """One name per entry of observation ``version``: ``job3.size`` is slot 3's ``size``."""
    vm, cluster, job, critic = _groups(version)
    return (
        [f.name for f in vm.features]
        + [f.name for f in cluster.features]
        + [f"job{i}.{f.name}" for i in range(job_slots) for f in job.features]
        + [f"critic.{f.name}" for f in critic.features if critic_inputs]
    )


def _groups(version: int) -> tuple[Group, ...]:
    if version not in VERSIONS:
        raise ValueError(f"observation_version: must be one of {sorted(VERSIONS)}, got {version!r}")
    return VERSIONS[version]


def markdown_table(groups: tuple[Group, ...] = GROUPS) -> str:
    """The features as a markdown table (feature, group, meaning), for the docs."""
    lines = ["| feature | group | meaning |", "|---|---|---|"]
    for g in groups:
        lines += [f"| `{f.name}` | {g.key} | {f.doc} |" for f in g.features]
    return "\n".join(lines)


def _feature_list() -> str:
    parts = []
    for g in GROUPS:
        parts.append(f"\n{g.title} ({len(g.features)}):\n")
        parts += [f"* ``{f.name}``: {f.doc}\n" for f in g.features]
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


# The builder's code around the features' values ({vm}, {global}, {job}, {critic} are
# replaced by each group's value expressions, in order).  It defines the names of each
# group's ``scope``; one pass over the job slots, per-job constants cached per episode.
_TEMPLATE = '''
def build(self, view, vm, slot_kind, slots, max_time, mask=None):
    """The observation of ``vm``'s free ``slot_kind`` slot, read from ``view``
    (a :class:`~mrgym.sim.view.ClusterView`) only."""
    if vm is None:
        return self.zeros()
    if view is not self._view:  # a new episode: per-episode and per-job constants
        self._new_episode(view)
    host = vm.host
    vmm = view.vm_metrics(vm)
    hm = view.host_metrics(host)
    disk = max(host.disk.capacity, 1e-9)
    cores = max(host.type.cores, 1e-9)
    v = [{vm}
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
    n_arr = view.n_arrived
    since_arr = now - view.all_jobs[n_arr - 1].arrived_s if n_arr else 0.0
    log_w = LOG_4H
    g = [{global}
    ]
    vals = v + g
    total_w = total_w or 1.0
    is_map = slot_kind == MAP
    running_all = (run_m if is_map else run_r) or 0
    log_t = math.log1p(max_time)
    log_m = math.log1p(total_maps)
    log_h = math.log1p(3600.0)
    inv_fair = 1.0 / total_w
    gpu_types = self._gpu_types
    statics = self._static
    for k, job in enumerate(slots):
        static = statics.get(job.id)
        if static is None:  # features fixed for the job's life
            static = statics[job.id] = _job_constants(job, log_m)
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
        vals += ({job}
        )
    out = np.zeros(self.size, dtype=np.float32)
    out[: len(vals)] = vals
    if self.critic:
        out[-N_CRITIC:] = self._critic_inputs(view, max_time)
    np.clip(out, 0.0, 1.0, out=out)
    return out


def critic_inputs(self, view, max_time):
    """The critic group: the jobs ``view.all_jobs[view.n_arrived:]`` (arrivals follow
    submission order, Simulation._submitter)."""
    if self._suffix is None:
        self._suffix = _arrival_suffixes(view.all_jobs)
    maps, work, sub, log_maps, log_work = self._suffix
    jobs = view.all_jobs
    i = view.n_arrived
    left = len(jobs) - i
    if left <= 0:
        return [0.0] * N_CRITIC
    now = view.now
    return [{critic}
    ]
'''
N_CRITIC = len(CRITIC_FEATURES)
LOG_4H = math.log1p(4 * 3600.0)


def _gpu_gain(view: ClusterView, job: Job, gpu_types: frozenset[str]) -> float:
    """(MB/s of the job's finished maps on GPU host types / on the others - 1) / 4, as a
    master measures it (Lee §4.3's computing rate); 0 until both kinds have finished maps."""
    g_s = g_mb = o_s = o_mb = 0.0
    for name, (sec, mb) in job.rate_by_type.items():
        if name in gpu_types:
            g_s, g_mb = g_s + sec, g_mb + mb
        else:
            o_s, o_mb = o_s + sec, o_mb + mb
    if g_s <= 0 or o_s <= 0 or g_mb <= 0 or o_mb <= 0:
        return 0.0
    return ((g_mb / g_s) / (o_mb / o_s) - 1.0) / 4.0


def _compile(groups: tuple[Group, ...], version: int) -> tuple[str, dict]:
    """The builder's source with every group's values in, and its compiled functions."""
    values = {}
    for g in groups:
        indent = "\n" + " " * (12 if g.key == "job" else 8)
        code = []
        for f in g.features:
            tree = ast.parse(f.value, mode="eval")
            # one expression, one entry: "a, b" would shift every later feature
            if isinstance(tree.body, ast.Tuple):
                raise ValueError(f"feature {f.name}: value {f.value!r} is not one expression")
            # the parsed form, not the raw text: a "# comment" in a value would swallow the
            # comma that ends its entry
            code.append(f"{indent}{ast.unparse(tree)},  # {f.name}")
        values[g.key] = "".join(code)
    src = _TEMPLATE.format(**values)
    name = f"<mrgym.envs.observation: generated from observation version {version}>"
    # tracebacks and profilers show the generated lines
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    scope: dict = {}
    exec(compile(src, name, "exec"), globals(), scope)  # noqa: S102 - our own expressions
    return src, scope


#: the generated source of ``ObservationBuilder.build`` and its critic part (version 0)
BUILD_SOURCE, _GENERATED = _compile(GROUPS, 0)
#: the same for ``ObservationBuilderV1`` (MRCluster-v1)
BUILD_SOURCE_V1, _GENERATED_V1 = _compile(GROUPS_V1, 1)


def _job_constants(job, log_m: float) -> tuple:
    """A job's features that stay fixed for its life (cached per episode)."""
    nm = len(job.maps) or 1
    nr = len(job.reduces)
    w = job.spec.weight
    return (
        1.0 / nm,
        1.0 / nr if nr else 0.0,
        nr,
        (job.profile.gpu_speedup - 1.0) / 4.0,
        math.log1p(nm) / log_m,
        w / (1.0 + w),
        w,
    )


def _arrival_suffixes(jobs) -> tuple[list, list, list, float, float]:
    """Over the jobs in submission (= arrival) order: the sums of maps, work and submit
    times from job i on, and log1p of the whole episode's maps and work."""
    maps, work, sub = [0.0], [0.0], [0.0]
    for job in reversed(jobs):
        spec = job.spec
        maps.append(maps[-1] + spec.n_maps)
        work.append(work[-1] + job_work(spec))
        sub.append(sub[-1] + spec.submit_s)
    for lst in (maps, work, sub):
        lst.reverse()
    return maps, work, sub, math.log1p(maps[0]), math.log1p(work[0])


class ObservationBuilder:
    def __init__(self, job_slots: int, critic_inputs: bool = False):
        self.k = job_slots
        self.critic = critic_inputs
        self.size = observation_size(job_slots, critic_inputs)
        self._view = None  # the episode the constants below belong to
        self._consts: tuple[int, int] = (1, 1)
        self._static: dict[int, tuple] = {}
        # per episode: _arrival_suffixes of its jobs (critic inputs)
        self._suffix: tuple[list, list, list, float, float] | None = None
        self._gpu_types: frozenset[str] = frozenset()

    def __getstate__(self) -> dict:
        # the per-episode cache refers to the live simulation: copies and pickles rebuild it
        state = self.__dict__.copy()
        state["_view"], state["_static"] = None, {}
        return state

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.float32)

    def _new_episode(self, view) -> None:
        self._view = view
        workers = view.topology.workers
        self._consts = (
            sum(w.map_slots for w in workers) or 1,
            sum(w.reduce_slots for w in workers) or 1,
        )
        self._static = {}
        self._suffix = None
        self._gpu_types = frozenset(h.type.name for h in view.topology.hosts if h.type.gpus > 0)

    version = 0
    build = _GENERATED["build"]
    _critic_inputs = _GENERATED["critic_inputs"]


class ObservationBuilderV1(ObservationBuilder):
    """MRCluster-v1's observation: v0's layout, computed only from what the master knows
    at that moment (no episode totals, no time cap, a measured GPU gain)."""

    version = 1
    build = _GENERATED_V1["build"]
    _critic_inputs = _GENERATED_V1["critic_inputs"]


def make_builder(
    job_slots: int, critic_inputs: bool = False, version: int = 0
) -> ObservationBuilder:
    """The observation builder of ``version`` (0: MRCluster-v0, 1: MRCluster-v1)."""
    _groups(version)  # a bad version: a ValueError naming the key
    cls = ObservationBuilderV1 if version == 1 else ObservationBuilder
    return cls(job_slots, critic_inputs)
