"""`mrgym reproduce`: one run of every claim (one seed, ``--quick`` sizes, through the CLI
in-process), the report it writes, a few claims' numbers against ranges worked out
independently, the committed report in docs/reproduction/, and the command's folders and
flags on stub claims.

Every registered claim runs exactly once in the suite, in :func:`full_run`; the verdict
rules are tested on hand-made numbers in ``tests/test_reproduce_verdicts.py``."""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from mrgym.calibration import FILE
from mrgym.cli import main
from mrgym.reproduce import VERDICTS, Claim, Result, roles
from mrgym.reproduce import report as rep
from mrgym.reproduce.claims import finish
from mrgym.reproduce.report import (
    COLUMNS,
    FAILED,
    REPORT,
    RESULTS,
    load_claims,
    run_claims,
    select,
    write_report,
)
from mrgym.reproduce.stats import figure

# the module's tests share full_run: one xdist worker runs them all (--dist loadgroup)

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "reproduction"
QUICK = {
    # the ila72 runs and ILA's training set that these share (mrgym.reproduce.ila_runs)
    "ila-fig5",
    "ila-fig6",
    "ila-fig7",
    "ila-fig7-ila",
    "ila-fig8",
    "ila-fig8-ila",
    "ila-fig8-purefair",
    "ila-ablation",
    "ila-classic",
    "ila-table5",
    "ila-scalability",
    "ila-fig12",
    "hybridmr-fig6a",
    "hybridmr-fig8a",
    "hybridmr-fig8b",
    "hybridmr-sla",
    "hybridmr-fig9",
    "lee-4.4.1-cost",
    "lee-4.4.1-rounds",
    "lee-predict-dist",
    "lee-predict-workers",
    "lee-predict-deadline",
    "lee-predict-online",
    "lee-tara-jct",
    "lee-tara-accuracy",
    "lee-tara-random",
    "lee-tara-ga-sensitivity",
    "pna-jct",
    "pna-table3",
    "probe-guest-cache",
    "probe-compressed",
    "probe-membw",
    "probe-dom0",
    "probe-variability",
}

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


def _links(md: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)


def _cli(*args: str) -> tuple[int, str, str]:
    """``mrgym ARGS`` in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """Every claim, seed 0, quick sizes, serially (xdist runs the other modules beside)."""
    out = tmp_path_factory.mktemp("repro")
    rc, stdout, stderr = _cli(
        "reproduce", "--seeds", "1", "--quick", "--workers", "1", "--out", str(out)
    )
    res = json.loads((out / RESULTS).read_text())
    return out, rc, stdout, stderr, res, {c["key"]: c for c in res["claims"]}


def test_every_claim_runs_once_without_error(full_run):
    out, rc, stdout, stderr, res, by_key = full_run
    failed = {c["key"]: c["why"] for c in res["claims"] if c["failed"]}
    assert rc == 0 and not failed, failed
    keys = [c.key for c in select(load_claims())]
    assert [c["key"] for c in res["claims"]] == keys  # each once, in the report's order
    assert len(keys) == len(load_claims())
    assert f"[{len(keys)}/{len(keys)}]" in stderr  # progress lines off a terminal
    assert f"wrote {out / REPORT}" in stdout


def test_report_table_and_sections(full_run):
    out, *_ = full_run
    md = (out / REPORT).read_text()
    assert md.startswith("# ")
    # the command that makes it again, and what --quick means
    assert f"`mrgym reproduce --paper all --seeds 1 --quick --out {out}`" in md
    assert "sizes: **quick**" in md
    assert "`mrgym reproduce --update` rewrites `docs/reproduction/`" in md
    header, rows = _table(md)
    assert tuple(header) == COLUMNS
    assert len(rows) == len(load_claims())
    for row in rows:
        assert len(row) == len(COLUMNS), row
        assert row[COLUMNS.index("verdict")].strip("*") in VERDICTS
        assert all(cell for cell in row), row  # no empty cell: every row says why
    links = _links(md)
    assert len(links) == len(load_claims())
    for link in links:  # each figure beside the report, linked relatively
        assert "/" not in link and (out / link).stat().st_size > 1000, link


def test_results_json(full_run):
    out, _, _, _, res, _ = full_run
    assert res["columns"] == list(COLUMNS) and res["quick"] is True
    for c in res["claims"]:
        assert c["verdict"] in VERDICTS and c["why"] and c["ours"]
        assert c["seeds"] == [0]
        assert c["plot"] == f"{c['key']}.png" and (out / c["plot"]).is_file()
        assert isinstance(c["data"], dict) and c["data"]


def test_only_the_heaviest_claims_have_quick_sizes():
    assert {c.key for c in load_claims() if c.has_quick} == QUICK


def test_quick_ila72_runs_are_the_smaller_episode_cached_apart():
    from mrgym.config import load_scenario
    from mrgym.reproduce import ila_runs
    from mrgym.workloads.paper_mixes import ila_total_maps

    quick = ila_runs.ila72_run("fair", 0, quick=True)
    # ila72's 25 jobs scaled to 300 maps in all (each job rounded, at least one map)
    target = ila_runs.QUICK_OVERRIDES["workload.scale_maps_to"]
    assert len(quick.jobs) == 25
    assert target <= sum(j.maps for j in quick.jobs) <= target + 25
    assert ila_runs.ila72_run("fair", 0, quick=True) is quick  # cached...
    assert ila_runs._CACHE[("ila72", "fair", 0, True, ())] is quick  # ...apart from full size
    # the full-size episode is at least twice as large (counted without simulating it)
    full = load_scenario("ila72").workload
    assert full.scale_maps_to is None and ila_total_maps(full) > 2 * target


# -- numbers of cheap claims (no quick sizes: these are their full one-seed numbers) -------
def test_ila_fig3_rack_local_map_is_bound_by_the_link(full_run):
    # 100 MB over a 100 Mbit/s (12.5 MB/s) link of which background traffic takes 30 %:
    # the read alone takes 100 / (0.7 x 12.5) = 11.43 s, and the map computes while it
    # streams, so it ends after that and before read + the node-local map time
    node, server, rack, _ = full_run[5]["ila-fig3"]["data"]["per_seed_seconds"][0]
    read = 100 / (0.7 * 12.5)
    assert read <= rack <= read + node
    # another VM of the same host: no link on the path, so close to node-local
    assert node <= server <= 1.1 * node


def test_lee_fig4_11_sort_gains_nothing_from_the_gpu(full_run):
    # cg1.4xlarge has cc1.4xlarge's CPUs plus GPUs; Sort has no GPU kernel, so swapping
    # one node for the other leaves its JCT as it was
    data = full_run[5]["lee-fig4.11"]["data"]["per_seed"]
    assert data["sort"][0] == pytest.approx(1.0, abs=0.02)
    assert data["crypto"][0] > 1.3  # Crypto uses the GPU: clearly faster


def test_lsap_fig4a_optimum_at_ten_tasks(full_run):
    # 5 replicas on 100 nodes, 50 idle: P(no idle replica) = C(50,5) / C(100,5) = 0.0281;
    # 10 tasks hardly compete for 50 slots, so the optimum places 97.2 % locally
    opt = full_run[5]["lsap-fig4a"]["data"]["optimum"]["10"][0]
    assert opt == pytest.approx(0.972, abs=0.015)  # 2 000 tasks: sd 0.004


def test_hybridmr_cpu_bound_overhead_within_the_papers_8_percent(full_run):
    # a VM with the host's cores cannot be faster than the host, and HybridMR Fig. 1(a)
    # puts CPU-bound jobs within 8 % of native
    for app in ("piest", "kmeans"):
        over = full_run[5][f"hybridmr-fig1a-{app}"]["data"]["per_seed_overhead"][0]
        assert 0.0 < over <= 0.08, (app, over)


# -- the committed report ------------------------------------------------------------------
def test_committed_report_is_what_update_writes():
    md = (COMMITTED / REPORT).read_text()
    assert "- command: `mrgym reproduce --paper all --update`" in md
    res = json.loads((COMMITTED / RESULTS).read_text())
    keys = [c.key for c in select(load_claims())]
    assert [c["key"] for c in res["claims"]] == keys
    _, rows = _table(md)
    assert len(rows) == len(keys)
    links = _links(md)
    assert sorted(links) == sorted(f"{k}.png" for k in keys)
    assert all((COMMITTED / link).is_file() for link in links)
    assert all(c["plot"] == f"{c['key']}.png" for c in res["claims"])
    # nothing else in the folder: --update replaces exactly these files
    expect = {REPORT, RESULTS, *(f"{k}.png" for k in keys)}
    # ... and the calibration's record, which `mrgym calibrate --update` writes beside them
    expect |= {FILE} if (COMMITTED / FILE).is_file() else set()
    assert {p.name for p in COMMITTED.iterdir()} == expect
    assert not (REPO / "REPRODUCTION.md").exists() and not (REPO / "reproduction").exists()


def test_claims_come_in_paper_order():
    order = ["ila", "pna", "lsap", "hybridmr", "lee"]
    papers = [c.paper for c in select(load_claims())]
    assert papers == sorted(papers, key=order.index)
    assert {c.paper for c in select(load_claims(), "lee")} == {"lee"}
    with pytest.raises(ValueError, match="--paper"):
        select(load_claims(), "nosuch")
    # the order does not depend on which claim module a program imported first
    by_module: dict[str, list[Claim]] = {}
    for c in load_claims():
        by_module.setdefault(c.run.__module__, []).append(c)
    shuffled = [c for m in reversed(by_module) for c in by_module[m]]
    assert select(shuffled) == select(load_claims())


# -- stub claims: failures, quick, folders and flags ---------------------------------------
def _broken(seeds: list[int], out: Path) -> Result:
    raise RuntimeError("disk on fire\nsecond line")


def _fine(seeds: list[int], out: Path) -> Result:
    return Result(ours="1.0x", verdict="same direction", why="a | b", data={"x": float("nan")})


def _drawn(seeds: list[int], out: Path, quick: bool = False) -> Result:
    fig, ax = figure()
    ax.plot(seeds, seeds, label="seeds")
    data = {"seeds": seeds, "quick": quick}
    return finish(
        fig,
        ax,
        out,
        "stub-drawn",
        "stub",
        "cap",
        ours="1",
        verdict="reproduced",
        why="-",
        data=data,
    )


STUBS = [
    Claim("ila", "stub-drawn", "Fig. 0", "drawn", "1x", _drawn, default_seeds=2),
    Claim("lee", "stub-fine", "§0", "fine", "1x", _fine),
]


@pytest.fixture
def stubs(monkeypatch):
    monkeypatch.setattr(rep, "load_claims", lambda: list(STUBS))
    for key in ("stub-drawn", "stub-fine", "stub-broken", "stub-stop"):  # a claim must have a role
        monkeypatch.setitem(roles.TABLE, key, roles.VALIDATION)
    return STUBS


def test_a_failing_experiment_is_a_row_not_a_crash(stubs, tmp_path):
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
    res = json.loads((tmp_path / RESULTS).read_text())  # NaN written as null
    assert res["claims"][1]["data"] == {"x": None}


def test_quick_reaches_only_claims_that_have_it(tmp_path):
    drawn, fine = STUBS
    assert drawn.has_quick and not fine.has_quick
    assert drawn.execute([0], tmp_path).data["quick"] is False  # the default: full sizes
    assert drawn.execute([0], tmp_path, quick=True).data["quick"] is True
    assert fine.execute([0], tmp_path, quick=True).verdict == "same direction"


def test_default_out_is_a_new_runs_folder_each_time(stubs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = _cli("reproduce", "--workers", "1")
    second = _cli("reproduce", "--workers", "1", "--claims", "stub-drawn")
    assert first[0] == second[0] == 0
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2 and all(
        re.fullmatch(r"reproduce-\d{8}-\d{6}(-\d+)?", p.name) for p in runs
    )
    a, b = (json.loads((p / RESULTS).read_text()) for p in runs)
    assert a["command"] == "mrgym reproduce --paper all"  # no --out: rerun it as it is
    assert [c["key"] for c in a["claims"]] == ["stub-drawn", "stub-fine"]
    assert a["claims"][0]["seeds"] == [0, 1]  # the claim's default seeds
    assert [c["key"] for c in b["claims"]] == ["stub-drawn"]
    assert b["command"] == "mrgym reproduce --paper all --claims stub-drawn"
    assert (runs[0] / "stub-drawn.png").is_file()
    assert f"in runs/{runs[0].name}/" in first[1]  # where it wrote


def test_update_writes_the_checkouts_docs_reproduction(stubs, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "docs").mkdir()
    monkeypatch.setattr(rep, "REPO", tmp_path)
    rc, _, _ = _cli("reproduce", "--update", "--workers", "1", "--seeds", "1")
    assert rc == 0
    d = tmp_path / "docs" / "reproduction"
    assert sorted(p.name for p in d.iterdir()) == [REPORT, RESULTS, "stub-drawn.png"]
    md = (d / REPORT).read_text()
    assert "- command: `mrgym reproduce --paper all --seeds 1 --update`" in md
    assert _links(md) == ["stub-drawn.png"]
    # a second update says it replaces the report, and leaves files of its own alone
    (d / "notes.txt").write_text("mine")
    (d / "stub-gone.png").write_text("an old figure of no claim")
    rc, _, err = _cli("reproduce", "--update", "--workers", "1", "--seeds", "1")
    assert rc == 0 and "its report.md, results.json and figures will be replaced" in err
    left = sorted(p.name for p in d.iterdir())
    assert left == sorted([REPORT, RESULTS, "stub-drawn.png", "notes.txt", "stub-gone.png"])


def test_out_never_replaces_a_report_it_did_not_write(stubs, tmp_path):
    """A user's own report.md or results.json in --out is refused before any run."""
    for name, text in ((REPORT, "# my notes\n"), (RESULTS, '{"mine": 1}')):
        d = tmp_path / name.split(".")[0]
        d.mkdir()
        (d / name).write_text(text)
        rc, _, err = _cli("reproduce", "--workers", "1", "--out", str(d))
        assert rc == 2 and f"holds a {name} that mrgym reproduce did not write" in err
        assert (d / name).read_text() == text and sorted(os.listdir(d)) == [name]


def _interrupted(seeds: list[int], out: Path) -> Result:
    raise KeyboardInterrupt


def test_an_interrupted_run_leaves_the_earlier_report_whole(stubs, tmp_path, monkeypatch):
    """Figures are staged until every claim has run: Ctrl-C midway keeps the old report,
    its figures and results.json, and leaves no staging folder behind."""
    out = tmp_path / "rep"
    assert _cli("reproduce", "--workers", "1", "--out", str(out))[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == [REPORT, RESULTS, "stub-drawn.png"]
    stop = Claim("lee", "stub-stop", "§0", "stops", "1x", _interrupted)
    monkeypatch.setattr(rep, "load_claims", lambda: [*STUBS, stop])
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce("all", 1, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize(
    "args,msg",
    [
        (("--update", "--out", "x"), "--update and --out: give one"),
        (("--update", "--quick"), "--update and --quick"),
        (("--update", "--paper", "lee"), "--update and --paper lee: the committed report holds"),
        (("--update", "--claims", "stub-fine"), "--update and --claims"),
        (("--update",), "--update: writes docs/reproduction/ of a source checkout"),
        (("--claims", "nope,stub-fine"), "--claims nope: no such claim"),
        (("--seeds", "0"), "--seeds 0: expected at least 1"),
    ],
)
def test_bad_flags_are_one_line_errors(stubs, tmp_path, monkeypatch, args, msg):
    monkeypatch.setattr(rep, "REPO", tmp_path)  # no pyproject.toml: an installed package
    monkeypatch.chdir(tmp_path)
    rc, out, err = _cli("reproduce", *args)
    assert rc == 2 and err.startswith("mrgym: error: ") and msg in err, err
    assert err.count("\n") == 1 and not (tmp_path / "runs").exists()


def test_unknown_paper_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--paper", "nosuch"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_list_names_the_claims_without_running_them():
    rc, out, _ = _cli("reproduce", "--list", "--paper", "lee")
    lee = [c.key for c in select(load_claims(), "lee")]
    assert rc == 0 and [ln.split()[0] for ln in out.splitlines()] == lee


def test_clear_old_removes_a_withdrawn_claims_figure(tmp_path: Path) -> None:
    from mrgym.reproduce.report import clear_old

    (tmp_path / RESULTS).write_text(
        json.dumps({"command": "mrgym reproduce", "claims": [{"plot": "withdrawn.png"}]})
    )
    (tmp_path / "withdrawn.png").write_bytes(b"png")
    (tmp_path / "mine.txt").write_text("not the report's")
    assert sorted(clear_old(tmp_path)) == [RESULTS, "withdrawn.png"]
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
