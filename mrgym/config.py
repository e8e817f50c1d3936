"""The scenario schema: typed, validated, YAML <-> objects.

``load_scenario("ila72")`` reads ``configs/ila72.yaml``; a path or a dict works too, and
``overrides`` (a nested dict or dotted keys such as ``{"hdfs.replication": 2}``) are merged
before validation.  Unknown keys and out-of-range values raise :class:`ScenarioError` with
one line naming the key and what was expected (``ila72.cluster.racks: must be >= 1, got 0``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mrgym.sim.jobs import PROFILES
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import CATALOG

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


class ScenarioError(ValueError):
    """A scenario that cannot be built; the message names the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InstanceSpec(_Strict):
    cores: float = Field(gt=0)
    core_speed: float = Field(gt=0)
    disk_mbps: float = Field(gt=0)
    nic_gbps: float = Field(gt=0)
    gpus: int = Field(0, ge=0)
    price_per_hour: float = Field(0.0, ge=0)
    spot: bool = False
    virtualized: bool = True
    power_idle_w: float = Field(100.0, ge=0)
    power_max_w: float = Field(250.0, ge=0)


class VmSpec(_Strict):
    vcpus: float = Field(2.0, gt=0)
    map_slots: int = Field(2, ge=0)
    reduce_slots: int = Field(1, ge=0)


class InteractiveSpec(_Strict):
    app: str = "rubis"
    vms_per_host: int = Field(1, ge=1)
    vcpus: float = Field(1.0, gt=0)
    base_rps: float = Field(20.0, ge=0)
    peak_rps: float = Field(60.0, ge=0)
    period_s: float = Field(3600.0, gt=0)
    service_ms: float = Field(10.0, gt=0)
    sla_s: float = Field(2.0, gt=0)
    update_s: float = Field(60.0, gt=0)
    noise_sigma: float = Field(0.1, ge=0)


class HostGroup(_Strict):
    count: int = Field(ge=1)
    type: str
    vms_per_host: int = Field(1, ge=0)
    native: bool = False
    pool: str = "core"
    datanode: bool = True
    racks: list[int] | None = None
    vm: VmSpec = VmSpec()
    interactive: InteractiveSpec | None = None


class ProvisionSpec(_Strict):
    vms: int = Field(ge=1)
    pool: str = "core"
    placement: Literal["round-robin", "random"] = "round-robin"
    datanode: bool = True
    vm: VmSpec = VmSpec()


class ClusterSpec(_Strict):
    heartbeat_s: float = Field(3.0, gt=0)
    oob_heartbeat: bool = True
    sites: int = Field(1, ge=1)
    racks: int = Field(1, ge=1)
    rack_uplink_mbps: float | list[float] | None = None
    oversubscription: float = Field(4.0, gt=0)
    wan_mbps: float = Field(1000.0, gt=0)
    background: float = Field(
        0.0, ge=0, lt=1
    )  # share of rack uplinks / WAN used by outside traffic
    rack_hops: list[list[int]] | None = None
    catalog: dict[str, InstanceSpec] | None = None
    hosts: list[HostGroup]
    provision: ProvisionSpec | None = None


class HdfsSpec(_Strict):
    block_mb: float = Field(128.0, gt=0)
    replication: int = Field(3, ge=1)
    placement: Literal["hadoop-default", "random"] = "hadoop-default"
    split_architecture: bool = False


class WorkloadSpec(_Strict):
    kind: Literal["ila-table4", "pna-batch", "synthetic", "swim", "rumen", "jobs"]
    # ila-table4 / synthetic
    n_jobs: int = Field(25, ge=1)
    mean_interarrival_s: float = Field(14.0, ge=0)
    scale_maps_to: int | None = Field(None, ge=1)
    total_reduces: int | None = Field(None, ge=0)
    # pna-batch
    batch: Literal["wordcount", "terasort", "grep", "all"] = "wordcount"
    batch_gap_s: float = Field(0.0, ge=0)
    # synthetic
    profiles: dict[str, float] | None = None  # profile -> weight
    maps_median: float = Field(20.0, gt=0)
    maps_sigma: float = Field(1.5, ge=0)
    max_maps: int = Field(2000, ge=1)
    # swim / rumen
    path: str | None = None
    start_s: float = Field(0.0, ge=0)
    duration_s: float | None = Field(None, gt=0)
    max_jobs: int | None = Field(None, ge=1)
    time_scale: float = Field(1.0, gt=0)
    reduce_mb: float = Field(1024.0, gt=0)
    base_profile: str = "gridmix"
    # explicit list
    jobs: list[dict[str, Any]] | None = None
    users: int = Field(1, ge=1)


class SpotSpec(_Strict):
    hazard_per_hour: float = Field(0.0, ge=0)
    notice_s: float = Field(120.0, ge=0)
    price_factor: float = Field(0.35, gt=0, le=1)


class FailureSpec(_Strict):
    mtbf_hours: float | None = Field(None, gt=0)
    repair_s: float = Field(600.0, gt=0)


class DynamicsSpec(_Strict):
    spot: SpotSpec | None = None
    failures: FailureSpec | None = None


class RunSpec(_Strict):
    max_sim_time_s: float = Field(86400.0, gt=0)


def _execution_model() -> type[BaseModel]:
    fields = {name: (type(val), Field(val, ge=0)) for name, val in ModelParams().__dict__.items()}
    from pydantic import create_model

    return create_model("ExecutionSpec", __base__=_Strict, **fields)


ExecutionSpec = _execution_model()


class Scenario(_Strict):
    name: str = "scenario"
    description: str = ""
    cluster: ClusterSpec
    hdfs: HdfsSpec = HdfsSpec()
    workload: WorkloadSpec
    dynamics: DynamicsSpec = DynamicsSpec()
    execution: ExecutionSpec = ExecutionSpec()  # type: ignore[valid-type]
    run: RunSpec = RunSpec()

    @model_validator(mode="after")
    def _cross_checks(self) -> Scenario:
        types = set(CATALOG) | set(self.cluster.catalog or {})
        for i, g in enumerate(self.cluster.hosts):
            if g.type not in types:
                raise _KeyError(
                    f"cluster.hosts.{i}.type", f"must be one of {sorted(types)}, got {g.type!r}"
                )
            if g.racks and max(g.racks) >= self.cluster.racks:
                raise _KeyError(
                    f"cluster.hosts.{i}.racks",
                    f"rack ids must be < cluster.racks={self.cluster.racks}, got {g.racks}",
                )
        workers = sum(g.count * (1 if g.native else g.vms_per_host) for g in self.cluster.hosts)
        workers += self.cluster.provision.vms if self.cluster.provision else 0
        if workers == 0:
            raise _KeyError("cluster.hosts", "must provide at least one worker VM, got none")
        total_hosts = sum(g.count for g in self.cluster.hosts)
        if total_hosts < self.cluster.racks:
            raise _KeyError(
                "cluster.racks",
                f"must be <= the number of hosts ({total_hosts}), got {self.cluster.racks}",
            )
        datanodes = sum(
            g.count * (1 if (g.native or self.hdfs.split_architecture) else g.vms_per_host)
            for g in self.cluster.hosts
            if g.datanode
        )
        if self.cluster.provision and self.cluster.provision.datanode:
            datanodes += self.cluster.provision.vms
        if self.hdfs.replication > datanodes:
            raise _KeyError(
                "hdfs.replication",
                f"must be <= the number of DataNodes ({datanodes}), got {self.hdfs.replication}",
            )
        if self.cluster.rack_hops is not None:
            n = self.cluster.racks
            if len(self.cluster.rack_hops) != n or any(len(r) != n for r in self.cluster.rack_hops):
                raise _KeyError("cluster.rack_hops", f"must be a {n}x{n} matrix")
        if isinstance(self.cluster.rack_uplink_mbps, list) and not self.cluster.rack_uplink_mbps:
            raise _KeyError("cluster.rack_uplink_mbps", "must be a number or a non-empty list")
        w = self.workload
        if w.profiles:
            for p in w.profiles:
                if p.lower() not in PROFILES:
                    raise _KeyError(f"workload.profiles.{p}", f"must be one of {sorted(PROFILES)}")
        if w.kind in ("swim", "rumen") and not w.path:
            raise _KeyError("workload.path", f"is required for kind {w.kind!r}")
        if w.kind == "jobs" and not w.jobs:
            raise _KeyError("workload.jobs", "must list at least one job for kind 'jobs'")
        return self


class _KeyError(ValueError):
    def __init__(self, key: str, msg: str):
        super().__init__(f"{key}: {msg}")


# -- loading ---------------------------------------------------------------------------------
def available_scenarios() -> list[str]:
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def _merge(base: Any, over: dict, prefix: str = "") -> Any:
    """Merge ``over`` into a copy of ``base``; dotted keys reach into mappings and lists
    (``cluster.hosts.0.count``)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        head, _, rest = str(k).partition(".")
        if isinstance(out, list):
            if not head.isdigit() or int(head) >= len(out):
                raise ScenarioError(f"{prefix}{head}: list index out of range (0..{len(out) - 1})")
            idx = int(head)
            out[idx] = _merge(out[idx], {rest: v}, f"{prefix}{head}.") if rest else v
            continue
        if not isinstance(out, dict):
            raise ScenarioError(f"{prefix}{k}: cannot set a key inside a {type(out).__name__}")
        if rest:
            sub = out.get(head) if out.get(head) is not None else {}
            out[head] = _merge(sub, {rest: v}, f"{prefix}{head}.")
        elif isinstance(v, dict) and isinstance(out.get(head), dict):
            out[head] = _merge(out[head], v, f"{prefix}{head}.")
        else:
            out[head] = v
    return out


def _format(e: ValidationError, name: str) -> str:
    err = e.errors()[0]
    key = ".".join(str(x) for x in err["loc"])
    msg = err["msg"]
    typ = err["type"]
    ctx = err.get("ctx") or {}
    if typ == "extra_forbidden":
        msg = "unknown key"
    elif typ in ("greater_than_equal", "greater_than", "less_than", "less_than_equal"):
        op = {
            "greater_than_equal": ">=",
            "greater_than": ">",
            "less_than": "<",
            "less_than_equal": "<=",
        }[typ]
        bound = next(iter(ctx.values()))
        msg = f"must be {op} {bound}, got {err.get('input')!r}"
    elif typ == "value_error" and isinstance(ctx.get("error"), _KeyError):
        return f"{name}.{ctx['error']}"
    elif typ == "missing":
        msg = "is required"
    else:
        msg = f"{msg}, got {err.get('input')!r}"
    loc = f"{name}.{key}" if key else name
    return f"{loc}: {msg}"


def load_scenario(source: str | Path | dict | Scenario, overrides: dict | None = None) -> Scenario:
    """A bundled scenario name, a YAML path, a dict, or a Scenario; plus overrides."""
    if isinstance(source, Scenario):
        if not overrides:
            return source
        data, name = source.model_dump(), source.name
    elif isinstance(source, dict):
        data, name = copy.deepcopy(source), str(source.get("name", "scenario"))
    else:
        path = Path(source)
        if not path.suffix:
            path = CONFIG_DIR / f"{source}.yaml"
            if not path.exists():
                raise ScenarioError(
                    f"unknown scenario {str(source)!r}; expected one of {available_scenarios()} or a YAML path"
                )
        if not path.exists():
            raise ScenarioError(f"scenario file {str(source)!r} does not exist")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ScenarioError(f"{path.name}: not valid YAML ({e})") from None
        if not isinstance(data, dict):
            raise ScenarioError(
                f"{path.name}: must be a mapping of keys, got {type(data).__name__}"
            )
        name = str(data.setdefault("name", path.stem))
    if overrides:
        data = _merge(data, overrides, f"{name}.")
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(_format(e, name)) from None
