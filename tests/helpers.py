"""Small scenarios, a pinning scheduler, the CLI runner and the third-party trace paths
shared by the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mrgym.sim.hdfs import Hdfs
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
    launch_reduce,
)


class Pinned(Scheduler):
    """Runs job j's maps only on the VMs ``pins[j]`` (any VM when absent) and, when
    ``levels[j]`` is set, only where the map's locality equals that level."""

    name = "pinned"

    def __init__(
        self, pins: dict[int, set[int]] | None = None, levels: dict[int, int] | None = None
    ):
        self.pins = pins or {}
        self.levels = levels or {}

    def decide(self, ctx: DecisionContext) -> Decision:
        vm = ctx.vm
        for job in ctx.jobs:
            pins = self.pins.get(job.id)
            if pins is not None and vm.id not in pins:
                continue
            if ctx.slot_kind != MAP:
                if ctx.can_launch(job, "reduce"):
                    return launch_reduce(job.id)
                continue
            if not ctx.can_launch(job, MAP):
                continue
            want = self.levels.get(job.id)
            if want is None:
                best = ctx.best_map(job)
                if best is not None:
                    return launch_map(job.id, best[0].index)
                continue
            for t in ctx.view.pending_maps(job):
                if t.block is not None and Hdfs.locality(t.block, vm) == want:
                    return launch_map(job.id, t.index)
        return DECLINE


def cluster(hosts: list[dict], racks: int = 1, **kw) -> dict:
    c = {"racks": racks, "hosts": hosts, "heartbeat_s": 1.0}
    c.update(kw)
    return c


def scenario(cluster_: dict, jobs: list[dict], replication: int = 1, **kw) -> dict:
    sc = {
        "name": "test",
        "cluster": cluster_,
        "hdfs": {"replication": replication, "block_mb": kw.pop("block_mb", 128)},
        "workload": {"kind": "jobs", "jobs": jobs},
        "execution": {"noise_sigma": 0.0},
    }
    sc.update(kw)
    return sc


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run ``mrgym ARGS`` in a subprocess, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", "mrgym.cli", *args], capture_output=True, text=True
    )


# The third-party traces beside the project (DESIGN §7); tests that read them skip when absent.
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
