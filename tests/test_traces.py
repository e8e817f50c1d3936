"""Trace readers on the real third-party traces beside the project (skipped when absent)."""

from __future__ import annotations

import pytest
from helpers import RUMEN, SWIM, needs_rumen, needs_swim

import mrgym
from mrgym.workloads import read_rumen, read_swim


@needs_swim
def test_swim_reader_counts_and_fields():
    rows = read_swim(SWIM)
    assert len(rows) == 5894  # the trace's own row count
    assert rows[0].job_id == "job0" and rows[0].submit_s == 49 and rows[0].input_bytes == 740773
    assert all(b.submit_s >= a.submit_s for a, b in zip(rows, rows[1:]))
    map_only = sum(1 for r in rows if r.shuffle_bytes == 0) / len(rows)
    assert map_only == pytest.approx(0.755, abs=0.005)  # the trace README's map-only fraction


@needs_swim
def test_swim_scenario_maps_sizes_to_blocks_and_runs():
    sc = mrgym.load_scenario(
        "ila72", {"workload": {"kind": "swim", "path": str(SWIM), "max_jobs": 30, "max_maps": 200}}
    )
    from mrgym.runner import build_simulation

    sim = build_simulation(sc, "dl-sched", 0)
    rows = read_swim(SWIM)[:30]
    for job, row in zip(sim.jobs, sorted(rows, key=lambda r: r.submit_s)):
        expect = min(200, max(1, -(-row.input_bytes // (128 * 1024 * 1024))))
        assert len(job.maps) == expect
        assert (len(job.reduces) == 0) == (row.shuffle_bytes == 0)
    sim.run()
    assert all(j.finish_s is not None for j in sim.jobs)


@needs_rumen
def test_rumen_reader_jobs_and_locality():
    jobs = read_rumen(RUMEN)
    assert len(jobs) == 19
    assert sorted(j.total_maps for j in jobs) == [
        1,
        1,
        1,
        1,
        1,
        1,
        3,
        20,
        20,
        20,
        35,
        101,
        131,
        329,
        500,
        500,
        500,
        3204,
        3204,
    ]
    assert sum(1 for j in jobs if j.outcome == "SUCCESS") == 14
    assert sum(j.successful_maps for j in jobs) == 5650
    loc = {k: sum(j.map_locality[k] for j in jobs) for k in ("node", "rack", "off_rack")}
    assert loc == {"node": 3034, "rack": 1409, "off_rack": 201}  # the trace README's figures


@needs_rumen
def test_rumen_scenario_runs():
    sc = mrgym.load_scenario(
        "ila72",
        {
            "workload": {
                "kind": "rumen",
                "path": str(RUMEN),
                "max_jobs": 8,
                "max_maps": 100,
                "time_scale": 10.0,
            }
        },
    )
    r = mrgym.run_sim(sc, "dl-sched", 0)
    assert r.metrics["jobs_completed"] == r.metrics["jobs_submitted"] == 8


def test_swim_reader_rejects_bad_rows(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("job0\t1\t1\t10\t0\t5\njob1\t2\tx\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: expected 6 or 9 tab-separated fields, got 3"):
        read_swim(p)


def test_swim_reader_accepts_input_path_variant(tmp_path):
    p = tmp_path / "paths.tsv"
    p.write_text("job0\t1\t1\t1048576\t0\t5\tinputPath0\t\t\n")
    (row,) = read_swim(p)
    assert row.input_bytes == 1048576
