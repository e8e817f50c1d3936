"""Parallel sweeps (mrgym.sweep): a spawn process pool and Ray give the serial run's
results, in the serial order, for ``compare`` and ``reproduce``."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path

import pytest

import mrgym
from mrgym import cli, sweep
from mrgym.cli.commands import CsvStream, sweep_options
from mrgym.reproduce import report
from mrgym.reproduce.parallel import claim_groups

# xdist: one Ray cluster at a time (with tests/test_tune.py); serial_csv built once
pytestmark = pytest.mark.xdist_group("ray")


GRID = ["compare", "--config", "lsap-snapshot", "--schedulers", "fifo,lsap-sched", "--seeds"]


def _without_wall(path: Path) -> bytes:
    """The CSV's bytes with the one wall-clock column blanked (it differs between any two
    runs, serial ones included)."""
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    col = rows[0].index("wall_s")
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")  # csv.DictWriter's default
    for r in rows:
        w.writerow(r[:col] + r[col + 1 :])
    return buf.getvalue().encode()


def _compare(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / name
    assert cli.main([*GRID, "0-1", "--out", str(out), *extra]) == 0
    return out / "results.csv"


@pytest.fixture(scope="module")
def serial_csv(tmp_path_factory) -> Path:
    return _compare(tmp_path_factory.mktemp("serial"), "s", "--workers", "1")


def test_process_pool_csv_is_the_serial_csv(serial_csv, tmp_path):
    par = _compare(tmp_path, "p", "--workers", "2")
    assert _without_wall(par) == _without_wall(serial_csv)
    with open(par, newline="") as fh:
        rows = list(csv.DictReader(fh))
    # the grid's order (policy-major, then seed), the seeds the grid gave
    assert [(r["policy"], r["seed"]) for r in rows] == [
        ("fifo", "0"),
        ("fifo", "1"),
        ("lsap-sched", "0"),
        ("lsap-sched", "1"),
    ]
    # the two schedulers differ, so a mix-up of rows would show
    assert rows[0]["mean_jct_s"] != rows[2]["mean_jct_s"]


def test_evaluate_in_a_pool_returns_the_serial_rows():
    args = (["fifo", "delay"], ["lee-gpu"], [3, 7])
    ser = mrgym.evaluate(*args, keep_logs=True)
    par = mrgym.evaluate(*args, keep_logs=True, workers=2)
    strip = [{k: v for k, v in r.items() if k != "wall_s"} for r in ser]
    assert [{k: v for k, v in r.items() if k != "wall_s"} for r in par] == strip
    assert [r["seed"] for r in par] == [3, 7, 3, 7]
    assert par[0]["_jobs"] == ser[0]["_jobs"] and len(par[0]["_jobs"]) > 0


def test_pool_workers_get_one_intra_op_thread_unless_set(monkeypatch):
    # torch sizes its thread pool to every core: in a pool that already runs one episode
    # per core, a model's batch-1 forward passes would spin against each other
    for var in sweep.THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # the user's own setting stays
    got = sorted(sweep.run_grid(["OMP_NUM_THREADS", "MKL_NUM_THREADS"], workers=2, fn=os.getenv))
    assert got == ["1", "3"]
    assert os.environ.get("OMP_NUM_THREADS") is None  # this process is left as it was


def test_a_policy_that_cannot_travel_is_one_clear_error():
    with pytest.raises(ValueError, match="cannot be sent to a worker process"):
        mrgym.evaluate([lambda env: None, "fifo"], ["lee-gpu"], [0, 1], workers=2)


def test_csv_stream_appends_rows_as_they_arrive(tmp_path):
    calls = []
    s = CsvStream(tmp_path / "r.csv", lambda: calls.append(1))
    s.write({"policy": "b", "seed": 1, "_jobs": [1]})
    s.write({"policy": "a", "seed": 0, "_jobs": [2]})
    assert (tmp_path / "r.csv").read_bytes() == b"policy,seed\r\nb,1\r\na,0\r\n"
    s.close()
    assert calls == [1]  # the old results are cleared once, at the first row


def test_sweep_options():
    class A:
        workers = None
        backend = "process"
        address = None

    assert sweep_options(A()) == (sweep.default_workers(), "process", None)
    A.address = "10.0.0.1:6379"
    with pytest.raises(ValueError, match="only with --backend ray"):
        sweep_options(A())
    A.backend = "ray"
    assert sweep_options(A())[0] > 10_000  # joining a cluster: no cap by default
    A.workers = 0
    with pytest.raises(ValueError, match="--workers 0"):
        sweep_options(A())


# -- reproduce -----------------------------------------------------------------------------
CLAIMS = ("lsap-fig5", "lsap-fig6d", "lsap-fig6eg")  # two claim modules, under a second


def _report(out: Path, **kw) -> tuple[str, dict, dict[str, bytes]]:
    claims = [c for c in report.load_claims() if c.key in CLAIMS]
    outcomes = report.run_claims(claims, 1, out, **kw)
    report.write_report(outcomes, out, "cmd", date="D")
    md = re.sub(r"\d+\.\d s\b", "X s", (out / report.REPORT).read_text())
    res = json.loads((out / report.RESULTS).read_text())
    for c in res["claims"]:
        c.pop("wall_s")
    pngs = {p.name: p.read_bytes() for p in out.glob("*.png")}
    return md, res, pngs


def test_reproduce_in_parallel_writes_the_serial_report(tmp_path):
    ser = _report(tmp_path / "s")
    par = _report(tmp_path / "p", workers=2)
    assert par[0] == ser[0] and par[1] == ser[1]
    assert par[2] == ser[2] and sorted(par[2]) == [f"{k}.png" for k in CLAIMS]
    assert "(lsap-fig5.png)" in par[0]  # plots rebased into the report folder


def test_claims_sharing_a_cache_run_in_one_group():
    groups = claim_groups(report.load_claims())
    mods = [{c.run.__module__ for c in g} for g in groups]
    ila = [m for m in mods if "mrgym.reproduce.claims.ila_sched" in m]
    assert ila == [{"mrgym.reproduce.claims.ila", "mrgym.reproduce.claims.ila_sched"}]
    assert all(len(m) == 1 for m in mods if m is not ila[0])
    # every claim once, and each group in registration order
    keys = [c.key for g in groups for c in g]
    assert sorted(keys) == sorted(c.key for c in report.load_claims())


# -- Ray: one local cluster (2 CPUs) for the session, ray_cluster in tests/conftest.py --
def test_ray_compare_csv_is_the_serial_csv(ray_cluster, serial_csv, tmp_path):
    par = _compare(tmp_path, "r", "--backend", "ray", "--workers", "2")
    assert _without_wall(par) == _without_wall(serial_csv)


def test_local_ray_keeps_token_auth_without_a_file_in_home(ray_cluster):
    ray, had_file, had_env = ray_cluster
    assert ray.cluster_resources()["CPU"] == 2
    assert (Path.home() / ".ray" / "auth_token").exists() == had_file
    if not had_env and not had_file:  # a token of this session only, seen by the workers
        assert len(os.environ["RAY_AUTH_TOKEN"]) == 64


def test_ray_reproduce_gives_the_serial_outcomes(ray_cluster, tmp_path):
    claims = [c for c in report.load_claims() if c.key == "lsap-fig6d"]
    ser = report.run_claims(claims, 1, tmp_path / "s")
    par = report.run_claims(claims, 1, tmp_path / "r", backend="ray", workers=2)
    assert par[0].result.data == ser[0].result.data and par[0].result.ours == ser[0].result.ours
    assert par[0].result.plot == tmp_path / "r" / "lsap-fig6d.png"
    assert par[0].result.plot.read_bytes() == ser[0].result.plot.read_bytes()
