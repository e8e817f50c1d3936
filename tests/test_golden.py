"""Refactors reproduce the recorded results exactly (tests/golden_cases.py says how)."""

from __future__ import annotations

import json

import pytest
from golden_cases import ENV_SCENARIOS, GOLDEN, env_hash, sim_cases, sim_hash

RECORDED = json.loads(GOLDEN.read_text())


def test_the_golden_file_covers_every_case():
    assert set(RECORDED["sim"]) == {f"{sc}/{s}/{seed}" for sc, s, seed in sim_cases()}
    assert set(RECORDED["env"]) == set(ENV_SCENARIOS)


@pytest.mark.parametrize("case", sim_cases(), ids=lambda c: f"{c[0]}/{c[1]}/{c[2]}")
def test_run_sim_reproduces_the_golden_results(case):
    assert sim_hash(*case) == RECORDED["sim"]["/".join(map(str, case))]


@pytest.mark.parametrize("scenario", ENV_SCENARIOS)
def test_the_environment_reproduces_the_golden_steps(scenario):
    assert env_hash(scenario) == RECORDED["env"][scenario]
