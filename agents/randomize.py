"""Domain randomization for MRCluster-v0: every episode on a different variant of a scenario.

``DomainRandomization`` wraps the environment; each ``reset`` draws a :class:`Variant` from
a :class:`RandomizationSpec` with a ``numpy.random.Generator`` seeded from reset's seed
(an unseeded reset continues the same generator, as SB3's vector envs do after their first
seeded reset), then rebuilds the inner ``MRClusterEnv`` with overrides for:

* **cluster size** — every host group's ``count`` (and ``cluster.racks``, keeping hosts
  per rack) times ``cluster_scale`` (ila72: 12 Xen servers x 6 VMs on 2 racks, ILA §5.1;
  x0.5..x2 gives 6..24 servers, 36..144 VMs).  Racks are left alone when a host group
  names its racks or the scenario has a ``rack_hops`` matrix (their indices would break);
  a provisioner's VM count scales with the hosts.  A group of DataNodes never shrinks
  below ``hdfs.replication`` hosts (HDFS needs a DataNode per replica).
* **interference strength** — the three co-location mechanisms of the execution model
  (mrgym/sim/params.py; docs/model.md §2 "Execution"): ``execution.corunner_penalty`` (CPU
  cache/memory contention), ``disk_thrash`` (seek thrashing of a shared disk, ILA §2.2
  Fig. 2) and ``dom0_cores_per_stream`` (Dom0 CPU per guest I/O stream, ILA §3.1), each
  times ``interference_scale`` and clipped to the schema's bounds
  (``mrgym.config.schema.EXECUTION_BOUNDS``); plus network contention:
  ``cluster.background``, the share of rack uplinks used by outside traffic, drawn from
  ``background``.
* **arrival rate** — times ``arrival_rate_scale``: ``workload.mean_interarrival_s`` (Table
  4 and synthetic mixes) divided by it, a trace's ``time_scale`` multiplied by it, a batch
  gap or explicit jobs' submit times divided by it.

Scales are drawn log-uniformly (x0.5 and x2 equally likely); ``background`` uniformly.  A
range ``[x, x]`` fixes that dimension (``[1, 1]`` turns it off).  The spaces depend only on
``job_slots``, so every variant has the same ones (checked at every rebuild).

Training: ``make_vec_env(make_randomized_env, n_envs, seed, env_kwargs={"base_config":
"ila72", "spec": {...}, "job_slots": 8, ...})``.  ``info["randomization"]`` after reset
says what was drawn.  The wrapper is for learned agents: a baseline bound with
``EnvPolicy`` would keep the inner env of before the rebuild, so evaluate baselines on
variants with ``run_sim(load_scenario(base, draw_variant(base, spec, rng).overrides), ...)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import gymnasium as gym
import numpy as np

from mrgym.config import Scenario, load_scenario
from mrgym.config.limits import MAX_HOSTS, MAX_RACKS, MAX_VMS
from mrgym.config.schema import EXECUTION_BOUNDS
from mrgym.envs.mr_cluster import MRClusterEnv

# the execution-model parameters that ``interference_scale`` multiplies (module docstring)
INTERFERENCE_PARAMS = ("corunner_penalty", "disk_thrash", "dom0_cores_per_stream")
MAX_SCALE = 16.0  # a cluster x16 or a rate x16 is already far out of any training range
# mixed into reset's seed so the variant stream is independent of the episode's own draws
_SALT = 0x5EED_D0A1


def _range(key: str, value: Any, hi: float, positive: bool) -> tuple[float, float]:
    """A validated ``[low, high]`` pair in ``(0, hi]`` (``positive``) or ``[0, hi]``; a
    ValueError names the key and what was expected."""
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    ok = ok and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    if ok:
        a, b = float(value[0]), float(value[1])
        ok = math.isfinite(a) and math.isfinite(b) and (a > 0 if positive else a >= 0)
        ok = ok and a <= b <= hi
    if not ok:
        low = "0 < low" if positive else "0 <= low"
        raise ValueError(
            f"randomize.{key}: expected [low, high] with {low} <= high <= {hi:g}, got {value!r}"
        )
    return (float(value[0]), float(value[1]))


@dataclass(frozen=True)
class RandomizationSpec:
    """The ranges an episode's variant is drawn from (module docstring: what each scales)."""

    cluster_scale: tuple[float, float] = (0.5, 2.0)
    interference_scale: tuple[float, float] = (0.5, 2.0)
    background: tuple[float, float] = (0.0, 0.3)
    arrival_rate_scale: tuple[float, float] = (0.5, 2.0)

    def __post_init__(self) -> None:
        for key in ("cluster_scale", "interference_scale", "arrival_rate_scale"):
            object.__setattr__(self, key, _range(key, getattr(self, key), MAX_SCALE, True))
        # cluster.background's schema bound is 0.99 (a link must keep some capacity)
        object.__setattr__(self, "background", _range("background", self.background, 0.99, False))

    @classmethod
    def from_dict(cls, data: dict[str, Any] | RandomizationSpec | None) -> RandomizationSpec:
        """A spec from a config mapping (``env.randomize``); unknown keys are errors."""
        if isinstance(data, RandomizationSpec):
            return data
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError(f"randomize: expected a mapping of ranges, got {data!r}")
        known = [f.name for f in fields(cls)]
        for key in data:
            if key not in known:
                raise ValueError(f"randomize.{key}: unknown key, expected one of {known}")
        return cls(**data)


@dataclass(frozen=True)
class Variant:
    """One drawn variant: the factors and the scenario overrides that realize them."""

    cluster_scale: float
    interference_scale: float
    background: float
    arrival_rate_scale: float
    hosts: int  # physical hosts of the variant (all groups)
    racks: int
    overrides: dict[str, Any] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("overrides")
        return d


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    # always one draw, even for a fixed range: the stream stays aligned across specs
    u = float(rng.random())
    return lo * (hi / lo) ** u


def _clip(name: str, value: float) -> float:
    b = EXECUTION_BOUNDS[name]
    return min(max(value, b.get("ge", b.get("gt", 0.0))), b["le"])


def draw_variant(base: Scenario, spec: RandomizationSpec, rng: np.random.Generator) -> Variant:
    """Draw one variant of ``base`` (a loaded Scenario) from ``spec`` with ``rng``."""
    cs = _log_uniform(rng, *spec.cluster_scale)
    inter = _log_uniform(rng, *spec.interference_scale)
    bg = float(spec.background[0] + (spec.background[1] - spec.background[0]) * rng.random())
    rate = _log_uniform(rng, *spec.arrival_rate_scale)
    c, ov = base.cluster, {}
    # a DataNode group keeps min(count, replication) hosts: HDFS needs as many DataNodes
    # as replicas (a valid base keeps enough, either in one group or in all of them)
    keep = [min(g.count, base.hdfs.replication) if g.datanode else 1 for g in c.hosts]
    counts = [min(MAX_HOSTS, max(k, round(g.count * cs))) for g, k in zip(c.hosts, keep)]
    for i, n in enumerate(counts):
        ov[f"cluster.hosts.{i}.count"] = n
    racks = c.racks
    if c.rack_hops is None and not any(g.racks for g in c.hosts):
        racks = min(MAX_RACKS, sum(counts), max(c.sites, round(c.racks * cs)))
        ov["cluster.racks"] = racks
    if c.provision is not None:
        if c.provision.placement == "explicit" and spec.cluster_scale != (1.0, 1.0):
            raise ValueError(
                "randomize.cluster_scale: a scenario with explicit VM placement "
                "(cluster.provision.placement: explicit) cannot be resized; expected [1, 1]"
            )
        p = c.provision
        floor = min(p.vms, base.hdfs.replication) if p.datanode else 1
        ov["cluster.provision.vms"] = min(MAX_VMS, max(floor, round(p.vms * cs)))
    for name in INTERFERENCE_PARAMS:
        ov[f"execution.{name}"] = _clip(name, getattr(base.execution, name) * inter)
    ov["cluster.background"] = bg
    ov.update(arrival_overrides(base, rate))
    return Variant(cs, inter, bg, rate, sum(counts), racks, ov)


def arrival_overrides(base: Scenario, rate: float) -> dict[str, Any]:
    """Overrides that make jobs arrive ``rate`` times as fast (module docstring)."""
    w = base.workload
    if w.kind in ("ila-table4", "synthetic"):
        return {"workload.mean_interarrival_s": w.mean_interarrival_s / rate}
    if w.kind in ("swim", "rumen"):
        return {"workload.time_scale": min(1e6, max(1e-3, w.time_scale * rate))}
    if w.kind == "pna-batch":
        return {"workload.batch_gap_s": w.batch_gap_s / rate}
    ov: dict[str, Any] = {}
    for k, job in enumerate(w.jobs or []):
        ov[f"workload.jobs.{k}.submit_s"] = job.submit_s / rate
        ov[f"workload.jobs.{k}.every_s"] = job.every_s / rate
    return ov


class DomainRandomization(gym.Wrapper):
    """MRCluster-v0 on a freshly drawn scenario variant every episode (module docstring).

    ``base_config``: a bundled name, YAML path, dict or Scenario; ``env_kwargs``: the
    MRClusterEnv arguments (``overrides`` apply to the base before the variant's own)."""

    def __init__(
        self,
        base_config: str | dict | Scenario = "ila72",
        spec: RandomizationSpec | dict | None = None,
        **env_kwargs: Any,
    ):
        self.spec_ranges = RandomizationSpec.from_dict(spec)
        over = env_kwargs.pop("overrides", None)
        cap = env_kwargs.pop("max_sim_time_s", None)
        if cap is not None:
            over = {**(over or {}), "run.max_sim_time_s": cap}
        self.base = load_scenario(base_config, over)
        self.env_kwargs = env_kwargs
        self._rng: np.random.Generator | None = None
        self.variant: Variant | None = None
        # a draw now both checks that the spec suits the base and builds a first inner env
        first = draw_variant(self.base, self.spec_ranges, np.random.default_rng(0))
        super().__init__(self._build(first, check=False))
        self.action_space = self.env.action_space
        self.observation_space = self.env.observation_space

    def _build(self, variant: Variant, check: bool = True) -> MRClusterEnv:
        env = MRClusterEnv(config=self.base, overrides=variant.overrides, **self.env_kwargs)
        if check and (
            env.observation_space != self.observation_space or env.action_space != self.action_space
        ):
            # they depend on job_slots only: a difference is a bug, never a variant
            raise AssertionError(
                f"variant {variant.as_dict()} changed the spaces: {env.observation_space}, "
                f"{env.action_space} vs {self.observation_space}, {self.action_space}"
            )
        return env

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng([int(seed), _SALT])
        elif self._rng is None:
            self._rng = np.random.default_rng()  # unseeded, as any gymnasium env
        self.variant = draw_variant(self.base, self.spec_ranges, self._rng)
        # the episode's own seed: reset's when given (the same jobs as the base env on a
        # seed), else the next draw of the variant stream, so unseeded resets repeat too
        inner = int(seed) if seed is not None else int(self._rng.integers(2**31 - 1))
        hooks, decides = self.env.unwrapped._hooks, self.env.unwrapped._hooks_decide
        self.env.close()
        self.env = self._build(self.variant)
        self.env.set_hooks(hooks, decides)  # env.hooks around an agent stay so (env_hooks)
        obs, info = self.env.reset(seed=inner, options=options)
        info["randomization"] = self.variant.as_dict()
        return obs, info

    def action_masks(self) -> np.ndarray:
        """The inner environment's mask (MaskablePPO calls this through the vector env)."""
        return self.env.action_masks()


def make_randomized_env(
    base_config: str | dict | Scenario = "ila72",
    spec: RandomizationSpec | dict | None = None,
    **env_kwargs: Any,
) -> DomainRandomization:
    """The env factory for SB3: ``make_vec_env(make_randomized_env, env_kwargs={...})``."""
    return DomainRandomization(base_config, spec, **env_kwargs)
