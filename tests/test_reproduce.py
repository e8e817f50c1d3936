"""`mrgym reproduce`: the report's shape (not its verdicts), failures as rows, the CLI.

One one-seed run of every registered claim is shared by the shape tests: it is also the
check that no bundled claim's experiment raises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run_cli

from mrgym.reproduce import VERDICTS, Claim, Result
from mrgym.reproduce.report import (
    COLUMNS,
    FAILED,
    PLOTS,
    REPORT,
    RESULTS,
    load_claims,
    reproduce,
    run_claims,
    select,
    write_report,
)

pytestmark = pytest.mark.xdist_group("reproduce")  # xdist: full_run is built once


def _table(md: str) -> tuple[list[str], list[list[str]]]:
    """Header cells and row cells of the report's one table."""
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| paper |"))
    rows = []
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        # split on pipes that are not escaped (a cell may contain "\|")
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
    header = [c.strip() for c in lines[start].split("|")[1:-1]]
    return header, rows


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    # two workers (claim groups in parallel, the same report as serially: test_sweep): the
    # one-seed run of every claim is the suite's longest fixture, and pytest uses one core
    path, outcomes = reproduce("all", 1, out, workers=2)
    return out, path, outcomes


def test_every_claim_runs_without_error(full_run):
    _, _, outcomes = full_run
    failed = {o.claim.key: o.result.why for o in outcomes if o.failed}
    assert not failed, failed
    assert {o.claim.key for o in outcomes} == {c.key for c in load_claims()}


def test_report_table_shape(full_run):
    out, path, outcomes = full_run
    assert path == out / REPORT
    md = path.read_text()
    assert md.startswith("# ")
    assert "mrgym reproduce --paper all --seeds 1" in md  # the command, to rerun it
    header, rows = _table(md)
    assert tuple(header) == COLUMNS
    assert len(rows) == len(load_claims())
    for row in rows:
        assert len(row) == len(COLUMNS), row
        assert row[COLUMNS.index("verdict")].strip("*") in VERDICTS
        assert all(cell for cell in row), row  # no empty cell: every row says why
    # one section per claim, each plot linked relatively and present
    for o in outcomes:
        assert f'<a id="{o.claim.key}"></a>' in md
        assert o.result.plot is not None, o.claim.key
        assert o.result.plot.exists()
        assert o.result.plot.parent == out / PLOTS
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert not Path(link).is_absolute()
        assert (out / link).exists(), link


def test_results_json(full_run):
    out, _, outcomes = full_run
    res = json.loads((out / PLOTS / RESULTS).read_text())
    assert res["columns"] == list(COLUMNS)
    assert [c["key"] for c in res["claims"]] == [o.claim.key for o in outcomes]
    for c in res["claims"]:
        assert c["verdict"] in VERDICTS
        assert c["seeds"] == [0]
        assert (out / c["plot"]).exists()
        assert isinstance(c["data"], dict)


def test_claims_come_in_paper_order():
    order = ["ila", "pna", "lsap", "hybridmr", "lee"]
    papers = [c.paper for c in select(load_claims())]
    assert papers == sorted(papers, key=order.index)
    assert {c.paper for c in select(load_claims(), "lee")} == {"lee"}
    with pytest.raises(ValueError, match="--paper"):
        select(load_claims(), "nosuch")


def _broken(seeds: list[int], out: Path) -> Result:
    raise RuntimeError("disk on fire\nsecond line")


def _fine(seeds: list[int], out: Path) -> Result:
    return Result(ours="1.0x", verdict="same direction", why="a | b", data={"x": float("nan")})


def test_a_failing_experiment_is_a_row_not_a_crash(tmp_path):
    claims = [
        Claim("ila", "stub-broken", "Fig. 0", "broken", "1x", _broken),
        Claim("lee", "stub-fine", "§0", "fine", "1x", _fine),
    ]
    outcomes = run_claims(claims, 2, tmp_path)
    assert [o.failed for o in outcomes] == [True, False]
    bad = outcomes[0].result
    assert bad.verdict == "not reproduced"
    assert bad.why == FAILED + "RuntimeError: disk on fire second line"  # one line
    assert outcomes[1].seeds == [0, 1]
    write_report(outcomes, tmp_path, "mrgym reproduce (test)")
    _, rows = _table((tmp_path / REPORT).read_text())
    assert len(rows) == 2 and all(len(r) == len(COLUMNS) for r in rows)  # "a | b" escaped
    res = json.loads((tmp_path / PLOTS / RESULTS).read_text())  # NaN written as null
    assert res["claims"][1]["data"] == {"x": None}


def test_cli_one_paper(tmp_path):
    args = ("--paper", "lee", "--seeds", "1", "--workers", "2", "--out", str(tmp_path))
    r = run_cli("reproduce", *args)
    assert r.returncode == 0, r.stderr
    header, rows = _table((tmp_path / REPORT).read_text())
    assert tuple(header) == COLUMNS
    assert rows and all(row[0].startswith("Lee") for row in rows)
    assert "lee-fig4.11" in r.stderr  # progress lines off a terminal
    assert (tmp_path / PLOTS / "lee-fig4.11.png").exists()
    assert str(tmp_path) in r.stdout  # where it wrote


@pytest.mark.parametrize(
    "args,msg",
    [(("--seeds", "0"), "--seeds 0"), (("--paper", "nosuch"), "invalid choice")],
)
def test_cli_bad_arguments(tmp_path, args, msg):
    r = run_cli("reproduce", *args, "--out", str(tmp_path))
    assert r.returncode == 2
    assert msg in r.stderr
    assert "Traceback" not in r.stderr
