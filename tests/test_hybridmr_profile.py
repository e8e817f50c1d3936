"""HybridMR phase I job profiling (baselines/hybridmr_profile.py; HybridMR §III.A.1,
Algorithm 1, Figs. 5-6): each branch of Algorithm 1 on hand-made rows with known laws
(exact retrieval, linear in data size, a + b/n map phase and piecewise reduce phase in
cluster size, both), the shipped database (loads, matches the simulator, I/O-bound jobs
pay more for virtualization than CPU-bound ones), and a deterministic build."""

from __future__ import annotations

import numpy as np
import pytest

from baselines.hybridmr_profile import (
    APPS,
    DATA_MB,
    NODES,
    PLATFORMS,
    Estimate,
    ProfileDB,
    Row,
    fit_inverse,
    piecewise_inverse,
    profile_row,
    profiling_error,
)
from mrgym import registry


def db_of(law, nodes, data_mb, app="sort", platform="native") -> ProfileDB:
    """Rows whose (map, reduce) phase times are ``law(n, d)``."""
    rows = []
    for n in nodes:
        for d in data_mb:
            m, r = law(n, d)
            rows.append(Row(app, platform, n, float(d), m + r, m, r))
    return ProfileDB(rows)


@pytest.fixture(scope="module")
def shipped() -> ProfileDB:
    return ProfileDB.load_default()


def test_exact_match_is_retrieved():
    db = db_of(lambda n, d: (d / n, 7.0), (1, 2, 4), (100, 200))
    est = db.estimate("sort", 200, 4, "native")
    assert est == Estimate(57.0, 50.0, 7.0, "exact")


def test_same_cluster_size_extrapolates_linearly_in_data_size():
    # Fig. 5(d): at a fixed cluster size the JCT is linear in the data size
    db = db_of(lambda n, d: (2.0 + 0.01 * d, 1.0 + 0.005 * d), (4,), (1000, 2000, 4000))
    est = db.estimate("sort", 8000, 4, "native")
    assert est.how == "data"
    assert est.map_s == pytest.approx(82.0)
    assert est.reduce_s == pytest.approx(41.0)
    assert est.jct_s == pytest.approx(123.0)
    # below the profiled range too (interpolation and extrapolation are the same line)
    assert db.estimate("sort", 500, 4, "native").jct_s == pytest.approx(10.5)


def test_map_phase_inverse_fit_recovers_a_plus_b_over_n():
    # Fig. 5(b): map phase = a + b/n, here a = 10, b = 80
    assert fit_inverse([1, 2, 4, 8], [90.0, 50.0, 30.0, 20.0]) == pytest.approx((10.0, 80.0))
    db = db_of(lambda n, d: (10.0 + 80.0 / n, 0.0), (1, 2, 4, 8), (1024,))
    est = db.estimate("sort", 1024, 16, "native")
    assert est.how == "nodes"
    assert est.map_s == pytest.approx(15.0)
    assert db.estimate("sort", 1024, 3, "native").map_s == pytest.approx(10.0 + 80.0 / 3)


def test_reduce_phase_is_piecewise_linear_in_inverse_cluster_size():
    # Fig. 5(c): a broken line through (1/n, y), continued along its end segments
    ns, ys = [1, 2, 4, 8], [40.0, 30.0, 10.0, 12.0]
    assert piecewise_inverse(ns, ys, 4) == pytest.approx(10.0)
    # n = 3 lies between 1/4 and 1/2: 10 + (30 - 10) * (1/3 - 1/4) / (1/2 - 1/4)
    assert piecewise_inverse(ns, ys, 3) == pytest.approx(10.0 + 20.0 / 3)
    # n = 16 continues the (1/8, 12) - (1/4, 10) segment to 1/16: 13
    assert piecewise_inverse(ns, ys, 16) == pytest.approx(13.0)
    db = db_of(lambda n, d: (0.0, dict(zip(ns, ys))[n]), ns, (512,))
    assert db.estimate("sort", 512, 16, "native").reduce_s == pytest.approx(13.0)


def test_neither_size_profiled_goes_cluster_size_then_data_size():
    # map = d (1 + 8/n) / 1000: inverse in n at each d, linear in d at each n
    db = db_of(lambda n, d: (d * (1 + 8 / n) / 1000, 0.0), (1, 2, 4), (1000, 2000))
    est = db.estimate("sort", 3000, 16, "native")
    assert est.how == "both"
    assert est.map_s == pytest.approx(4.5)


def test_unknown_app_or_platform_names_what_there_is():
    db = db_of(lambda n, d: (1.0, 1.0), (1, 2), (100, 200))
    with pytest.raises(KeyError, match="'sort', 'native'"):
        db.estimate("kmeans", 100, 1, "native")
    with pytest.raises(ValueError, match="nodes >= 1"):
        db.estimate("sort", 100, 0, "native")


def test_shipped_database_loads_through_the_registry(shipped):
    db = registry.tool("hybridmr-profiles")()
    assert isinstance(db, ProfileDB)
    assert db.rows == shipped.rows
    assert shipped.meta["seeds"] == [0, 1, 2]  # "averaged across 3 runs"
    assert len(shipped.rows) == len(APPS) * len(PLATFORMS) * len(NODES) * len(DATA_MB)
    for r in shipped.rows:
        assert len(r.runs) == 3
        assert r.jct_s == pytest.approx(r.map_s + r.reduce_s, abs=1e-3)
        assert r.map_s > 0 and r.reduce_s >= 0


def test_shipped_row_matches_the_simulator(shipped):
    # a stale file (the simulator changed since it was built) fails here: rebuild it with
    # python -m baselines.hybridmr_profile --out baselines/data/hybridmr_profiles.json
    stored = next(
        r
        for r in shipped.rows
        if (r.app, r.platform, r.nodes, r.data_mb) == ("twitter", "virtual", 2, 1024.0)
    )
    assert profile_row("twitter", "virtual", 2, 1024.0) == stored


def test_virtualization_costs_io_bound_jobs_more_than_cpu_bound_ones(shipped):
    # §II / Fig. 1(a): I/O-bound jobs 7-24 % slower on VMs, CPU-bound ones within 8 %.  In
    # the profile harness (16 servers, 8 GB) the I/O-bound jobs cost more on average (sort
    # +64.1 %, wordcount +34.6 %, distgrep +1.4 %, twitter +56.6 % against piest +2.2 %,
    # kmeans +21.7 %), but not each of them: its virtual servers over-commit their cores
    # and share memory bandwidth between co-hosted VMs, which slows the CPU-bound kmeans
    # more than the cache-served distgrep.  The calibration probe (one VM per host, without
    # luck) keeps Fig. 1(a)'s bands.
    n, d = max(NODES), max(DATA_MB)
    over = {a: shipped.overhead(a, d, n) for a in APPS}
    assert over["sort"] > over["piest"] and over["twitter"] > over["kmeans"]
    io = np.mean([over[a] for a in ("sort", "wordcount", "distgrep", "twitter")])
    assert io > 1.5 * np.mean([over["piest"], over["kmeans"]])
    assert all(v > 0 for v in over.values())


def test_profiling_error_on_a_held_out_job(shipped):
    # Fig. 6(a): a 10 GB KMeans on 16 servers, estimated from 1-8 GB profiles
    e = profiling_error(shipped, seeds=(0,), held_out=((16, 10240.0),), apps=("kmeans",))
    assert len(e["rows"]) == 2  # native and virtual
    assert e["per_how"].keys() == {"data"}
    assert e["paper"] == {"mean": 0.108, "std": 0.097}
    # within the paper's own spread: its mean error plus one standard deviation
    assert 0 <= e["mean"] < e["paper"]["mean"] + e["paper"]["std"]


def test_building_is_deterministic():
    kw = {"apps": ("wordcount",), "nodes": (1, 2), "data_mb": (256.0, 512.0), "seeds": (0, 1)}
    a, b = ProfileDB.build(**kw), ProfileDB.build(**kw)
    assert a.rows == b.rows and a.meta == b.meta
    # the seeds differ (task noise), so the average is over distinct runs
    assert all(r.runs[0] != r.runs[1] for r in a.rows)
