"""Job profiles, jobs, map/reduce tasks and their attempts.

A profile describes an application's CPU and I/O character in reference core-seconds per
MB; the simulator turns it into read/compute/write phases, so a job's sensitivity to
interference, locality, virtualization and GPUs follows from its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

import simpy


@dataclass(frozen=True)
class JobProfile:
    name: str
    map_cpu_s_per_mb: float  # reference core-seconds per MB of map input
    reduce_cpu_s_per_mb: float  # reference core-seconds per MB of shuffled input
    map_output_ratio: float  # shuffle bytes / map input bytes
    output_ratio: float  # HDFS output bytes / job input bytes
    io_bound: bool  # the papers' classification (ILA Table 3, HybridMR §IV)
    gpu_speedup: float = 1.0  # compute speed-up on a GPU host (1.0 = cannot use a GPU)
    virt_sensitivity: float = 1.0  # scales the host's virtualization overheads
    has_input: bool = True  # False: maps generate data (TeraGen, RandomWriter, PiEst)
    default_reduce_ratio: float = 0.1  # reduces per map when a workload does not say
    source: str = ""
    # Compressed input (ModelParams.compressed_input): its ratio on disk (records MB / disk
    # MB; 1 = uncompressed) and the CPU to decompress one MB of records (core-seconds)
    input_compression: float = 1.0
    decompress_cpu_s_per_mb: float = 0.0
    # memory-bandwidth/LLC traffic per running core (0..1) and how much the phase suffers
    # from others' (0..1): cpu.py's contention below the cores, values in MEMORY_CHARACTER
    mem_pressure: float = 0.0
    mem_sensitivity: float = 0.0

    def with_(self, **kw) -> JobProfile:
        return replace(self, **kw)


def _p(*args, **kw) -> JobProfile:
    return JobProfile(*args, **kw)


# One table for every application the papers name.  CPU figures are chosen so that a
# 128 MB map takes ~5-10 s on the reference core for I/O-bound jobs (ILA §5.6 assumes 10 s
# tasks) and 25-50 s for CPU-bound ones, and that the read+write time on a 100 MB/s disk
# dominates the former and is < 10 % of the latter (ILA Table 3 / HybridMR §IV classes).
PROFILES: dict[str, JobProfile] = {
    p.name: p
    for p in [
        _p(
            "terasort",
            0.02,
            0.02,
            1.0,
            1.0,
            True,
            default_reduce_ratio=0.25,
            source="ILA Table 3 I/O; sort: map output = input = output",
        ),
        _p(
            "sort",
            0.015,
            0.015,
            1.0,
            1.0,
            True,
            default_reduce_ratio=0.25,
            source="Lee §3 / HybridMR Fig. 1 I/O-bound; identity map and reduce",
        ),
        _p(
            "teragen",
            0.01,
            0.0,
            0.0,
            1.0,
            True,
            has_input=False,
            default_reduce_ratio=0.0,
            source="ILA Table 3 I/O; map-only generator, writes its block to HDFS",
        ),
        _p(
            "randomwriter",
            0.01,
            0.0,
            0.0,
            1.0,
            True,
            has_input=False,
            default_reduce_ratio=0.0,
            source="ILA Table 3 'RWrite' I/O; map-only random writer",
        ),
        _p(
            "grep",
            0.015,
            0.01,
            0.01,
            0.005,
            True,
            default_reduce_ratio=0.02,
            source="ILA Table 3 I/O; few matches",
        ),
        _p(
            "distgrep",
            0.015,
            0.01,
            0.01,
            0.005,
            True,
            default_reduce_ratio=0.02,
            source="HybridMR §IV I/O-bound",
        ),
        _p(
            "wordcount",
            0.04,
            0.03,
            0.3,
            0.1,
            True,
            default_reduce_ratio=0.1,
            source="ILA Table 3 'WCount' I/O; combiner shrinks map output",
        ),
        _p(
            "twitter",
            0.035,
            0.03,
            0.5,
            0.2,
            True,
            default_reduce_ratio=0.1,
            source="HybridMR §IV I/O-bound (Twitter graph analysis)",
        ),
        _p(
            "piest",
            0.30,
            0.01,
            0.0001,
            0.0,
            False,
            has_input=False,
            default_reduce_ratio=0.0,
            source="ILA Table 3 CPU; Monte-Carlo samples, one reduce",
        ),
        _p(
            "bayes",
            0.22,
            0.1,
            0.2,
            0.01,
            False,
            default_reduce_ratio=0.05,
            source="ILA Table 3 CPU (Mahout naive Bayes training)",
        ),
        _p(
            "kmeans",
            0.30,
            0.05,
            0.01,
            0.001,
            False,
            default_reduce_ratio=0.05,
            source="ILA Table 3 'Kmean' CPU; HybridMR Fig. 1 CPU-bound",
        ),
        _p(
            "canopy",
            0.20,
            0.05,
            0.01,
            0.001,
            False,
            default_reduce_ratio=0.05,
            source="ILA Table 3 CPU (Mahout canopy clustering)",
        ),
        _p(
            "matrix",
            0.35,
            0.1,
            0.1,
            0.05,
            False,
            default_reduce_ratio=0.05,
            source="ILA Table 3 CPU (matrix add and multiply)",
        ),
        _p(
            "crypto-gpu",
            4.0,
            0.01,
            0.001,
            0.0005,
            False,
            gpu_speedup=3.0,
            default_reduce_ratio=0.0,
            source="Lee §4.4.2: with one of two nodes a cg1 (GPU) the job runs 2x faster "
            "=> a GPU node does ~3x the work of a cc1 node: (1+3)/(1+1) = 2; a dictionary "
            "attack hashes each input word many times: 4 core-s per MB",
        ),
        _p(
            "gridmix",
            0.05,
            0.04,
            0.5,
            0.2,
            True,
            default_reduce_ratio=0.1,
            source="Lee §4.4.1 Gridmix2 production mix (average character)",
        ),
    ]
}

# Each application's memory character (mem_pressure, mem_sensitivity) for cpu.py's
# contention below the cores.  Bubble-Up (Mars et al., MICRO 2011) and Paragon
# (Delimitrou & Kozyrakis, ASPLOS 2013) measure that streaming codes press the memory
# system hardest but lose little to others (no cache reuse to lose), while codes that reuse
# a cache-sized working set (hash tables, centroids, matrix tiles) are the sensitive ones,
# and register-bound codes are neither.  Values on a 0..1 scale, chosen by that reading of
# each job's map/reduce code (no paper measures Hadoop jobs this way); the calibration fits
# membw_alpha/membw_capacity, not these.
MEMORY_CHARACTER: dict[str, tuple[float, float, str]] = {
    "terasort": (0.9, 0.3, "in-memory sort and merge of spill buffers: streaming"),
    "sort": (0.9, 0.3, "identity map, sort of spill buffers: streaming"),
    "teragen": (0.6, 0.2, "generates and serializes rows: streaming writes"),
    "randomwriter": (0.6, 0.2, "generates random bytes: streaming writes"),
    "grep": (0.7, 0.2, "regex scan over text: streaming reads"),
    "distgrep": (0.7, 0.2, "regex scan over text: streaming reads"),
    "wordcount": (0.6, 0.4, "tokenizes a stream into a combiner hash map"),
    "twitter": (0.6, 0.5, "graph adjacency lists: pointer chasing over large tables"),
    "piest": (0.05, 0.05, "Monte-Carlo sampling in registers (Halton sequence)"),
    "bayes": (0.5, 0.7, "feature counting in large hash maps: LLC-sensitive"),
    "kmeans": (0.4, 0.6, "streams points against cached centroids"),
    "canopy": (0.3, 0.5, "streams points against cached canopy centres"),
    "matrix": (0.7, 0.6, "matrix tiles: bandwidth-bound and cache-blocked"),
    "crypto-gpu": (0.1, 0.1, "hashing words: compute-bound in registers"),
    "gridmix": (0.6, 0.4, "production mix of sort-like and text jobs"),
}
PROFILES = {
    name: p.with_(mem_pressure=MEMORY_CHARACTER[name][0], mem_sensitivity=MEMORY_CHARACTER[name][1])
    for name, p in PROFILES.items()
}

# gridmix2's production data (Lee §4.4.1's jobs; configs/lee-cloud.yaml): its generator
# (Hadoop src/benchmarks/gridmix2/generateGridmix2data.sh) writes the SequenceFile sets
# ("web simulated data blocks", VARCOMPSEQ) with "-D mapred.output.compress=true" and
# block compression (the default zlib codec): 4162.6 MiB of records in 1040.65 MiB per
# file on HDFS, ~4x; its text sets (javaSort's) are written uncompressed.  The thesis
# itself only says "sorts, data scans, and 'monster query'" (§2.3).  Decompressing them
# costs zlib's inflate: ~100 MB of records per second on the reference core (zlib's
# inflate runs at ~300-400 MB/s on a current core, ~3x a 2010 EC2 compute unit).
GRIDMIX2_COMPRESSION = 4162.6 / 1040.65
INFLATE_CPU_S_PER_MB = 0.01
_GRIDMIX2 = {
    "monsterquery": ("gridmix", "gridmix2 monsterQuery, stage 1"),
    "webdatasort": ("sort", "gridmix2 webdataSort: identity map and reduce"),
    "webdatascan": ("grep", "gridmix2 webdataScan: keeps 0.2 % of the records"),
    "combiner": ("wordcount", "gridmix2 combiner: word count with its combiner"),
}
for _name, (_base, _what) in _GRIDMIX2.items():
    PROFILES[_name] = PROFILES[_base].with_(
        name=_name,
        input_compression=GRIDMIX2_COMPRESSION,
        decompress_cpu_s_per_mb=INFLATE_CPU_S_PER_MB,
        source=f"Lee §4.4.1; {_what}; block-compressed SequenceFile input (~4x, zlib)",
    )


def get_profile(name: str) -> JobProfile:
    try:
        return PROFILES[name.lower()]
    except KeyError:
        raise KeyError(
            f"unknown job profile {name!r}; expected one of {sorted(PROFILES)}"
        ) from None


@dataclass(frozen=True)
class JobSpec:
    """A job as a workload generator or trace reader describes it (no simulator state)."""

    name: str
    profile: JobProfile
    submit_s: float
    n_maps: int
    n_reduces: int
    input_mb: float  # total input (for jobs without input: data generated by the maps)
    user: str = "default"
    pool: str = "default"
    weight: float = 1.0
    deadline_s: float | None = None
    map_durations_s: tuple[float, ...] | None = None  # trace-given task times (unused by default)


PENDING, RUNNING, DONE = 0, 1, 2


class TaskKind(str, Enum):
    """A task's kind.  Its members are the strings ``"map"`` and ``"reduce"`` (they compare,
    hash, print and serialize as those), so task logs, CSVs and ``job.stats["map"]``
    read the same; code names them ``MAP`` and ``REDUCE``."""

    MAP = "map"
    REDUCE = "reduce"

    __str__ = str.__str__
    __format__ = str.__format__
    __hash__ = str.__hash__


MAP, REDUCE = TaskKind.MAP, TaskKind.REDUCE


@dataclass(eq=False)
class Task:
    job: Job
    index: int
    kind: str
    input_mb: float
    noise: tuple[float, ...]
    block: object = None  # hdfs.Block for maps with input
    state: int = PENDING
    attempts: list = field(default_factory=list)
    running: list = field(default_factory=list)  # running Attempt objects
    finish_s: float | None = None
    output_vm: object = None  # VM holding this map's output (for the shuffle)
    failures: int = 0  # attempts that FAILED (not killed): max_task_attempts fails the job

    @property
    def id(self) -> str:
        return f"{self.job.id}/{'m' if self.kind == MAP else 'r'}{self.index}"


@dataclass(eq=False)
class Attempt:
    task: Task
    number: int
    vm: object
    start_s: float
    speculative: bool = False
    locality: int | None = None
    end_s: float | None = None
    # success; killed (backup lost the race, control kill, job over); evicted / failed (its
    # host was lost); lost_output (succeeded, then its map output was lost); missing_block
    # (the input block had no live replica: the attempt FAILED)
    outcome: str = "running"
    phase: int = 0  # index into the task's phases
    n_phases: int = 3
    work: object = None  # the execution.Work in progress
    works: list = field(default_factory=list)  # parallel works (shuffle copies)
    process: simpy.Process | None = None
    read_mb: float = 0.0
    cpu_s: float = 0.0
    src: object = None  # map: the replica VM its block was read from
    fetched: int = 0  # reduce: map outputs copied so far
    n_maps: int = 0

    def progress(self, now: float) -> float:
        """Hadoop-style progress in [0, 1]: completed phases plus the current one's fraction
        (a reduce's shuffle phase counts copied map outputs, as Hadoop's copy phase does)."""
        frac = 0.0
        works = self.works or ([self.work] if self.work is not None else [])
        if self.phase == 0 and self.n_maps:
            frac = self.fetched / self.n_maps
        elif works:
            tot = sum(w.total for w in works)
            left = sum(w.remaining_at(now) for w in works)
            frac = 1.0 - left / tot if tot > 0 else 1.0
        return min(1.0, (self.phase + frac) / self.n_phases)


@dataclass(eq=False)
class MapOutput:
    """One finished map's intermediate data, as the shuffle sees it."""

    map_index: int
    vm: object
    mb: float
    lost: bool = False
    seq: int = 0  # its place in job.outputs (shuffle.record_output)


@dataclass(eq=False)
class Job:
    id: int
    spec: JobSpec
    maps: list[Task]
    reduces: list[Task]
    input_file: object = None
    arrived_s: float | None = None
    finish_s: float | None = None
    failed_s: float | None = None  # a task failed max_task_attempts times: the job failed
    allowed_pools: frozenset[str] | None = None  # set by Scheduler.place_job
    # progress counters
    maps_done: int = 0
    reduces_done: int = 0
    running_maps: int = 0
    running_reduces: int = 0
    # shuffle bookkeeping
    outputs: list[MapOutput] = field(default_factory=list)
    output_event: object = None  # simpy.Event fired when a map output appears
    out_index: object = None  # shuffle.OutputIndex: the outputs by source rack
    # pending-map indices (lazy deletion); filled by the cluster
    pending_by_vm: dict = field(default_factory=dict)
    pending_by_host: dict = field(default_factory=dict)
    pending_by_rack: dict = field(default_factory=dict)
    pending_maps: list = field(default_factory=list)
    pending_reduces: list = field(default_factory=list)
    n_pending_maps: int = 0
    n_pending_reduces: int = 0
    # measured demand of finished tasks (monitoring, docs/model.md §2)
    stats: dict = field(
        default_factory=lambda: {MAP: [0, 0.0, 0.0, 0.0, 0.0], REDUCE: [0, 0.0, 0.0, 0.0, 0.0]}
    )  # n, sum s, sum cpu s, sum MB read, sum MB written (Hadoop's CPU and FileSystem counters)
    ready: bool = False  # reduces may start (slow-start reached)
    running_set: dict = field(default_factory=dict)  # Task -> None, tasks with a running attempt
    # the same by kind, each in launch order: a reduce slot's speculation check (every
    # heartbeat of every job with its reduces out) scans the few reduces, not ~40 maps
    running_of: dict = field(default_factory=lambda: {MAP: {}, REDUCE: {}})
    rate_by_type: dict = field(default_factory=dict)  # host type -> [map seconds, map MB]
    key: int = 0  # the job's stable key for its random streams (rng.job_keys)
    out_rng: object = None  # its output blocks' replica draws (from its first output on)
    drawn: bool = False  # its task noise and input blocks exist (Simulation.materialize)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def profile(self) -> JobProfile:
        return self.spec.profile

    @property
    def weight(self) -> float:
        return self.spec.weight

    @property
    def done(self) -> bool:
        return self.finish_s is not None

    @property
    def over(self) -> bool:
        """Completed or failed: nothing of it runs any more."""
        return self.finish_s is not None or self.failed_s is not None

    @property
    def running_tasks(self) -> int:
        return self.running_maps + self.running_reduces

    def reduces_ready(self, slowstart: float) -> bool:
        n = len(self.maps)
        return n == 0 or self.maps_done >= slowstart * n
