"""The scenario schema: typed, validated, YAML <-> objects.

``load_scenario("ila72")`` reads ``configs/ila72.yaml``; a path or a dict works too, and
``overrides`` (a nested dict or dotted keys such as ``{"hdfs.replication": 2}``) are merged
before validation.  Unknown keys and out-of-range values raise :class:`ScenarioError` with
one line naming the key and what was expected (``ila72.cluster.racks: must be >= 1, got 0``).

Every number has finite bounds (no inf, no NaN), so no scenario can make the simulator
loop forever, divide by zero or run out of memory.  Limits on size, each named in the
error that enforces it:

* a cluster has at most 20 000 hosts and 20 000 VMs (workers, DataNodes and interactive
  VMs together) in at most 2 000 racks; ``ila2400``, the scale test, has 2 400 VMs;
* a workload has at most 100 000 jobs and 1 000 000 map tasks (and 1 000 000 reduce
  tasks); an explicit job repeats at most 10 000 times (``ila2400``: 100 jobs, 15 000
  maps); generated and trace workloads are checked when drawn (mrgym.workloads);
* ``run.max_sim_time_s`` and every time in a scenario are at most 1e8 s (about 3 years);
* at most 1 000 000 host failures are expected over a run (hosts x time / MTBF);
* a scenario file is at most 4 MiB (about 130 000 inline job entries, a few seconds to
  parse); error messages show at most ~80 characters of a value.
"""

from __future__ import annotations

import copy
import re
import reprlib
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from mrgym.sim.jobs import PROFILES
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import CATALOG
from mrgym.workloads import MAX_JOBS, MAX_REPEAT, MAX_TASKS
from mrgym.workloads.paper_mixes import default_reduces, ila_total_maps


def _bundled_config_dir() -> Path:
    """Where the bundled scenarios live: a wheel ships the top-level ``configs/`` as package
    data ``mrgym/_configs`` (pyproject.toml); a source checkout or editable install has no
    such folder and reads ``configs/`` beside the package."""
    from importlib.resources import files  # used once, at import time

    installed = files("mrgym") / "_configs"
    if isinstance(installed, Path) and installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "configs"


CONFIG_DIR = _bundled_config_dir()

MAX_HOSTS = 20_000
MAX_VMS = 20_000  # workers + DataNode VMs + interactive VMs
MAX_RACKS = 2_000
MAX_TIME_S = 1e8  # seconds: run length, submit times, periods
MAX_FAILURES = 1_000_000  # expected host failures over a run
MAX_MB = 1e9  # one job's input: 1 PB
MAX_SLOTS = 256  # map or reduce slots of one VM
MAX_FILE_BYTES = 4 * 1024**2  # parsing YAML costs ~2 s per MiB even with libyaml
__all__ = [
    "MAX_FAILURES",
    "MAX_HOSTS",
    "MAX_JOBS",
    "MAX_REPEAT",
    "MAX_RACKS",
    "MAX_TASKS",
    "MAX_TIME_S",
    "MAX_VMS",
    "Scenario",
    "ScenarioError",
    "available_scenarios",
    "load_scenario",
    "parse_yaml",
    "read_yaml_file",
    "short",
]


class ScenarioError(ValueError):
    """A scenario that cannot be built; the message names the key."""


# reprlib never expands more than a few items or levels, so even a huge input (or a YAML
# "billion laughs" of aliases) costs microseconds to show.
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 6, 6, 4
_REPR.maxset = _REPR.maxfrozenset = 6
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def short(value: Any, limit: int = 80) -> str:
    """A repr of ``value`` for a one-line error message, at most ``limit`` characters."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: Any, limit: int = 40) -> str:
    """A mapping key as it appears in an error's dotted key, cut to ``limit`` characters."""
    text = str(key)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error(message: str, **ctx: Any) -> PydanticCustomError:
    """A validation error whose message is used as is (``at`` names a list index)."""
    return PydanticCustomError("mrgym", message, ctx)


def _plain_int(value: Any) -> Any:
    # pydantic's lax mode reads True as 1 and "3" as 3; in a scenario both are mistakes
    if isinstance(value, (bool, str)):
        raise _error("must be an integer, got {got}", got=short(value))
    return value


def _plain_float(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        raise _error("must be a number, got {got}", got=short(value))
    return value


def _label(value: Any) -> Any:
    # names and users may be written as numbers in YAML (user: 3)
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Int = Annotated[int, BeforeValidator(_plain_int)]
Float = Annotated[float, BeforeValidator(_plain_float)]
Label = Annotated[str, BeforeValidator(_label), Field(max_length=200)]
PROFILE_HINT = "a job profile name such as 'grep' or 'terasort' (see mrgym.sim.jobs.PROFILES)"


def _check_profile(value: Any) -> str:
    if not isinstance(value, str) or value.lower() not in PROFILES:
        raise _error("must be {hint}, got {got}", hint=PROFILE_HINT, got=short(value))
    return value


Profile = Annotated[str, BeforeValidator(_check_profile)]


class _Strict(BaseModel):
    # no inf or NaN anywhere: either makes the simulator loop forever or fail mid-run
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class InstanceSpec(_Strict):
    cores: Float = Field(ge=0.1, le=1024)
    core_speed: Float = Field(ge=0.01, le=100)
    disk_mbps: Float = Field(ge=1, le=1e5)
    nic_gbps: Float = Field(ge=0.001, le=1e4)
    gpus: Int = Field(0, ge=0, le=64)
    price_per_hour: Float = Field(0.0, ge=0, le=1e4)
    spot: bool = False
    virtualized: bool = True
    power_idle_w: Float = Field(100.0, ge=0, le=1e5)
    power_max_w: Float = Field(250.0, ge=0, le=1e5)  # >= power_idle_w (cross-checked)


class VmSpec(_Strict):
    vcpus: Float = Field(2.0, ge=0.01, le=1024)
    # guest memory: its page cache absorbs the worker's writes (execution.dirty_ratio)
    memory_gb: Float = Field(2.0, ge=0, le=1e5)
    map_slots: Int = Field(2, ge=0, le=MAX_SLOTS)
    reduce_slots: Int = Field(1, ge=0, le=MAX_SLOTS)


class InteractiveSpec(_Strict):
    app: str = Field("rubis", max_length=100)
    vms_per_host: Int = Field(1, ge=1, le=64)
    vcpus: Float = Field(1.0, ge=0.01, le=1024)
    base_rps: Float = Field(20.0, ge=0, le=1e6)
    peak_rps: Float = Field(60.0, ge=0, le=1e6)
    period_s: Float = Field(3600.0, ge=1, le=MAX_TIME_S)
    service_ms: Float = Field(10.0, ge=0.001, le=1e6)
    sla_s: Float = Field(2.0, ge=0.001, le=1e6)
    # one load update per period: below 1 s the updates alone would swamp the event queue
    update_s: Float = Field(60.0, ge=1, le=MAX_TIME_S)
    noise_sigma: Float = Field(0.1, ge=0, le=2)


class HostGroup(_Strict):
    count: Int = Field(ge=1, le=MAX_HOSTS)
    type: str = Field(max_length=100)
    vms_per_host: Int = Field(1, ge=0, le=64)
    native: bool = False
    pool: str = Field("core", max_length=100)
    datanode: bool = True
    racks: list[Annotated[Int, Field(ge=0)]] | None = Field(None, max_length=MAX_RACKS)
    vm: VmSpec = VmSpec()
    interactive: InteractiveSpec | None = None


class ProvisionSpec(_Strict):
    vms: Int = Field(ge=1, le=MAX_VMS)
    pool: str = Field("core", max_length=100)  # must be the pool of some host group
    placement: Literal["round-robin", "random"] = "round-robin"
    datanode: bool = True
    vm: VmSpec = VmSpec()


def _mbps(value: Any, at: int | None = None) -> float:
    """One rack uplink in Mbit/s: a finite number in [1, 1e7]."""
    extra = {} if at is None else {"at": at}
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float)):
        raise _error("must be a number of Mbit/s, got {got}", got=short(value), **extra)
    if not 1 <= value <= 1e7:  # also refuses NaN
        raise _error("must be in [1, 1e7] Mbit/s, got {got}", got=short(value), **extra)
    return float(value)


class ClusterSpec(_Strict):
    heartbeat_s: Float = Field(3.0, ge=0.1, le=3600)
    oob_heartbeat: bool = True
    sites: Int = Field(1, ge=1, le=MAX_RACKS)
    racks: Int = Field(1, ge=1, le=MAX_RACKS)
    # Mbit/s, or a list cycled over the racks (TARA's 800..200)
    rack_uplink_mbps: float | list[float] | None = None
    oversubscription: Float = Field(4.0, ge=0.01, le=1000)
    wan_mbps: Float = Field(1000.0, ge=1, le=1e7)
    # share of rack uplinks / WAN used by outside traffic
    background: Float = Field(0.0, ge=0, le=0.99)
    rack_hops: list[list[Annotated[Int, Field(ge=0, le=100)]]] | None = Field(
        None, max_length=MAX_RACKS
    )
    catalog: dict[str, InstanceSpec] | None = Field(None, max_length=1000)
    hosts: list[HostGroup] = Field(max_length=1000)
    provision: ProvisionSpec | None = None

    @field_validator("rack_uplink_mbps", mode="plain")
    @classmethod
    def _uplinks(cls, value: Any) -> float | list[float] | None:
        # validated by hand: a float | list union would report both branches' errors
        if value is None:
            return None
        if isinstance(value, list):
            if not value or len(value) > MAX_RACKS:
                raise _error(
                    "must be a number or a list of 1 to {n} numbers, got {k} items",
                    n=MAX_RACKS,
                    k=len(value),
                )
            return [_mbps(v, i) for i, v in enumerate(value)]
        return _mbps(value)


class HdfsSpec(_Strict):
    block_mb: Float = Field(128.0, gt=0, le=1e5)
    replication: Int = Field(3, ge=1, le=100)
    placement: Literal["hadoop-default", "random"] = "hadoop-default"
    split_architecture: bool = False


class JobItem(_Strict):
    """One job of ``workload.jobs`` (mrgym.workloads.explicit)."""

    profile: Profile
    maps: Int = Field(ge=1, le=MAX_TASKS)
    reduces: Int | None = Field(None, ge=0, le=MAX_TASKS)  # None: the profile's default
    submit_s: Float = Field(0.0, ge=0, le=MAX_TIME_S)
    input_mb: Float | None = Field(None, ge=0, le=MAX_MB)  # None: maps x block_mb
    name: Label | None = None
    user: Label | None = None
    weight: Float = Field(1.0, gt=0, le=1e6)
    deadline_s: Float | None = Field(None, gt=0, le=MAX_TIME_S)
    repeat: Int | None = Field(None, ge=1, le=MAX_REPEAT)
    every_s: Float = Field(0.0, ge=0, le=MAX_TIME_S)


class WorkloadSpec(_Strict):
    kind: Literal["ila-table4", "pna-batch", "synthetic", "swim", "rumen", "jobs"]
    # ila-table4 / synthetic
    n_jobs: Int = Field(25, ge=1, le=MAX_JOBS)
    mean_interarrival_s: Float = Field(14.0, ge=0, le=MAX_TIME_S)
    scale_maps_to: Int | None = Field(None, ge=1, le=MAX_TASKS)
    total_reduces: Int | None = Field(None, ge=0, le=MAX_TASKS)
    # pna-batch
    batch: Literal["wordcount", "terasort", "grep", "all"] = "wordcount"
    batch_gap_s: Float = Field(0.0, ge=0, le=MAX_TIME_S)
    # synthetic
    profiles: dict[Profile, Annotated[Float, Field(ge=0, le=1e6)]] | None = Field(
        None, max_length=100
    )  # profile -> weight
    maps_median: Float = Field(20.0, gt=0, le=MAX_TASKS)
    maps_sigma: Float = Field(1.5, ge=0, le=5)
    max_maps: Int = Field(2000, ge=1, le=MAX_TASKS)
    # swim / rumen
    path: str | None = Field(None, max_length=4096)
    start_s: Float = Field(0.0, ge=0, le=MAX_TIME_S)
    duration_s: Float | None = Field(None, gt=0, le=MAX_TIME_S)
    max_jobs: Int | None = Field(None, ge=1, le=MAX_JOBS)
    time_scale: Float = Field(1.0, ge=1e-3, le=1e6)
    reduce_mb: Float = Field(1024.0, ge=1, le=MAX_MB)
    base_profile: Profile = "gridmix"
    # explicit list
    jobs: list[JobItem] | None = Field(None, max_length=MAX_JOBS)
    users: Int = Field(1, ge=1, le=10_000)


class SpotSpec(_Strict):
    hazard_per_hour: Float = Field(0.0, ge=0, le=3600)
    notice_s: Float = Field(120.0, ge=0, le=86400)
    price_factor: Float = Field(0.35, gt=0, le=1)


class FailureSpec(_Strict):
    mtbf_hours: Float | None = Field(None, gt=0, le=1e6)
    repair_s: Float = Field(600.0, ge=1, le=MAX_TIME_S)
    # the repaired host comes back with its disk (its HDFS blocks); false: a replaced machine
    keeps_disk: bool = True


class DynamicsSpec(_Strict):
    spot: SpotSpec | None = None
    failures: FailureSpec | None = None


class RunSpec(_Strict):
    max_sim_time_s: Float = Field(86400.0, gt=0, le=MAX_TIME_S)


# Bounds of every ModelParams field (mrgym/sim/params.py says what each means).  A field
# missing here gets _DEFAULT_BOUNDS; tests/test_bad_input.py asserts none is missing.
EXECUTION_BOUNDS: dict[str, dict[str, float]] = {
    "disk_thrash": {"ge": 0, "le": 10},  # exp(-10) per extra stream is already the floor
    "disk_thrash_floor": {"gt": 0, "le": 1},  # 0 would stall a busy disk for ever
    "dom0_cores_per_stream": {"ge": 0, "le": 4},
    "corunner_penalty": {"ge": 0, "le": 0.5},  # (1 - p)^(n-1): 1 would stall the host
    "virt_cpu_overhead": {"ge": 0, "le": 10},
    "virt_io_overhead": {"ge": 0, "le": 10},
    "server_read_penalty": {"ge": 0, "le": 0.9},  # rate x (1 - p): 1 would stall the read
    "reduce_slowstart": {"ge": 0, "le": 1},  # a fraction of the job's maps
    "parallel_copies": {"ge": 1, "le": 100},  # 0 copies would never finish a shuffle
    "max_task_attempts": {"ge": 1, "le": 100},
    "block_acquire_failures": {"ge": 0, "le": 100},
    "block_retry_s": {"gt": 0, "le": 3600},
    "noise_sigma": {"ge": 0, "le": 2},
    "noise_draws_per_task": {"ge": 1, "le": 64},  # attempt k uses draw k % this
    "sample_s": {"ge": 1, "le": 3600},  # the sampler's period: 0 would loop at one instant
    "dirty_ratio": {"ge": 0, "le": 1},  # a fraction of the workers' memory
}
_DEFAULT_BOUNDS = {"ge": 0, "le": 1e6}
# The ModelParams fields that name a choice, and their choices.
EXECUTION_CHOICES: dict[str, tuple[str, ...]] = {
    "task_choice": ("hadoop", "nodegroup", "lookahead"),
}


def _execution_model() -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, val in ModelParams().__dict__.items():
        if name in EXECUTION_CHOICES:
            fields[name] = (Literal[EXECUTION_CHOICES[name]], val)
            continue
        typ = Int if isinstance(val, int) and not isinstance(val, bool) else Float
        fields[name] = (typ, Field(val, **EXECUTION_BOUNDS.get(name, _DEFAULT_BOUNDS)))
    return create_model("ExecutionSpec", __base__=_Strict, **fields)


ExecutionSpec = _execution_model()


class Scenario(_Strict):
    name: str = Field("scenario", max_length=200)
    description: str = Field("", max_length=20_000)
    cluster: ClusterSpec
    hdfs: HdfsSpec = HdfsSpec()
    workload: WorkloadSpec
    dynamics: DynamicsSpec = DynamicsSpec()
    execution: ExecutionSpec = ExecutionSpec()  # type: ignore[valid-type]
    run: RunSpec = RunSpec()

    @model_validator(mode="after")
    def _cross_checks(self) -> Scenario:
        _check_catalog(self.cluster)
        _check_hosts(self.cluster)
        _check_sizes(self.cluster, self.hdfs)
        _check_slots(self.cluster, self.workload)
        _check_hdfs(self.cluster, self.hdfs)
        _check_network(self.cluster)
        _check_workload(self.workload)
        _check_failures(self)
        return self


class _KeyError(ValueError):
    def __init__(self, key: str, msg: str):
        super().__init__(f"{key}: {msg}")


# -- cross-checks (run after every field is valid) -------------------------------------------
def _workers(g: HostGroup) -> int:
    """Worker VMs of one host of the group."""
    return 1 if g.native else g.vms_per_host


def _check_catalog(c: ClusterSpec) -> None:
    for name, t in (c.catalog or {}).items():
        if t.power_max_w < t.power_idle_w:
            raise _KeyError(
                f"cluster.catalog.{key_text(name)}.power_max_w",
                f"must be >= power_idle_w ({t.power_idle_w:g}), got {t.power_max_w:g}",
            )


def _check_hosts(c: ClusterSpec) -> None:
    types = set(CATALOG) | set(c.catalog or {})
    for i, g in enumerate(c.hosts):
        if g.type not in types:
            raise _KeyError(
                f"cluster.hosts.{i}.type",
                f"must be one of {short(sorted(types), 200)}, got {short(g.type)}",
            )
        if g.racks and max(g.racks) >= c.racks:
            raise _KeyError(
                f"cluster.hosts.{i}.racks",
                f"rack ids must be < cluster.racks={c.racks}, got {short(g.racks)}",
            )
    total_hosts = sum(g.count for g in c.hosts)
    if total_hosts < c.racks:
        raise _KeyError(
            "cluster.racks", f"must be <= the number of hosts ({total_hosts}), got {c.racks}"
        )
    if c.sites > c.racks:
        raise _KeyError("cluster.sites", f"must be <= cluster.racks ({c.racks}), got {c.sites}")
    if c.provision is not None:
        pools = sorted({g.pool for g in c.hosts})
        if c.provision.pool not in pools:
            raise _KeyError(
                "cluster.provision.pool",
                f"must be the pool of a host group ({short(pools)}), got {short(c.provision.pool)}",
            )


def _check_sizes(c: ClusterSpec, hdfs: HdfsSpec) -> None:
    hosts = sum(g.count for g in c.hosts)
    if hosts > MAX_HOSTS:
        raise _KeyError("cluster.hosts", f"at most {MAX_HOSTS:,} hosts in all, got {hosts:,}")
    workers = sum(g.count * _workers(g) for g in c.hosts)
    workers += c.provision.vms if c.provision else 0
    if workers == 0:
        raise _KeyError("cluster.hosts", "must provide at least one worker VM, got none")
    extra = sum(
        g.count * g.interactive.vms_per_host
        for g in c.hosts
        if g.interactive is not None and not g.native
    )
    if hdfs.split_architecture:  # one DataNode VM beside the workers of each host
        extra += sum(g.count for g in c.hosts if g.datanode and _workers(g) > 0)
    if workers + extra > MAX_VMS:
        raise _KeyError(
            "cluster.hosts",
            f"at most {MAX_VMS:,} VMs in all (workers, DataNodes, interactive), "
            f"got {workers + extra:,}",
        )


def _workload_has_reduces(w: WorkloadSpec) -> bool | None:
    """Whether the workload surely has reduce tasks (None: a trace, unknown until read)."""
    if w.kind == "jobs":
        return any(
            (j.reduces if j.reduces is not None else default_reduces(_profile(j.profile), j.maps))
            > 0
            for j in w.jobs or ()
        )
    if w.kind == "synthetic" and w.profiles:
        return any(default_reduces(_profile(p), 1) > 0 for p, wt in w.profiles.items() if wt > 0)
    if w.kind in ("swim", "rumen"):
        return None
    return True  # the papers' mixes and the default synthetic mix all shuffle


def _check_slots(c: ClusterSpec, w: WorkloadSpec) -> None:
    """A cluster without a map (reduce) slot never finishes a job: it would only idle
    until run.max_sim_time_s."""
    prov = c.provision
    maps = sum(g.count * _workers(g) * g.vm.map_slots for g in c.hosts)
    maps += prov.vms * prov.vm.map_slots if prov else 0
    if maps == 0:
        raise _KeyError(
            "cluster.hosts.vm.map_slots", "must be >= 1 on some worker VM, got 0 map slots in all"
        )
    reduces = sum(g.count * _workers(g) * g.vm.reduce_slots for g in c.hosts)
    reduces += prov.vms * prov.vm.reduce_slots if prov else 0
    if reduces == 0 and _workload_has_reduces(w):
        raise _KeyError(
            "cluster.hosts.vm.reduce_slots",
            "must be >= 1 on some worker VM: the workload has reduce tasks, got 0 reduce slots",
        )


def _check_hdfs(c: ClusterSpec, hdfs: HdfsSpec) -> None:
    datanodes = sum(
        g.count * (1 if (g.native or hdfs.split_architecture) else g.vms_per_host)
        for g in c.hosts
        if g.datanode
    )
    if c.provision and c.provision.datanode:
        datanodes += c.provision.vms
    if hdfs.replication > datanodes:
        raise _KeyError(
            "hdfs.replication",
            f"must be <= the number of DataNodes ({datanodes}), got {hdfs.replication}",
        )


def _check_network(c: ClusterSpec) -> None:
    if c.rack_hops is not None:
        n = c.racks
        if len(c.rack_hops) != n or any(len(r) != n for r in c.rack_hops):
            raise _KeyError("cluster.rack_hops", f"must be a {n}x{n} matrix")


def _profile(name: str):
    return PROFILES[name.lower()]


def _check_workload(w: WorkloadSpec) -> None:
    if w.profiles is not None and not any(v > 0 for v in w.profiles.values()):
        raise _KeyError("workload.profiles", "must give some profile a weight > 0")
    if w.kind in ("swim", "rumen"):
        _check_trace_path(w)
    if w.kind == "jobs":
        _check_jobs(w.jobs or [])
    if w.kind == "ila-table4":
        maps = ila_total_maps(w)
        if maps > MAX_TASKS:
            raise _KeyError(
                "workload.n_jobs",
                f"the mix has {maps:,} map tasks, more than the limit of {MAX_TASKS:,}",
            )


def _check_trace_path(w: WorkloadSpec) -> None:
    if not w.path:
        raise _KeyError("workload.path", f"is required for kind {w.kind!r}")
    p = Path(w.path)
    if p.is_dir():
        raise _KeyError(
            "workload.path", f"must be a {w.kind} trace file, got a directory {short(w.path)}"
        )
    if not p.is_file():
        raise _KeyError("workload.path", f"no such file {short(w.path)}")


def _check_jobs(jobs: list[JobItem]) -> None:
    if not jobs:
        raise _KeyError("workload.jobs", "must list at least one job for kind 'jobs'")
    n_jobs = sum(j.repeat or 1 for j in jobs)
    if n_jobs > MAX_JOBS:
        raise _KeyError("workload.jobs", f"at most {MAX_JOBS:,} jobs with repeats, got {n_jobs:,}")
    maps = sum(j.maps * (j.repeat or 1) for j in jobs)
    if maps > MAX_TASKS:
        raise _KeyError(
            "workload.jobs", f"at most {MAX_TASKS:,} map tasks with repeats, got {maps:,}"
        )
    reduces = sum((j.reduces or 0) * (j.repeat or 1) for j in jobs)
    if reduces > MAX_TASKS:
        raise _KeyError(
            "workload.jobs", f"at most {MAX_TASKS:,} reduce tasks with repeats, got {reduces:,}"
        )


def _check_failures(sc: Scenario) -> None:
    """Failures are drawn lazily, but each one is simulated (its tasks killed and re-run,
    its blocks re-replicated): bound how many a run can have, so a tiny MTBF over a long
    horizon is refused instead of running for hours."""
    f = sc.dynamics.failures
    if f is None or not f.mtbf_hours:
        return
    hosts = sum(g.count for g in sc.cluster.hosts)
    expected = hosts * sc.run.max_sim_time_s / (f.mtbf_hours * 3600.0 + f.repair_s)
    if expected > MAX_FAILURES:
        raise _KeyError(
            "dynamics.failures.mtbf_hours",
            f"{hosts:,} hosts over run.max_sim_time_s={sc.run.max_sim_time_s:,.0f} would fail "
            f"~{expected:,.0f} times, more than the limit of {MAX_FAILURES:,}; raise the MTBF",
        )


# -- scenarios -----------------------------------------------------------------------------
def available_scenarios() -> list[str]:
    """Names of the bundled scenarios (``configs/*.yaml``; ``configs/train`` holds training
    configs, not scenarios)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def _merge(base: Any, over: dict, prefix: str = "") -> Any:
    """Merge ``over`` into a copy of ``base``; dotted keys reach into mappings and lists
    (``cluster.hosts.0.count``)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        head, _, rest = str(k).partition(".")
        if isinstance(out, list):
            if not head.isdigit() or int(head) >= len(out):
                raise ScenarioError(
                    f"{prefix}{short(head, 40)}: list index out of range (0..{len(out) - 1})"
                )
            idx = int(head)
            out[idx] = _merge(out[idx], {rest: v}, f"{prefix}{head}.") if rest else v
            continue
        if not isinstance(out, dict):
            raise ScenarioError(
                f"{prefix}{short(str(k), 40)}: cannot set a key inside a {type(out).__name__}"
            )
        if rest:
            sub = out.get(head) if out.get(head) is not None else {}
            out[head] = _merge(sub, {rest: v}, f"{prefix}{head}.")
        elif isinstance(v, dict) and isinstance(out.get(head), dict):
            out[head] = _merge(out[head], v, f"{prefix}{head}.")
        else:
            out[head] = v
    return out


_BOUND_OPS = {
    "greater_than_equal": ">=",
    "greater_than": ">",
    "less_than": "<",
    "less_than_equal": "<=",
}
_INT_ERRORS = ("int_type", "int_parsing", "int_from_float", "int_parsing_size")
_FLOAT_ERRORS = ("float_type", "float_parsing")


def _key_part(part: Any) -> str | None:
    """One element of an error location as a key; None for pydantic's own tags."""
    if part == "[key]":  # the error is about a mapping key, named by the previous part
        return None
    return key_text(part)


def _bound(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 1e8 reads as 100000000, like the int bounds
    return str(value)


def _message(err: dict) -> str:
    """What was expected and what was given, for one pydantic error."""
    typ, ctx = err["type"], err.get("ctx") or {}
    got = short(err.get("input"))
    if typ == "extra_forbidden":
        return "unknown key"
    if typ in _BOUND_OPS:
        return f"must be {_BOUND_OPS[typ]} {_bound(next(iter(ctx.values())))}, got {got}"
    if typ == "missing":
        return "is required"
    if typ == "finite_number":
        return f"must be a finite number, got {got}"
    if typ in _INT_ERRORS:
        return f"must be an integer, got {got}"
    if typ in _FLOAT_ERRORS:
        return f"must be a number, got {got}"
    if typ in ("too_long", "string_too_long"):
        what = "characters" if isinstance(err.get("input"), str) else "items"
        n = len(err["input"]) if hasattr(err.get("input"), "__len__") else "more"
        return f"must have at most {ctx['max_length']:,} {what}, got {n:,}"
    if typ == "mrgym":
        return err["msg"]
    return f"{err['msg'].replace('Input should be', 'must be')}, got {got}"


def _format(e: ValidationError, name: str) -> str:
    err = e.errors()[0]
    ctx = err.get("ctx") or {}
    if err["type"] == "value_error" and isinstance(ctx.get("error"), _KeyError):
        return f"{name}.{ctx['error']}"
    parts = [p for p in map(_key_part, err["loc"]) if p is not None]
    if "at" in ctx:  # a list item checked by hand (cluster.rack_uplink_mbps)
        parts.append(str(ctx["at"]))
    key = ".".join(parts)
    loc = f"{name}.{key}" if key else name
    return f"{loc}: {_message(err)}"


# -- YAML ------------------------------------------------------------------------------------
class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, line: int):
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line = key, line


class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when built
    """A safe loader that refuses a key given twice in one mapping: PyYAML would keep the
    last one silently, so a pasted-twice key overrides the intended value unseen.  It also
    reads ``1e8`` and ``1e-6`` as numbers (YAML 1.2; PyYAML's YAML 1.1 wants a dot, so a
    bound documented as "1e8 s" could not be written as such)."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` keys may be overridden by explicit ones
                key = self.construct_object(key_node, deep=deep)
                try:
                    if key in seen:
                        raise _DuplicateKey(key, key_node.start_mark.line + 1)
                    seen.add(key)
                except TypeError:  # unhashable key: SafeLoader reports it below
                    pass
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_yaml(text: str, source: str, lines: bool = True) -> Any:
    """Parse YAML safely (no Python tags, no duplicate keys); a problem is a one-line
    :class:`ScenarioError` that starts with ``source`` (and ``:LINE`` when ``lines``)."""
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as e:
        where = f"{source}:{e.line}" if lines else source
        raise ScenarioError(f"{where}: duplicate key {short(e.key)}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}" if lines and mark is not None else source
        what = _one_line(e.problem or e.context or "syntax error")
        raise ScenarioError(f"{where}: not valid YAML: {what[:160]}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{source}: not valid YAML: {_one_line(e)[:160]}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: not valid YAML: nested too deeply") from None


# -- loading ---------------------------------------------------------------------------------
def _scenario_path(source: str | Path) -> Path:
    """The YAML file of a bundled name or a path; errors say what is wrong with it."""
    if not isinstance(source, (str, Path)):
        raise ScenarioError(
            "config: must be a bundled scenario name, a YAML path, a dict or a Scenario, "
            f"got {type(source).__name__}"
        )
    if not str(source).strip():
        raise ScenarioError(
            f"config: the scenario name is empty; expected one of {available_scenarios()} "
            "or a YAML path"
        )
    path = Path(source)
    shown = short(str(source))
    if not path.suffix:
        bundled = CONFIG_DIR / f"{source}.yaml"
        if bundled.is_file():
            return bundled
        if path.is_dir():
            raise ScenarioError(f"scenario path {shown} is a directory, expected a YAML file")
        raise ScenarioError(
            f"unknown scenario {shown}; expected one of {available_scenarios()} or a YAML path"
        )
    return path


def read_yaml_file(path: Path, source: str, what: str = "scenario") -> dict:
    """A YAML file that must hold a mapping (a scenario, a training config), read with
    :func:`parse_yaml`'s checks; every problem is one line naming ``source``."""
    if not path.exists():
        raise ScenarioError(f"{what} file {source} does not exist")
    if not path.is_file():
        raise ScenarioError(f"{what} path {source} is not a file (a directory?)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ScenarioError(f"{what} file {source} is larger than {MAX_FILE_BYTES >> 20} MiB")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise ScenarioError(f"{what} file {source} cannot be read: {why}") from None
    data = parse_yaml(text, source) or {}
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: must be a mapping of keys, got {type(data).__name__}")
    return data


def _name(value: Any, default: str) -> str:
    """The scenario name that prefixes error keys (a bad one is reported by the schema)."""
    return value if isinstance(value, str) and 0 < len(value) <= 200 else default


def load_scenario(source: str | Path | dict | Scenario, overrides: dict | None = None) -> Scenario:
    """A bundled scenario name, a YAML path, a dict, or a Scenario; plus overrides."""
    if isinstance(source, Scenario):
        if not overrides:
            return source
        data, name = source.model_dump(), source.name
    elif isinstance(source, dict):
        data, name = copy.deepcopy(source), _name(source.get("name", "scenario"), "scenario")
    else:
        path = _scenario_path(source)
        # errors name a bundled file by its name, a user's file as the user wrote it
        shown = path.name if path.parent == CONFIG_DIR else key_text(source, 120)
        data = read_yaml_file(path, shown)
        name = _name(data.setdefault("name", path.stem), path.stem)
    if overrides:
        if not isinstance(overrides, dict):
            raise ScenarioError(f"overrides must be a dict, got {type(overrides).__name__}")
        data = _merge(data, overrides, f"{name}.")
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(_format(e, name)) from None
