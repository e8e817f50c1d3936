"""Same scenario, scheduler and seed: identical metrics and task log (docs/model.md §2)."""

from __future__ import annotations

import json

import pytest
from helpers import ILA72_SMALL, lee_cloud_small

import mrgym
from mrgym.runner import build_simulation

# the same code paths in a fraction of the time: lee-cloud with its small jobs (the same
# rounds, pools and spot market, a tenth the work), ila72's 25 jobs at 300 maps
SMALL = {"lee-cloud": lee_cloud_small(), "ila72": ILA72_SMALL}


@pytest.mark.parametrize("name", ["ila72", "hybrid48", "lee-cloud"])
@pytest.mark.parametrize("sched", ["fifo", "dl-sched"])
def test_same_seed_identical(name, sched):
    sc = mrgym.load_scenario(name, SMALL.get(name))
    a = mrgym.run_sim(sc, sched, 7)
    b = mrgym.run_sim(sc, sched, 7)
    assert json.dumps(a.metrics, sort_keys=True, default=str) == json.dumps(
        b.metrics, sort_keys=True, default=str
    )
    assert a.task_log == b.task_log
    assert len(a.task_log) > 0


def test_different_seed_different_workload():
    a = build_simulation("ila72", "fifo", 0)
    b = build_simulation("ila72", "fifo", 1)
    assert [j.spec.submit_s for j in a.jobs] != [j.spec.submit_s for j in b.jobs]
    small = mrgym.load_scenario("ila72", SMALL["ila72"])
    assert mrgym.run_sim(small, "fifo", 0).metrics != mrgym.run_sim(small, "fifo", 1).metrics


def test_every_policy_sees_same_workload_and_luck():
    """Common random numbers: the workload, block placement and task noise do not depend
    on the policy."""
    a = build_simulation("ila72", "fifo", 3)
    b = build_simulation("ila72", "dl-sched", 3)
    for sim in (a, b):  # a job's blocks and noise are drawn when it arrives: draw all now
        for job in sim.jobs:
            sim.materialize(job)
    assert a.hdfs.blocks
    assert [(j.name, j.spec.submit_s, len(j.maps), len(j.reduces)) for j in a.jobs] == [
        (j.name, j.spec.submit_s, len(j.maps), len(j.reduces)) for j in b.jobs
    ]
    assert [[v.id for v in blk.replicas] for blk in a.hdfs.blocks] == [
        [v.id for v in blk.replicas] for blk in b.hdfs.blocks
    ]
    assert [t.noise for j in a.jobs for t in j.maps + j.reduces] == [
        t.noise for j in b.jobs for t in j.maps + j.reduces
    ]


def test_seed_zero_is_a_seed():
    assert (
        mrgym.run_sim("lee-gpu", "fifo", 0).metrics == mrgym.run_sim("lee-gpu", "fifo", 0).metrics
    )
    small = mrgym.load_scenario("ila72", SMALL["ila72"])
    assert mrgym.run_sim(small, "fifo", 0).metrics != mrgym.run_sim(small, "fifo", 2).metrics
