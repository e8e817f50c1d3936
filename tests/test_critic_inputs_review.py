"""Review of critic_inputs: the critic's work feature counts the work the simulator runs,
and a snapshot names the setting it lacks."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import mrgym  # noqa: F401  (registers MRCluster-v0)
from mrgym.envs.observation import job_work
from mrgym.sim.jobs import PROFILES, JobSpec


def test_a_map_only_job_has_no_reduce_work():
    # attempts.run_map writes a map-only job's output to HDFS and no reduce ever runs:
    # its CPU work is its maps' only
    prof = PROFILES["sort"]
    spec = JobSpec("m", prof, 0.0, 8, 0, 1024.0)
    assert job_work(spec) == pytest.approx(1024.0 * prof.map_cpu_s_per_mb)


def test_restore_names_a_setting_the_snapshot_lacks():
    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4).unwrapped
    env.reset(seed=1)
    snap = env.snapshot()
    env.restore(snap)  # its own snapshot: fine
    old = dataclasses.replace(
        snap, settings=tuple(kv for kv in snap.settings if kv[0] != "critic_inputs")
    )
    with pytest.raises(ValueError, match="does not record critic_inputs"):
        env.restore(old)
    other = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, critic_inputs=True)
    with pytest.raises(ValueError, match="critic_inputs=False"):
        other.unwrapped.restore(snap)
