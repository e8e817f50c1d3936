"""HybridMR's Interference Prevention System model, learned from measurements (Sharma,
Wood, Das, ICDCS'13, §III.B.2): "For the transactional workloads, collocated with the
MapReduce jobs in the virtualized environment, we build separate performance interference
models ... We explored building both linear regression model as well as non-linear
exponential regression model to quantify the CPU interference. However, we stick to a
linear regression model".

* **Profiling** (:func:`profile`).  As the paper's models come from runs on its testbed,
  a training server of the scenario's virtualized kind (the same host type, Hadoop VMs and
  interactive application) runs a CPU-bound MapReduce job (PiEst) beside the interactive
  VM.  The load generator holds the interactive request rate at each of ``RATES`` (x the
  scenario's peak rate); at each rate the profiler steps the Hadoop VMs' CPU caps (the
  DRM's own knob, ``Throttle``) through ``LEVELS`` and, one control period later, reads
  the monitoring only: the interactive VM's response time, its request rate, the Hadoop
  VMs' allocation in effect (per VM the cap or its running compute phases, whichever is
  less) and Dom0's CPU.  Nothing of the simulator's CPU or queueing model is read.
* **Model** (:class:`IpsModel`).  For a response-time target ``T`` (the IPS aims at
  ``target_frac`` x SLA) the profile gives, per rate, the co-hosted CPU load (Hadoop +
  Dom0, cores) the application tolerates: the largest profiled level whose response time
  met ``T``.  Rates where even the lowest level misses ``T`` are left out: the
  application's own vCPUs saturate there, whatever runs beside it.  The linear regression ``U*(λ) = b0 + b1 λ`` is fitted by least squares to
  the rates where that tolerance binds (below the highest level tested); at rates where no
  tested level broke ``T`` the bound is the highest tested load.  ``budget()`` of
  :class:`baselines.hybridmr.LearnedPhase2` uses it with live monitoring only:
  ``U*(λ (1 + headroom)) - Dom0 CPU``, λ the measured request rate.
* **Cache.**  A profile is a pure function of the training server's configuration (and
  the seed 0): it is computed once per configuration and process (a few short runs).

Choices where the paper is silent (it defers to its [11], [31]): the regressor is the
request rate (the load the application sees) and the response is the tolerated co-hosted
load, so that one linear fit gives the IPS's budget directly; a linear fit of the
response time itself cannot express the threshold (it stays flat, then explodes, near the
SLA).  ``RATES`` spans 0.25-1.5x the scenario's peak rate (1.2x headroom above the peak
stays inside it), ``LEVELS`` 0.1-4 cores of Hadoop allocation on a 2-core server.
Accuracy on hybrid48's RUBiS-like VM (target 1 s): the fitted tolerance is within 0.35
core of the simulator's hidden M/M/1-PS value from 60 to 84 req/s, 0.3 core below it at
the peak with headroom (96 req/s: 0.78 vs 1.10 cores, conservative), and capped at the
highest tested load (4 cores) below the binding rates.  Effect against the former oracle
budget (which inverted the simulator's PS formula with the true service time), seeds 0-2,
``mrgym reproduce --claims hybridmr-sla``: SLA-violation seconds at 60 req/s 17 -> 27, at
80 req/s 307 -> 300 (FIFO 657, 2667), mean response at 80 req/s 1.41 -> 1.21 s; the
verdict (same direction) and hybridmr-fig6a/-fig8a/-fig9 are unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from baselines.classic import FairScheduler
from mrgym.sim.scheduler import Scheduler, Throttle

RATES = tuple(np.round(np.linspace(0.25, 1.5, 11), 4))  # x the scenario's peak request rate
LEVELS = tuple(np.round(np.arange(0.1, 4.01, 0.1), 3))  # Hadoop allocation (cores) stepped
WARMUP_S = 30.0  # the PiEst maps start (two heartbeats and their read phase)
PERIOD_S = 3.0  # one sample per control period, as the DRM's
MAPS = 200  # PiEst maps: enough to keep every slot busy through the steps
SEED = 0


@dataclass(frozen=True)
class Sample:
    """One monitoring reading of the training server."""

    rps: float  # the interactive VM's request rate (its access log)
    load: float  # co-hosted CPU in effect: Hadoop allocation + Dom0 (cores)
    response_s: float  # the interactive VM's mean response time


class _Stepper(Scheduler):
    """FairScheduler whose control loop steps the Hadoop VMs' caps and reads monitoring."""

    name = "hybridmr-ips-profiler"

    def __init__(self) -> None:
        self.inner = FairScheduler()
        self.control_period_s = PERIOD_S
        self.samples: list[Sample] = []
        self._level = -1
        self._caps: dict[int, float] = {}

    def reset(self, seed: int | None) -> None:
        self.inner.reset(seed)

    def decide(self, ctx):
        return self.inner.decide(ctx)

    def control(self, view) -> list:
        if view.now < WARMUP_S:
            return []
        host = next(h for h in view.topology.hosts if h.virtualized)
        workers = [vm for vm in host.vms if vm.map_slots or vm.reduce_slots]
        inter = [vm for vm in host.vms if view.interactive_app(vm) is not None]
        if self._level >= 0:  # the reading of the level set one period ago
            busy = sum(min(self._caps[vm.id], _computing(vm)) for vm in workers)
            dom0 = view.host_metrics(host).dom0_cpu_cores
            for vm in inter:
                r = view.response_time_s(vm)
                rps = view.interactive_app(vm).rps
                self.samples.append(Sample(rps, busy + dom0, min(r, 1e9)))
        self._level += 1
        if self._level >= len(LEVELS):
            return []
        cap = LEVELS[self._level] / len(workers)
        self._caps = {vm.id: cap for vm in workers}
        return [Throttle(vm.id, cap) for vm in workers]


def _computing(vm) -> float:
    """Compute phases running on a worker VM (what its TaskTracker reports)."""
    return float(sum(1 for a in vm.running if a.work is not None and a.work.kind == "compute"))


def training_scenario(setup: dict, rps: float) -> dict:
    """One server of ``setup["group"]`` (with its interactive VM at a constant ``rps``),
    the scenario's host catalog and execution model, running a PiEst job under the
    FairScheduler; long enough for every level of ``LEVELS``."""
    host_group = setup["group"]
    group = dict(host_group, count=1, racks=None, native=False)
    group["interactive"] = dict(group["interactive"], base_rps=rps, peak_rps=rps, noise_sigma=0.0)
    horizon = WARMUP_S + PERIOD_S * (len(LEVELS) + 2)
    return {
        "name": "hybridmr-ips-training",
        "cluster": {
            "heartbeat_s": 3.0,
            "racks": 1,
            "catalog": setup.get("catalog"),
            "hosts": [group],
        },
        "hdfs": {"replication": 1},
        "workload": {
            "kind": "jobs",
            "jobs": [{"profile": "piest", "maps": MAPS, "input_mb": 64.0 * MAPS}],
        },
        "execution": setup.get("execution", {}),
        "run": {"max_sim_time_s": horizon},
    }


def profile(setup: dict, seed: int = SEED) -> list[Sample]:
    """Every rate of ``RATES`` x the group's peak rate, every level of ``LEVELS``."""
    from mrgym.runner import run_sim

    peak = float(setup["group"]["interactive"]["peak_rps"])
    out: list[Sample] = []
    for x in RATES:
        stepper = _Stepper()
        run_sim(training_scenario(setup, float(x) * peak), stepper, seed)
        out += stepper.samples
    return out


@dataclass
class IpsModel:
    """``U*(λ) = b0 + b1 λ``: the co-hosted CPU load (cores) the interactive application
    tolerates at request rate λ while answering within the target (module docstring)."""

    b0: float
    b1: float
    top: float  # the highest profiled load: no bound was measured beyond it
    rates: list[float] = field(default_factory=list)  # the rates where the bound binds
    bounds: list[float] = field(default_factory=list)  # the measured bound at each

    @classmethod
    def fit(cls, samples: list[Sample], target_s: float) -> IpsModel:
        if not target_s > 0:
            raise ValueError(f"hybridmr ips target: expected > 0 s, got {target_s!r}")
        by_rate: dict[float, list[Sample]] = {}
        for s in samples:
            by_rate.setdefault(round(s.rps, 6), []).append(s)
        top = max(s.load for s in samples)
        rates, bounds = [], []
        for rps, ss in sorted(by_rate.items()):
            ok = [s.load for s in ss if s.response_s <= target_s]
            bad = [s.load for s in ss if s.response_s > target_s]
            if not bad or not ok:  # not binding here, or the application alone misses the
                continue  # target (its own vCPUs saturate): no co-hosted load is to blame
            rates.append(rps)
            bounds.append(max([x for x in ok if x < min(bad)], default=0.0))
        if len(rates) >= 2:
            b1, b0 = np.polyfit(rates, bounds, 1)
        elif rates:  # one binding rate: a flat bound
            b0, b1 = bounds[0], 0.0
        else:  # nothing binds in the profiled range
            b0, b1 = top, 0.0
        return cls(float(b0), float(b1), float(top), rates, bounds)

    def tolerated(self, rps: float) -> float:
        """Co-hosted cores the application tolerates at ``rps`` (>= 0)."""
        if self.rates and rps < min(self.rates) and self.b1 < 0:
            # below the binding rates the bound only grows: the line or the tested top
            return max(self.top, self.b0 + self.b1 * rps)
        return max(0.0, self.b0 + self.b1 * rps)


@lru_cache(maxsize=32)
def _profile_cached(key: str) -> tuple[Sample, ...]:
    return tuple(profile(json.loads(key)))


def setup_of(scenario: Any, host) -> dict | None:
    """The training server's configuration for ``host`` of a loaded scenario: its host
    group (with the interactive section), the host catalog and the execution model."""
    for g in scenario.cluster.hosts:
        if g.interactive is not None and g.type == host.type.name and g.pool == host.pool:
            return {
                "group": g.model_dump(),
                "catalog": scenario.model_dump()["cluster"].get("catalog"),
                "execution": scenario.model_dump().get("execution", {}),
            }
    return None


def samples_for(setup: dict) -> tuple[Sample, ...]:
    """The (cached) profile of a training server configuration (:func:`setup_of`)."""
    return _profile_cached(json.dumps(setup, sort_keys=True))


def model_for(setup: dict, target_s: float) -> IpsModel:
    return IpsModel.fit(list(samples_for(setup)), target_s)
