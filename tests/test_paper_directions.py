"""The direction of each ILA effect that `mrgym reproduce` checks in magnitude (issue 9):
these hold whatever the verdict, so a model change that flips one fails here."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import baselines
import mrgym
from mrgym.reproduce.ila_runs import ila72_maps, table1_scenario

# xdist: the cached ila72 episodes (ila72_run) are shared by the figures' tests and by
# test_baselines' Delay- and FIFO-versus-Fair tests
pytestmark = pytest.mark.xdist_group("ila72-episodes")


def _io_local(sched: str, seed: int) -> float:
    rs = [r for r in ila72_maps(sched, seed) if r.io_bound and r.has_input]
    return float(np.mean([r.locality in ("node", "server") for r in rs]))


def test_fig7_delay_is_more_local_than_every_greedy_scheduler():
    """ILA Fig. 7: Delay ~75 % vs ~55 % for the greedy PureFair, LATE and Capacity
    (Hadoop 0.20.205's Capacity has no locality delay)."""
    # one seed (the runs are cached per process: fig. 8 reads the same fair episode)
    delay = _io_local("delay", 0)
    for greedy in ("fair", "late", "capacity"):
        assert delay > _io_local(greedy, 0) + 0.1, greedy
    assert _io_local("fair", 0) < 0.9  # a greedy choice misses co-hosted blocks


def test_fig8_io_bound_maps_slow_down_more_than_cpu_bound_ones():
    """ILA Fig. 8 under an interference-oblivious scheduler: some tasks are not slowed,
    many are > 2x and a tail is > 10x.  Both kinds of map slow down, the I/O-bound ones
    more (Fig. 2's disk against Fig. 1's cores; measured medians on seed 0: 5.3x I/O-bound,
    2.7x CPU-bound: PureFair over-commits a host's cores, which ILA avoids)."""
    recs = ila72_maps("fair", 0)
    sd = np.array([r.duration / r.alone for r in recs])
    io = np.array([r.duration / r.alone for r in recs if r.io_bound])
    cpu = np.array([r.duration / r.alone for r in recs if not r.io_bound])
    assert np.mean(sd <= 1.1) > 0.05 and np.mean(sd > 2) > 0.2 and np.mean(sd > 10) > 0.02
    assert np.median(io) > 1.5 * np.median(cpu) > 1.5 * 1.5


TABLE1_SEEDS = range(8)


@functools.cache
def _table1(virtual: bool, seed: int) -> dict:
    """ILA Table 1's TeraSort under delay scheduling (5 s waits): its metrics."""
    sc = mrgym.load_scenario(table1_scenario(virtual))
    return mrgym.run_sim(
        sc, baselines.make("delay", node_wait_s=5.0, rack_wait_s=5.0), seed
    ).metrics


def _table1_ratios() -> list[float]:
    """Virtual / physical mean JCT per seed of TABLE1_SEEDS."""
    return [_table1(True, s)["mean_jct_s"] / _table1(False, s)["mean_jct_s"] for s in TABLE1_SEEDS]


def test_table1_the_physical_cluster_is_node_local_and_faster():
    """ILA Table 1's direction: the physical cluster is ~all node-local (98.4 %) and the
    virtual one (4 VMs share a disk) is much slower, on every seed."""
    assert all(_table1(False, s)["map_locality"]["node"] > 0.95 for s in TABLE1_SEEDS)
    assert min(_table1_ratios()) > 1.5  # measured 2.27 (seed 3)


@pytest.mark.xfail(
    strict=True,
    reason="measured about 3.1x on seeds 0-7: the virtual job takes about the paper's "
    "342 s, the physical one ~100 s against the paper's 170 (issue Fidelity III)",
)
def test_table1_the_virtual_cluster_is_slower_under_delay_scheduling():
    """ILA Table 1: the same 120-map TeraSort takes ~2x longer on 24 VMs on 6 servers than
    on 24 physical machines (4 VMs share a disk): the mean ratio over seeds 0-7."""
    ratio = float(np.mean(_table1_ratios()))
    assert 1.5 < ratio < 2.5, ratio
