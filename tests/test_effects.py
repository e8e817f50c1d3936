"""The papers' effects emerge from the fluid model (docs/model.md §2), each on a small setup."""

from __future__ import annotations

import numpy as np
import pytest

# the probes live in the library: `mrgym reproduce` runs the same experiments
from mrgym.reproduce.probes import (
    cpu_probe,
    io_probe,
    io_probe_traffic,
    lee_jct,
    locality_map_time,
    virt_jct,
)
from mrgym.reproduce.stats import exp_vs_linear


def test_locality_levels_match_ila_fig3():
    """ILA §2.3: 24 VMs on 12 servers, 2 racks, 100 Mbit/s: server ~ node, rack ~3x,
    off-rack ~4x the map time of a node-local TeraSort map (100 MB splits)."""
    times = {level: locality_map_time(level) for level in range(4)}
    node, server, rack, off = (times[i] / times[0] for i in range(4))
    assert node == 1.0
    assert 1.0 <= server < 1.1
    # within ±25 % of the paper's 3x and 4x, the tolerance of reproduce's ila-fig3 row (a
    # node-local map's output write goes to the page cache, so its time is read + CPU)
    assert 3 * 0.75 < rack < 3 * 1.25
    assert 4 * 0.75 < off < 4 * 1.25
    assert off > rack


@pytest.mark.xfail(
    strict=True,
    reason="slowdown 1.02/1.05/1.10 at demand 3/6/10 cores (< 1.06 wanted), 1.33/1.69 at 12/15 "
    "(1.5 +-10 % wanted), without luck as the fit; memory-bandwidth contention (membw off: "
    "1.04/1.26/1.60 at 10/12/15); the fit's own Fig. 1 criteria (no > 10 % at 6 cores) hold; "
    "issue 34 calibration",
)
def test_cpu_interference_starts_when_demand_exceeds_cores():
    """ILA Fig. 1: no significant slowdown until co-hosted demand reaches the host's cores
    (10 for the guests), then it grows with the oversubscription."""
    base = cpu_probe(0)
    below = [cpu_probe(bg) / base for bg in (2, 5, 9)]  # demand 3, 6, 10 cores
    above = [cpu_probe(bg) / base for bg in (11, 14)]  # demand 12, 15 cores
    assert all(s < 1.06 for s in below), below
    assert above[0] > 1.15 and above[1] > above[0] + 0.2, above
    assert above[1] == pytest.approx(15 / 10, rel=0.1)


def test_io_interference_grows_exponentially_with_the_co_hosted_traffic():
    """ILA Fig. 2: an I/O-bound task's slowdown grows with each co-hosted stream (on the
    fitted, nearly fair-share disk by about one stream's share each: measured 1.37x to
    3.23x over 1-6 streams) and exponentially with the co-hosted VMs' aggregated traffic,
    the figure's axis (measured: an exponential's R² 0.996 against a line's 0.950)."""
    base = io_probe(0)
    s = np.array([io_probe(k) / base for k in range(7)])
    assert np.all(np.diff(s) > 0) and s[-1] > 3, s
    tr = [io_probe_traffic(k) for k in range(1, 7)]
    traffic = np.array([mb for _, mb in tr])
    fit = exp_vs_linear(traffic, s[1:])
    assert fit["exp"]["b"] > 0
    assert fit["exp"]["r2"] > max(0.99, fit["linear"]["r2"]), fit


def test_co_hosted_traffic_rises_on_the_fitted_disk_and_falls_with_thrash():
    """ILA Fig. 2's x-axis, the co-hosted VMs' aggregated I/O traffic, rises with each
    co-hosted stream at the fitted disk (measured 57 -> 66 MB/s over 1-6 streams), as the
    slowdown does; with the previous fit's seek thrash (disk_thrash 0.6149) the disk's
    total throughput falls faster than the background's share of it grows (42 -> 14
    MB/s), the opposite of the paper's figure.  Measuring it does not move the probe: the
    map time is io_probe's."""
    fitted = [io_probe_traffic(k) for k in range(1, 7)]
    assert [t for t, _ in fitted] == [io_probe(k) for k in range(1, 7)]
    traffic = np.array([mb for _, mb in fitted])
    assert np.all(np.diff(traffic) > 0), traffic
    thrash = np.array([io_probe_traffic(k, params={"disk_thrash": 0.6149}) for k in range(1, 7)])
    assert np.all(np.diff(thrash[:, 1]) < 0) and thrash[0, 1] > 2 * thrash[-1, 1], thrash
    assert np.all(np.diff(thrash[:, 0]) > 0), thrash  # the slowdown rises all the same
    assert io_probe_traffic(0)[1] == 0.0  # no co-hosted map: no co-hosted traffic


def _virt_overhead(profile: str) -> float:
    """Virtual / native JCT - 1 per seed, averaged over 6 seeds: the method of the claims
    hybridmr-fig1a-* and of the fit's stage B (a mean of per-seed ratios, not a ratio of sums)."""
    return float(
        np.mean([virt_jct(profile, False, s) / virt_jct(profile, True, s) - 1 for s in range(6)])
    )


@pytest.mark.parametrize(
    "profile,lo,hi",
    [
        ("sort", 0.07, 0.24),
        ("wordcount", 0.07, 0.24),
        ("distgrep", 0.07, 0.24),
        ("kmeans", 0.0, 0.08),
        ("piest", 0.0, 0.08),
    ],
)
def test_virtualization_overhead_matches_hybridmr_fig1a(profile, lo, hi):
    """HybridMR Fig. 1(a): virtual vs native JCT is 7-24 % worse for I/O-bound jobs and
    within 8 % for CPU-bound ones (same hosts, slots and vCPUs; mean over 6 seeds)."""
    overhead = _virt_overhead(profile)
    assert lo <= overhead <= hi, overhead


def test_gpu_host_doubles_crypto_not_sort():
    """Lee §4.4.2 Fig. 4.11: replacing one of two cc1.4xlarge nodes by a cg1.4xlarge makes
    Crypto about twice as fast; Sort, which cannot use a GPU, is unchanged."""
    crypto = lee_jct("crypto", False) / lee_jct("crypto", True)
    sort = lee_jct("sort", False) / lee_jct("sort", True)
    # the claim's band, 2x ± 25 % (lee-fig4.11): 1.58x at seed 0 on Hadoop 0.18.3's 3 s
    # heartbeats with none out of band (1.98x with them)
    assert 1.5 <= crypto <= 2.5, crypto
    assert sort == pytest.approx(1.0, abs=0.05)


def test_probes_run_without_luck():
    """The probes draw neither task noise, heavy tail included, nor slow VMs (all on by
    default): a ratio of two probe times measures the mechanism, not the draws."""
    from mrgym.reproduce.probes import cluster, scenario
    from mrgym.runner import build_simulation

    sc = scenario(
        cluster([{"count": 2, "type": "xen-12core", "vms_per_host": 2}]),
        [{"profile": "terasort", "maps": 200, "reduces": 0}],
    )
    # seed 1: with slow VMs at 0.5 (off by default) one of its 4 VMs is slow, so the
    # probe's "no slow VM" below is not luck
    assert sc["execution"]["slow_vm_p"] == 0.0
    sim = build_simulation(sc, "fifo", 1)
    (job,) = sim.view.all_jobs
    sim.materialize(job)  # a job's noise is drawn when it arrives: draw it now
    assert len(job.maps) == 200 and {n for t in job.maps for n in t.noise} == {1.0}
    assert all(sim.tasks.slow_factor(vm) == 1.0 for vm in sim.topo.vms)
    # the default execution section draws noise (a few % of the draws get a Pareto tail);
    # slow VMs, off by default, are drawn when a scenario asks for them
    noisy = build_simulation({**sc, "execution": {"slow_vm_p": 0.5}}, "fifo", 1)
    noisy.materialize(noisy.view.all_jobs[0])
    assert len({n for t in noisy.view.all_jobs[0].maps for n in t.noise}) > 100
    assert any(noisy.tasks.slow_factor(vm) > 1.0 for vm in noisy.topo.vms)
