"""Every simulator claim of the reproduction declares its setup: each value behind its
number with a source of one of the four kinds, read from the scenario it runs (issue
"Fidelity III")."""

from __future__ import annotations

import pytest

from mrgym.reproduce import setups
from mrgym.reproduce.report import load_claims
from mrgym.reproduce.roles import CALIBRATION, VALIDATION, role

CLAIMS = load_claims()


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.key)
def test_every_simulator_claim_declares_its_setup(claim):
    if role(claim.key) not in (CALIBRATION, VALIDATION):
        pytest.skip("probes and the papers' own models have no scenario to source")
    settings = claim.settings()
    assert settings, f"{claim.key} declares no setup"
    assert all(s.source.kind in setups.KINDS for s in settings)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.key)
def test_a_claim_whose_number_set_a_value_is_calibration(claim):
    """A paper-silent value chosen by looking at a claim's number makes that claim
    calibration (issue "Fidelity III")."""
    own = setups.self_calibrated(claim.key, claim.settings())
    if own:
        assert role(claim.key) == CALIBRATION, f"{claim.key}: {own} were set on its number"


def test_setup_values_are_read_from_the_scenario():
    """A setting's value is the loaded scenario's, not typed again: changing the scenario
    changes it."""
    src = {"cluster.hosts.0.vm.map_slots": setups.paper("§5.1")}
    (a,) = setups.scenario_setup("ila72", src)
    (b,) = setups.scenario_setup("ila72", src, {"cluster.hosts.0.vm.map_slots": 3})
    assert (a.value, b.value) == ("2", "3")
    (m,) = setups.scenario_setup("ila72", {"execution.task_heap_mb": setups.hadoop("-Xmx200m")})
    assert m.value == "200"


def test_bad_keys_and_kinds_are_refused():
    with pytest.raises(KeyError, match="no 'nope'"):
        setups.scenario_setup("ila72", {"cluster.nope": setups.paper("x")})
    with pytest.raises(ValueError, match="source kind"):
        setups.Source("a guess", "x")
    with pytest.raises(ValueError, match="only a calibrated value"):
        setups.Source(setups.PAPER, "x", ("ila-fig8",))


def test_the_report_shows_each_setting_and_its_source():
    settings = (setups.fixed("H", 1.0, setups.paper("§4.4")),)
    md = setups.markdown(settings)
    assert md[0] == "| setting | value | source |"
    assert md[2] == "| `H` | 1 | paper: §4.4 |"
    (row,) = setups.as_json(settings)
    assert row == {"what": "H", "value": "1", "kind": "paper", "ref": "§4.4", "on": []}
