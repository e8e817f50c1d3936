"""Task retries and job failure on a hand-built case: a map whose only block replica is gone
fails each attempt after the DFS client's look-ups, the job fails after exactly
max_task_attempts of them, and the active-job clock (the JCT reward's integral) counts the
failed job up to its failure.

Expected numbers come from Hadoop 1's defaults and the definition of the integral, not
from the simulator: mapred.map.max.attempts = 4; a DFSClient asks the NameNode 3 times, 3 s
apart, before its BlockMissingException; ∫ (active jobs) dt = Σ_j (end_j − arrival_j)."""

from __future__ import annotations

import pytest
from helpers import cluster, scenario

import mrgym
from mrgym.config import load_scenario
from mrgym.runner import build_simulation

MAX_ATTEMPTS = 4  # Hadoop 1: mapred.map.max.attempts
ATTEMPT_S = 3 * 3.0  # 3 NameNode look-ups, 3 s apart
HEARTBEAT_S = 1.0

JOBS = [
    # the doomed job: one map over one block, its replica removed below
    {"name": "lost", "profile": "grep", "maps": 1, "reduces": 0, "input_mb": 128},
    # a job that runs well past the first one's failure, on the other slots
    {"name": "long", "profile": "piest", "maps": 2, "reduces": 0, "input_mb": 64000},
]


def _run():
    sc = scenario(cluster([{"count": 1, "type": "generic-4core", "native": True}]), JOBS)
    sim = build_simulation(load_scenario(sc), "fifo", 0)
    lost, _long = sim.jobs
    sim.materialize(lost)  # its input blocks are placed when it arrives: place them now
    lost.maps[0].block.replicas.clear()  # its only replica is gone before it is read
    sim.hdfs.invalidate()
    sim.run()
    return sim


@pytest.fixture(scope="module")
def sim():
    return _run()


def test_a_task_fails_the_job_after_exactly_max_attempts(sim):
    lost, long_ = sim.jobs
    (task,) = lost.maps
    assert [a.outcome for a in task.attempts] == ["missing_block"] * MAX_ATTEMPTS
    assert task.failures == MAX_ATTEMPTS
    for a in task.attempts:
        assert a.end_s - a.start_s == pytest.approx(ATTEMPT_S)
    # the job fails with its last attempt: 4 x 9 s plus at most a heartbeat's wait
    # before each launch
    assert lost.failed_s == task.attempts[-1].end_s
    assert MAX_ATTEMPTS * ATTEMPT_S <= lost.failed_s <= MAX_ATTEMPTS * (ATTEMPT_S + HEARTBEAT_S)
    assert lost.finish_s is None and long_.finish_s > lost.failed_s + 60
    m = mrgym.metrics.episode_metrics(sim)
    assert (m["jobs_failed"], m["jobs_completed"]) == (1, 1)


def test_the_active_job_clock_counts_a_failed_job_to_its_failure(sim):
    lost, long_ = sim.jobs
    now = sim.env.now
    assert now == long_.finish_s
    # ∫ active jobs dt over the run = Σ_j (end_j − arrival_j), a failed job ending at
    # its failure; both arrived at 0, so that is failed_s + finish_s
    assert lost.arrived_s == long_.arrived_s == 0.0
    expected = lost.failed_s + long_.finish_s
    assert sim.view.job_seconds_at(now) == pytest.approx(expected, rel=1e-12)
