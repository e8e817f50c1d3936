"""HybridMR's IPS model learned from a profiling run (baselines/hybridmr_ips.py): the linear
regression recovers the co-hosted load an interactive VM tolerates, the budget reads only
monitoring, and the predictor modules never read the simulator's hidden model."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from baselines.hybridmr import LearnedPhase2
from baselines.hybridmr_ips import IpsModel, Sample, model_for, setup_of
from mrgym.config import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def _setup(service_ms: float = 10.0) -> dict:
    sc = load_scenario("hybrid48")
    g = next(g for g in sc.cluster.hosts if g.interactive is not None)
    host = SimpleNamespace(type=SimpleNamespace(name=g.type), pool=g.pool)
    setup = setup_of(sc, host)
    setup["group"]["interactive"]["service_ms"] = service_ms
    return setup


def _truth(rps: float, target_s: float, service_ms: float = 10.0, cores: float = 2.0) -> float:
    """The simulator's M/M/1-PS tolerance (1 vCPU): the co-hosted cores at which the
    response time reaches ``target_s`` (the test knows the hidden model; the IPS does not)."""
    s = service_ms / 1000.0
    return cores / (rps * s + s / target_s) - rps * s


@pytest.mark.parametrize("rps", [60.0, 72.0, 84.0])
def test_learned_tolerance_recovers_the_ps_model_within_a_third_of_a_core(rps):
    m = model_for(_setup(), 1.0)
    assert m.b1 < 0  # more requests, less room for Hadoop
    assert m.tolerated(rps) == pytest.approx(_truth(rps, 1.0), abs=0.35)


def test_a_faster_application_is_learned_only_through_its_measurements():
    """Halve the hidden service time: the profile measures it and the tolerance rises by
    what the hidden model says, though the IPS never reads the service time."""
    slow, fast = model_for(_setup(10.0), 1.0), model_for(_setup(5.0), 1.0)
    assert fast.tolerated(100.0) > slow.tolerated(100.0) + 1.0
    assert fast.tolerated(140.0) == pytest.approx(_truth(140.0, 1.0, 5.0), abs=0.35)


def test_fit_skips_rates_the_application_misses_alone_and_unbinding_ones():
    samples = [
        *(Sample(10.0, x, 0.01) for x in (1.0, 2.0, 3.0)),  # never binds
        *(Sample(20.0, x, 0.01 if x < 2.5 else 5.0) for x in (1.0, 2.0, 3.0)),
        *(Sample(30.0, x, 0.01 if x < 1.5 else 5.0) for x in (1.0, 2.0, 3.0)),
        *(Sample(40.0, x, 5.0) for x in (1.0, 2.0, 3.0)),  # its own vCPUs saturate
    ]
    m = IpsModel.fit(samples, 1.0)
    assert m.rates == [20.0, 30.0] and m.bounds == [2.0, 1.0]
    assert (m.b0, m.b1) == pytest.approx((4.0, -0.1))
    assert m.tolerated(10.0) == 3.0  # below the binding rates: the highest tested load
    assert m.tolerated(50.0) == 0.0


def test_budget_reads_monitoring_not_the_service_time():
    """The app's spec carries only the SLA: no ``service_ms`` to read."""
    setup = _setup()
    model = model_for(setup, 0.5 * 2.0)
    ivm = SimpleNamespace(vcpus=1.0)
    app = SimpleNamespace(spec=SimpleNamespace(sla_s=2.0), rps=60.0)
    host = SimpleNamespace(
        vms=[ivm], type=SimpleNamespace(name=setup["group"]["type"], cores=2.0), pool="virtual"
    )
    view = SimpleNamespace(
        scenario=load_scenario("hybrid48"),
        interactive_app=lambda vm: app if vm is ivm else None,
        host_metrics=lambda h: SimpleNamespace(dom0_cpu_cores=0.25),
    )
    p2 = LearnedPhase2(headroom=0.2, target_frac=0.5)
    assert p2.budget(host, view) == pytest.approx(model.tolerated(72.0) - 0.25)
    host.vms = []
    assert p2.budget(host, view) == float("inf")


HIDDEN = {
    "service_ms",
    "map_cpu_s_per_mb",
    "reduce_cpu_s_per_mb",
    "virt_io_overhead",
    "virt_cpu_overhead",
    "virt_sensitivity",
    "disk_thrash",
    "disk_thrash_floor",
    "corunner_penalty",
}


def _names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


@pytest.mark.parametrize("module", ["baselines/hybridmr.py", "baselines/hybridmr_ips.py"])
def test_hybridmr_predictors_do_not_touch_the_hidden_model(module):
    names = _names(ROOT / module)
    assert not names & HIDDEN
    assert "mrgym.sim.params" not in names
