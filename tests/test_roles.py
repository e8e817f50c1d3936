"""Each claim's role (mrgym/reproduce/roles.py) is set, and docs/calibration.md lists the same
table: the calibration/validation split is written once, before any fit (issue 34)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrgym.reproduce.claims import Result
from mrgym.reproduce.report import counts_text, load_claims, role_counts
from mrgym.reproduce.roles import (
    CALIBRATION,
    PAPERS_MODEL,
    PROBE,
    ROLES,
    TABLE,
    VALIDATION,
    role,
)
from mrgym.reproduce.running import Outcome

DOC = Path(__file__).resolve().parents[1] / "docs" / "calibration.md"


def _doc_table() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- roles:start -->")[1].split("<!-- roles:end -->")[0]
    rows = {}
    for line in block.strip().splitlines()[2:]:
        key, r = (c.strip() for c in line.strip("|").split("|"))
        rows[re.sub(r"^`|`$", "", key)] = r
    return rows


def test_every_registered_claim_has_a_role() -> None:
    keys = [c.key for c in load_claims()]
    roles = {k: role(k) for k in keys}
    assert set(roles.values()) <= set(ROLES)
    # every non-probe claim is in the table, and the table names no claim that is gone
    assert {k for k in keys if not k.startswith("probe-")} == set(TABLE)


def test_docs_list_the_same_roles_as_the_code() -> None:
    assert _doc_table() == TABLE


def test_the_split_the_issue_asks_for() -> None:
    assert role("ila-fig8-purefair") == CALIBRATION and role("ila-fig8") == VALIDATION
    assert all(role(f"ila-fig{n}") == CALIBRATION for n in (1, 2, 3))
    assert role("lsap-fig6abh") == PAPERS_MODEL and role("pna-jct") == VALIDATION
    assert role("probe-anything") == PROBE


def test_an_unclassified_claim_is_an_error() -> None:
    with pytest.raises(ValueError, match="'ila-fig99' has no role"):
        role("ila-fig99")


def test_role_counts_split_validation_from_calibration() -> None:
    by_key = {c.key: c for c in load_claims()}

    def out(key: str, verdict: str) -> Outcome:
        return Outcome(by_key[key], Result("x", verdict, "y"), [0], 0.0)

    counts = role_counts(
        [
            out("ila-fig8", "reproduced"),
            out("ila-fig7", "not reproduced"),
            out("ila-fig8-purefair", "reproduced"),
            out("lsap-fig4a", "same direction"),
        ]
    )
    assert counts[VALIDATION] == {"reproduced": 1, "same direction": 0, "not reproduced": 1}
    assert counts[CALIBRATION]["reproduced"] == 1 and counts[PAPERS_MODEL]["same direction"] == 1
    assert sum(counts[PROBE].values()) == 0
    outs = [out("ila-fig8", "reproduced"), out("ila-fig8-purefair", "not reproduced")]
    assert counts_text(outs).splitlines() == [
        "verdicts: 1 reproduced, 0 same direction, 1 not reproduced",
        "validation rows only: 1 reproduced, 0 same direction, 0 not reproduced",
    ]


def test_a_claim_whose_number_set_a_value_of_its_setup_is_calibration() -> None:
    # setups name, for each calibrated value, the claims whose numbers set it: such a
    # claim reads back an input (mrgym.reproduce.setups.self_calibrated)
    from mrgym.reproduce.setups import self_calibrated

    claims = load_claims()
    own = {c.key: self_calibrated(c.key, c.settings()) for c in claims}
    assert {k for k, v in own.items() if v} <= {k for k in own if role(k) == CALIBRATION}
    # lee-cloud's gridmix2 size class was chosen by §4.4.1's round times
    assert own["lee-4.4.1-rounds"] == own["lee-4.4.1-cost"] == ["data per round"]
