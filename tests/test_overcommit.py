"""vCPU overcommit under Xen's credit scheduler (``credit_overcommit``, cpu.py) and the
disk's iostat %util (``HostMetrics.disk_busy``): interference a scheduler can avoid, and
the monitoring that shows it (issue "Fidelity III")."""

from __future__ import annotations

import pytest

from mrgym.reproduce import probes
from mrgym.reproduce.claims.probe_cpu import _probe_time
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.params import ALL_OFF


def _kmeans_beside_piest(bg: int, kappa: float, host: str = "xen-12core") -> float:
    """A KMeans map's time beside ``bg`` computing PiEst maps on a 10-core host, every
    other mechanism off (cpu.py's fair share and this one only)."""
    ex = {"credit_overcommit": kappa, "corunner_penalty": 0.0}
    return _probe_time("kmeans", "piest", bg, ex, 0, bg_mb=20000.0)


def test_within_the_cores_nothing_changes():
    """A host whose demand is at its cores is untouched: the scheduler that keeps it there
    avoids the cost."""
    for bg in (0, 5, 9):  # the probe's own core makes 1, 6, 10 of 10
        assert _kmeans_beside_piest(bg, 3.0) == _kmeans_beside_piest(bg, 0.0)


@pytest.mark.parametrize("kappa", [1.0, 3.0])
def test_past_the_cores_a_phase_loses_more_than_its_fair_share(kappa):
    """11 demand on 10 cores: fair share alone is 1.1x; the credit scheduler's cost
    multiplies it by 1 + kappa x 0.1 (the probe's VM keeps one core to itself)."""
    alone = _kmeans_beside_piest(0, kappa)
    fair = _kmeans_beside_piest(10, 0.0) / alone
    over = _kmeans_beside_piest(10, kappa) / alone
    assert fair == pytest.approx(1.1, rel=0.02)
    assert over / fair == pytest.approx(1.0 + kappa * 0.1, rel=0.02)


def test_a_native_host_pays_no_credit_scheduler_cost():
    """6 PiEst maps on a 2-core host (3x over its cores): native, the same times with the
    credit scheduler's cost on or off; virtualized, slower with it on."""
    ex = {**ALL_OFF, "credit_overcommit": 5.0, "corunner_penalty": 0.0}
    jobs = [{"profile": "piest", "maps": 6, "reduces": 0}]

    def ends(native: bool, kappa: float) -> list[float]:
        vm = {"vcpus": 6, "map_slots": 6}
        host = [{"count": 1, "type": "opteron-2core", "native": native, "vm": vm}]
        sc = probes.scenario(probes.cluster(host), jobs, params=ex)
        sc["execution"]["credit_overcommit"] = kappa
        return [a.end for a in run_sim(sc, probes.Pinned(), 0).task_log]

    assert ends(True, 5.0) == ends(True, 0.0)
    assert min(ends(False, 5.0)) > 2 * max(ends(False, 0.0))


def test_disk_busy_is_iostat_util_not_throughput():
    """12 Grep maps thrash one disk (the previous fit's seek thrash, 0.6149): its
    throughput falls below a single stream's (disk_util < 1) while a request is always
    outstanding (disk_busy 1)."""
    host = [{"count": 1, "type": "xen-12core", "vms_per_host": 6}]
    jobs = [{"profile": "grep", "maps": 12, "reduces": 0, "input_mb": 12 * 2000.0}]
    sc = probes.scenario(probes.cluster(host), jobs, params={"disk_thrash": 0.6149})
    sim = build_simulation(sc, probes.Pinned(), 0)
    h = sim.topo.hosts[0]
    seen = []

    def sample():
        seen.append(sim.view.host_metrics(h))  # before any task: idle
        yield sim.env.timeout(20.0)
        seen.append(sim.view.host_metrics(h))

    sim.env.process(sample())
    sim.run()
    idle, busy = seen
    assert idle.disk_busy == 0.0 and idle.disk_streams == 0
    assert busy.disk_streams >= 10
    assert busy.disk_busy == 1.0 and busy.disk_util < 0.7
