"""The scenario schema: one frozen pydantic model per section of a scenario file
(``cluster``, ``hdfs``, ``workload``, ``dynamics``, ``execution``, ``run``), each field
with finite bounds, and :class:`Scenario`, which runs the whole-scenario cross-checks of
:mod:`mrgym.config.checks` once every field is valid.  ``execution``'s fields are those of
:class:`mrgym.sim.params.ModelParams`, bounded by :data:`EXECUTION_BOUNDS`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    create_model,
    field_validator,
    model_validator,
)

from mrgym.config.checks import check_scenario
from mrgym.config.errors import CheckError, field_error, short
from mrgym.config.limits import MAX_HOSTS, MAX_MB, MAX_RACKS, MAX_SLOTS, MAX_TIME_S, MAX_VMS
from mrgym.sim.jobs import PROFILES
from mrgym.sim.params import ModelParams
from mrgym.workloads import MAX_JOBS, MAX_REPEAT, MAX_TASKS

# pydantic's lax mode reads True as 1, "3" and b"3" as 3 (and numpy's bool_ as a number);
# in a scenario each is a mistake
_NOT_NUMBERS = (bool, np.bool_, str, bytes, bytearray)


def _plain_int(value: Any) -> Any:
    if isinstance(value, _NOT_NUMBERS):
        raise field_error("must be an integer, got {got}", got=short(value))
    return value


def _plain_float(value: Any) -> Any:
    if isinstance(value, _NOT_NUMBERS):
        raise field_error("must be a number, got {got}", got=short(value))
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
        raise field_error("must be {hint}, got {got}", hint=PROFILE_HINT, got=short(value))
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
    # starts switched off (not billed, no tasks) until a control action ``Commission``
    # starts it (Lee §4.2's accelerator nodes); needs ``datanode: false`` (cross-checked)
    standby: bool = False


class ProvisionSpec(_Strict):
    vms: Int = Field(ge=1, le=MAX_VMS)
    pool: str = Field("core", max_length=100)  # must be the pool of some host group
    # "explicit": VM k goes onto host ``hosts[k]`` (a placement chosen outside, e.g. TARA)
    placement: Literal["round-robin", "random", "explicit"] = "round-robin"
    # host indices over all hosts in group order (cross-checked: each one of ``pool``)
    hosts: list[Annotated[Int, Field(ge=0, le=MAX_HOSTS)]] | None = Field(None, max_length=MAX_VMS)
    datanode: bool = True
    vm: VmSpec = VmSpec()

    @model_validator(mode="after")
    def _explicit_hosts(self) -> ProvisionSpec:
        # a CheckError names its key (format_validation_error shows it as is)
        if self.placement == "explicit":
            if self.hosts is None:
                raise CheckError(
                    "cluster.provision.hosts",
                    f"is required with placement 'explicit' (a list of {self.vms} host indices)",
                )
            if len(self.hosts) != self.vms:
                raise CheckError(
                    "cluster.provision.hosts",
                    f"must list one host index per VM (cluster.provision.vms={self.vms}), "
                    f"got {len(self.hosts)}",
                )
        elif self.hosts is not None:
            raise CheckError(
                "cluster.provision.hosts",
                f"is only for placement 'explicit', got placement {self.placement!r}",
            )
        return self


def _mbps(value: Any, at: int | None = None) -> float:
    """One rack uplink in Mbit/s: a finite number in [1, 1e7]."""
    extra = {} if at is None else {"at": at}
    if isinstance(value, _NOT_NUMBERS) or not isinstance(value, (int, float)):
        raise field_error("must be a number of Mbit/s, got {got}", got=short(value), **extra)
    if not 1 <= value <= 1e7:  # also refuses NaN
        raise field_error("must be in [1, 1e7] Mbit/s, got {got}", got=short(value), **extra)
    return float(value)


class ClusterSpec(_Strict):
    heartbeat_s: Float = Field(3.0, ge=0.1, le=3600)
    oob_heartbeat: bool = True
    sites: Int = Field(1, ge=1, le=MAX_RACKS)
    racks: Int = Field(1, ge=1, le=MAX_RACKS)
    # false: no topology script (Hadoop's default, topology.script.file.name unset): every
    # node is in /default-rack, so HDFS places replicas and the JobTracker picks tasks as
    # if the cluster were one rack; locality is still measured on the real racks
    rack_aware: bool = True
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
                raise field_error(
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
    # ila-table4: MB each map of a map-only generator (TeraGen, RandomWriter) generates and
    # writes; None: one HDFS block (ILA gives no size: docs/calibration.md fits it)
    generator_mb: Float | None = Field(None, gt=0, le=MAX_MB)
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
    # instance billing: "seconds" pro rata; "hourly" every begun instance-hour (EC2, 2011;
    # mrgym.sim.monitoring states the rule)
    billing: Literal["seconds", "hourly"] = "seconds"


class RunSpec(_Strict):
    max_sim_time_s: Float = Field(86400.0, gt=0, le=MAX_TIME_S)


# Bounds of every ModelParams field (mrgym/sim/params.py says what each means).  A field
# missing here gets _DEFAULT_BOUNDS; tests/test_bad_input.py asserts none is missing.
EXECUTION_BOUNDS: dict[str, dict[str, float]] = {
    "disk_thrash": {"ge": 0, "le": 10},  # exp(-10) per extra stream is already the floor
    "disk_thrash_floor": {"gt": 0, "le": 1},  # 0 would stall a busy disk for ever
    "dom0_cores_per_stream": {"ge": 0, "le": 4},
    "corunner_penalty": {"ge": 0, "le": 0.5},  # (1 - p)^(n-1): 1 would stall the host
    "membw_alpha": {"ge": 0, "le": 100},
    "membw_capacity": {"gt": 0, "le": 100},  # pressure units per core; 0 would divide by 0
    "dom0_cores": {"ge": 0, "le": 64},
    "dom0_core_s_per_mb": {"gt": 0, "le": 10},  # 0 would make Dom0's throughput infinite
    "credit_coupling": {"ge": 0, "le": 100},
    "credit_overcommit": {"ge": 0, "le": 100},
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
    "noise_tail_p": {"ge": 0, "le": 1},  # a probability per draw
    "noise_tail_alpha": {"gt": 1, "le": 10},  # <= 1: the tail's mean would be infinite
    "slow_vm_p": {"ge": 0, "le": 1},  # a probability per virtualized VM
    "slow_vm_factor": {"ge": 1, "le": 100},  # x slower; < 1 would be a fast VM
    "sample_s": {"ge": 1, "le": 3600},  # the sampler's period: 0 would loop at one instant
    "dirty_ratio": {"ge": 0, "le": 1},  # a fraction of the workers' memory
    "task_heap_mb": {"ge": 0, "le": 1e5},  # one JVM heap per running task
    "task_jvm_start_s": {"ge": 0, "le": 3600},  # core-seconds of a child JVM's start-up
}
_DEFAULT_BOUNDS = {"ge": 0, "le": 1e6}
# The ModelParams fields that switch a mechanism on (true) or off (false).
EXECUTION_SWITCHES: tuple[str, ...] = ("guest_page_cache", "compressed_input")
# The ModelParams fields that name a choice, and their choices.
EXECUTION_CHOICES: dict[str, tuple[str, ...]] = {
    "task_choice": ("hadoop", "nodegroup", "lookahead"),
    "noise_phases": ("compute", "all"),
}


def _execution_model() -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, val in ModelParams().__dict__.items():
        if name in EXECUTION_CHOICES:
            fields[name] = (Literal[EXECUTION_CHOICES[name]], val)
            continue
        if isinstance(val, bool):  # EXECUTION_SWITCHES: true/false only (1 is not true)
            fields[name] = (StrictBool, val)
            continue
        typ = Int if isinstance(val, int) else Float
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
        check_scenario(self)
        return self
