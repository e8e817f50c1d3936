"""Small scenarios, a pinning scheduler, the CLI runner and the third-party trace paths
shared by the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mrgym.reproduce.probes import Pinned, cluster
from mrgym.reproduce.probes import scenario as _probe_scenario

__all__ = ["Pinned", "cluster", "scenario", "run_cli", "StubType", "StubHost", "StubVM"]


def scenario(cluster_: dict, jobs: list[dict], replication: int = 1, **kw) -> dict:
    """The probes' scenario builder, named "test" (error messages in tests say test.KEY)."""
    sc = _probe_scenario(cluster_, jobs, replication, **kw)
    sc["name"] = kw.get("name", "test")
    return sc


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run ``mrgym ARGS`` in a subprocess, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", "mrgym.cli", *args], capture_output=True, text=True
    )


# The third-party traces (docs/model.md §7, docs/traces.md); tests that read them skip when
# absent.
TRACES = Path(
    os.environ.get("MRGYM_TRACES", Path(__file__).resolve().parents[2] / "shared" / "traces")
)
SWIM = TRACES / "swim_fb" / "FB-2009_samples_24_times_1hr_0.tsv"
RUMEN = TRACES / "rumen_mumak_19jobs" / "19-jobs.trace.json.gz"
# the reason says how to fix it; tests/conftest.py shows reasons in the summary (-rs)
_HOW = "set MRGYM_TRACES to the folder that holds swim_fb/ and rumen_mumak_19jobs/"
needs_swim = pytest.mark.skipif(not SWIM.exists(), reason=f"SWIM trace not found at {SWIM}; {_HOW}")
needs_rumen = pytest.mark.skipif(
    not RUMEN.exists(), reason=f"Rumen trace not found at {RUMEN}; {_HOW}"
)


def lee_cloud_small() -> dict:
    """lee-cloud with gridmix2's "small" jobs (51 maps over a tenth of the records, 15
    reduces; configs/lee-cloud.yaml derives the medium ones): the same rounds, pools and
    spot market in a fraction of the time, for tests of mechanics rather than sizes."""
    over: dict = {}
    for j in range(5):
        over[f"workload.jobs.{j}.maps"] = 51
        over[f"workload.jobs.{j}.input_mb"] = 3121.95 if j == 3 else 12487.8
        over[f"workload.jobs.{j}.reduces"] = 1 if j == 2 else 15
    return over


# -- stubs of a host and its VMs for a CpuPool alone (tests/test_cpu_clocks*.py) ----------
@dataclass
class StubType:
    cores: float = 4.0
    core_speed: float = 1.3
    power_idle_w: float = 100.0
    power_max_w: float = 200.0


@dataclass(eq=False)
class StubHost:
    type: StubType = field(default_factory=StubType)
    virtualized: bool = False  # Dom0's demand only counts I/O streams, which these lack
    alive: bool = True
    cpu: object = None


@dataclass(eq=False)
class StubVM:
    id: int
    host: StubHost
    vcpus: float = 2.0
    cpu_cap: float | None = None
