"""The Fig. 6 locality model of ``mrgym.reproduce.claims.lsap_locality``: its matching is
the LSAP optimum, its greedy pass is dl-sched's snapshot order, and it agrees with
``lsap.snapshot_trial`` where both apply (the Fig. 6 claims run once, in
``tests/test_reproduce.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import mrgym.reproduce.claims.lsap_locality as loc
from mrgym.reproduce.claims.lsap import snapshot_trial


def _pairs(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slot, task) pairs of an IS x T collocation matrix, row-major (wave's input order)."""
    rows, cols = np.nonzero(local)
    return rows, cols


@pytest.mark.parametrize("seed", range(20))
def test_matching_is_the_lsap_optimum_and_greedy_the_paper_order(seed):
    rng = np.random.default_rng(seed)
    idle_n, t = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    local = rng.random((idle_n, t)) < rng.uniform(0.05, 0.6)
    rows, cols = _pairs(local)
    opt = loc.wave(rows, cols, idle_n, t, greedy=False)
    r, c = linear_sum_assignment(1.0 - local)  # rectangular = the paper's dummy padding
    assert len(opt) == int(local[r, c].sum())
    assert len(set(opt.tolist())) == len(opt)
    taken: list[int] = []  # slots in order, each its first free local task
    for i in range(idle_n):
        free = [j for j in np.flatnonzero(local[i]) if j not in taken]
        if free:
            taken.append(int(free[0]))
    assert sorted(loc.wave(rows, cols, idle_n, t, greedy=True).tolist()) == sorted(taken)


def test_one_wave_one_slot_per_node_agrees_with_snapshot_trial():
    # N = 100, S = 1, C = 5, IS = 50, T = 30: one wave, the Fig. 4(a) setup
    rng = np.random.default_rng(1)
    ours = np.array([loc.goodness(rng, 100, 1, 0.5, 30, 5) for _ in range(300)]).mean(0)
    ref = np.array([snapshot_trial(rng, 100, 5, 50, 30) for _ in range(300)]).mean(0)
    assert np.allclose(ours, ref, atol=0.02)
    assert ours[0] <= ours[1] + 1e-9


def test_one_task_closed_form():
    # T = 1: local iff one of its C nodes has an idle slot, whatever the scheduler
    rng = np.random.default_rng(2)
    a = np.array([loc.goodness(rng, 50, 2, 0.1, 1, 3) for _ in range(3000)]).mean(0)
    p_idle_node = 1 - (90 * 89) / (100 * 99)  # a node keeps ≥ 1 of its 2 slots idle
    expect = 1 - (1 - p_idle_node) ** 3
    assert np.allclose(a, expect, atol=0.03)


def test_replicas_are_distinct():
    reps = loc.replicas(np.random.default_rng(3), 10, 8, 500)
    assert reps.shape == (500, 8)
    assert all(len(set(r)) == 8 for r in reps.tolist())
