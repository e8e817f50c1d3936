"""lee-cloud's production round is sized from Lee's thesis §4.4.1 and gridmix2.

The thesis runs "5 jobs from the gridmix2 benchmark" every 4 hours; on 5 m1.large core
nodes + 4 c1.medium accelerators a round takes "between 2 and 3 hours".  It gives no data
sizes, so configs/lee-cloud.yaml takes them from gridmix2 (generateGridmix2data.sh's
production data set, "medium" jobs); the derivation is in the YAML's comments and is
recomputed here from gridmix2's constants.
"""

from __future__ import annotations

import math

import pytest

import mrgym
from mrgym.runner import run_sim
from mrgym.sim.rng import Streams
from mrgym.workloads import generate

MIB = 2**20
BLOCK_MB = 64  # Hadoop 0.20.2's dfs.block.size (the thesis' Hadoop for ch. 4)
FILES = 492  # generateGridmix2data.sh, USE_REAL_DATASET: NUM_MAPS=492 part files per set
COMPRESSED_SET_B = 2147483648000  # COMPRESSED_DATA_BYTES: text written block-compressed
UNCOMPRESSED_SET_B = 536870912000  # UNCOMPRESSED_DATA_BYTES: the plain text set
RATIO = 4  # README.gridmix2: "A 4x compression ratio ... is typical"
MEDIUM_FILES = 30  # {part-000*0,part-000*1,part-000*2}: 10 files each
MEDIUM_REDUCES = 170  # GridMixRunner.NUM_OF_REDUCERS_FOR_MEDIUM_JOB

# job -> (profile, data set bytes, compressed on HDFS, reduces); the jobs on compressed sets
# have their own profiles (mrgym/sim/jobs.py's gridmix2 ones: a base profile's CPU and I/O
# with the set's compression ratio and inflate cost)
GRIDMIX2 = {
    "monsterquery": ("monsterquery", COMPRESSED_SET_B, True, MEDIUM_REDUCES),
    "webdatasort": ("webdatasort", COMPRESSED_SET_B, True, MEDIUM_REDUCES),
    "webdatascan": ("webdatascan", COMPRESSED_SET_B, True, 1),  # README: "1 Reducer"
    "javasort": ("sort", UNCOMPRESSED_SET_B, False, MEDIUM_REDUCES),
    "combiner": ("combiner", COMPRESSED_SET_B, True, MEDIUM_REDUCES),
}
ONE_ROUND = {f"workload.jobs.{j}.repeat": 1 for j in range(len(GRIDMIX2))}


def _derived(name: str) -> tuple[str, int, float, int]:
    """(profile, maps, input MB, reduces) of a gridmix2 medium job on the real data set."""
    profile, set_b, compressed, reduces = GRIDMIX2[name]
    text_mb = set_b / FILES / MIB  # records per part file
    hdfs_mb = text_mb / RATIO if compressed else text_mb  # its size on HDFS
    maps = MEDIUM_FILES * math.ceil(hdfs_mb / BLOCK_MB)  # one split per block of each file
    return profile, maps, MEDIUM_FILES * text_mb, reduces


def test_jobs_are_gridmix2_medium_jobs_on_the_real_data_set():
    sc = mrgym.load_scenario("lee-cloud")
    assert sc.hdfs.block_mb == BLOCK_MB
    specs = generate(sc, Streams(0).workload)
    assert len(specs) == 2 * len(GRIDMIX2)  # two rounds of the five jobs
    for s in specs:
        name, rnd = s.name.rsplit(".", 1)
        profile, maps, input_mb, reduces = _derived(name)
        assert s.submit_s == int(rnd) * 4 * 3600  # all five arrive every 4 hours
        assert s.profile.name == profile
        # the profile's ratio is the data set's: records MB / MB on HDFS
        ratio = RATIO if GRIDMIX2[name][2] else 1.0
        assert s.profile.input_compression == pytest.approx(ratio, rel=1e-3)
        assert s.n_maps == maps == 510
        assert s.n_reduces == reduces
        assert s.input_mb == pytest.approx(input_mb, abs=0.1)
    # both rounds fit, each with its 4-hour period
    assert sc.run.max_sim_time_s >= 2 * 4 * 3600


@pytest.mark.xfail(
    strict=True,
    reason="validation not reproduced (claim lee-4.4.1-rounds): a round takes 0.69 h on the "
    "calibrated model (1.03 h with every issue-34 mechanism off), the thesis 2-3 h; compressed "
    "input reads a quarter of the bytes and its inflate CPU (0.01 s/MB) adds little back",
)
def test_a_production_round_takes_hours_as_in_the_thesis():
    r = run_sim(mrgym.load_scenario("lee-cloud", ONE_ROUND), "fair", 0)
    m = r.metrics
    assert m["jobs_completed"] == m["jobs_submitted"] == len(GRIDMIX2)
    # thesis: 2-3 h on 5m1+4c1; this cluster also has 4 spot m1.large (§4.4.1: richer
    # configurations finish in < 2 h), and a round must end before the next one (4 h)
    hours = m["makespan_s"] / 3600
    assert 1.0 <= hours <= 4.0, f"a production round took {hours:.2f} h"
