"""Trace readers on malformed, empty and edge-case input: one-line errors naming the file
and line (SWIM) or job (Rumen); sizes of zero-input and truncated jobs; the reduce cap."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from helpers import RUMEN, SWIM, needs_rumen, needs_swim

import mrgym
from mrgym.registry import make
from mrgym.workloads import read_rumen, read_swim, rumen_jobs, swim_jobs

MB = 1024 * 1024
GOOD_ROW = "job0\t1\t1\t1048576\t0\t5"


def one_line_error(fn, path: Path, match: str) -> str:
    """Call ``fn(path)``; it must raise a short one-line ValueError that names the file,
    matches ``match``, and hides the deeper exception it came from."""
    with pytest.raises(ValueError, match=match) as info:
        fn(path)
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 200, msg
    assert msg.startswith(path.name), msg
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__
    return msg


def workload(path: Path | str, **kw) -> object:
    sc = mrgym.load_scenario("ila72", {"workload": {"kind": "swim", "path": str(path), **kw}})
    return sc.workload


# -- SWIM: malformed rows ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("row", "match"),
    [
        ("job1\t2\tx", r"bad\.tsv:2: expected 6 or 9 tab-separated fields, got 3$"),
        ("job1\t2\t1\t10\t0\t5\tpath", r"bad\.tsv:2: expected 6 or 9 .* got 7$"),
        ("job1\t2\t1\t10\t0\t5\tp\t\t\textra", r"bad\.tsv:2: expected 6 or 9 .* got 10$"),
        ("job1\t2\t1\t10\t-5\t5", r"bad\.tsv:2: shuffle_bytes must be a whole number .* '-5'$"),
        ("job1\t2\t1\tlots\t0\t5", r"bad\.tsv:2: map_input_bytes must be .* got 'lots'$"),
        ("job1\t2\t1\t10\t0\t1.5", r"bad\.tsv:2: reduce_output_bytes must be .* '1\.5'$"),
        ("job1\t2\t1\t10\t0\tinf", r"bad\.tsv:2: reduce_output_bytes must be .* 'inf'$"),
        ("job1\t2\t1\t1" + "0" * 400 + "\t0\t5", r"bad\.tsv:2: map_input_bytes must be .*\.\.\.$"),
        ("job1\tnan\t1\t10\t0\t5", r"bad\.tsv:2: submit_s must be a finite number .* 'nan'$"),
        ("job1\t2\tinf\t10\t0\t5", r"bad\.tsv:2: gap_s must be a finite number .* 'inf'$"),
        ("job1\t-3\t1\t10\t0\t5", r"bad\.tsv:2: submit_s must be .* >= 0, got '-3'$"),
        ("\t2\t1\t10\t0\t5", r"bad\.tsv:2: job_id is empty$"),
    ],
)
def test_swim_malformed_row_names_file_and_line(tmp_path, row, match):
    p = tmp_path / "bad.tsv"
    p.write_text(f"{GOOD_ROW}\n{row}\n")
    one_line_error(read_swim, p, match)


def test_swim_error_quotes_at_most_60_chars(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text(f"job0\t1\t1\t{'9x' * 500}\t0\t5\n")
    msg = one_line_error(read_swim, p, r"bad\.tsv:1: map_input_bytes must be .*\.\.\.$")
    assert len(msg.split("got ", 1)[1]) == 60


def test_swim_non_utf8_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_bytes(f"{GOOD_ROW}\n".encode() + b"job\xff1\t2\t1\t10\t0\t5\n")
    one_line_error(read_swim, p, r"bad\.tsv:2: not UTF-8 text \(byte 4\)$")


def test_swim_accepts_scientific_byte_counts_and_crlf(tmp_path):
    p = tmp_path / "ok.tsv"
    p.write_bytes(b"job0\t1\t1\t1.5e9\t0\t5\r\n\r\n")
    (row,) = read_swim(p)
    assert row.input_bytes == 1_500_000_000 and row.output_bytes == 5


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_swim_empty_trace_is_an_error(tmp_path, text):
    p = tmp_path / "empty.tsv"
    p.write_text(text)
    one_line_error(read_swim, p, r"^empty\.tsv: no job rows \(empty trace\)$")


def test_swim_empty_selection_names_file_and_window(tmp_path):
    p = tmp_path / "day.tsv"
    p.write_text("job0\t10\t10\t1048576\t0\t5\njob1\t50\t40\t1048576\t0\t5\n")
    w = workload(p, start_s=100.0, duration_s=60.0)
    with pytest.raises(ValueError, match=r"^day\.tsv: no jobs in the selection start_s=100, ") as e:
        swim_jobs(read_swim(p), w, 128.0)
    assert "duration_s=60" in str(e.value) and "10-50 s" in str(e.value)
    with pytest.raises(ValueError, match="no jobs in the selection"):
        mrgym.run_sim(
            mrgym.load_scenario(
                "ila72", {"workload": {"kind": "swim", "path": str(p), "start_s": 100.0}}
            ),
            "fifo",
            0,
        )


# -- SWIM: sizes ---------------------------------------------------------------------------------
def shuffle_mb(job) -> float:
    return job.input_mb * job.profile.map_output_ratio if job.n_reduces else 0.0


def output_mb(job) -> float:
    return job.input_mb * job.profile.output_ratio


@pytest.mark.parametrize("input_bytes", [0, 1, 100])
def test_swim_zero_input_job_carries_trace_bytes(tmp_path, input_bytes):
    """A job that reads (almost) nothing reads one empty split; its 10 GB shuffle and 5 GB
    output stay 10 GB and 5 GB (a ratio over ~0 input bytes used to make them 10 TB+)."""
    p = tmp_path / "zero.tsv"
    p.write_text(f"job0\t0\t0\t{input_bytes}\t{10 * 1024 * MB}\t{5 * 1024 * MB}\n")
    (job,) = swim_jobs(read_swim(p), workload(p), 128.0)
    assert job.n_maps == 1 and job.input_mb == pytest.approx(1e-3)
    assert shuffle_mb(job) == pytest.approx(10 * 1024, rel=0.01)
    assert output_mb(job) == pytest.approx(5 * 1024, rel=0.01)
    assert job.n_reduces == 10  # 10 GB / reduce_mb (1 GB)


def test_swim_zero_input_job_shuffles_trace_bytes_in_the_simulator(tmp_path):
    p = tmp_path / "zero.tsv"
    p.write_text(f"job0\t0\t0\t0\t{2 * 1024 * MB}\t{MB}\n")
    sc = mrgym.load_scenario("ila72", {"workload": {"kind": "swim", "path": str(p)}})
    # speculation off: shuffle_mb counts every reduce attempt's copies, and a backup of a
    # reduce on a slow VM copies its share again (seeds 0, 1, 3, 4 of 0-7: 3072 MB with
    # speculation on), so the job's own shuffle is measured only without backups
    m = mrgym.run_sim(sc, make("fifo", speculation=False), 0).metrics
    assert m["jobs_completed"] == 1
    assert m["shuffle_mb"] == pytest.approx(2 * 1024, rel=0.01)


def test_swim_truncated_job_shrinks_in_proportion(tmp_path):
    """max_maps=8 keeps 8 of a 10 GB job's 80 blocks: shuffle, output and reduces shrink by
    the same 1/10, so each task keeps the trace's size."""
    p = tmp_path / "big.tsv"
    p.write_text(f"job0\t0\t0\t{10 * 1024 * MB}\t{20 * 1024 * MB}\t{1024 * MB}\n")
    (job,) = swim_jobs(read_swim(p), workload(p, max_maps=8), 128.0)
    assert job.n_maps == 8 and job.input_mb == pytest.approx(1024)
    assert shuffle_mb(job) == pytest.approx(2 * 1024)
    assert output_mb(job) == pytest.approx(102.4)
    assert job.n_reduces == 2  # 2 GB simulated shuffle / 1 GB per reduce


def test_swim_reduces_capped_at_max_maps(tmp_path):
    p = tmp_path / "wide.tsv"
    # 1 TB input (8192 maps, capped at 2000) shuffling 40 TB: 10 000 reduces of 1 GB asked
    p.write_text(
        f"job0\t0\t0\t{1024 * 1024 * MB}\t{40 * 1024 * 1024 * MB}\t0\njob1\t1\t1\t0\t1\t0\n"
    )
    big, tiny = swim_jobs(read_swim(p), workload(p), 128.0)
    assert big.n_maps == 2000 and big.n_reduces == 2000
    assert tiny.n_reduces == 1  # any shuffle at all keeps one reduce
    big, _ = swim_jobs(read_swim(p), workload(p, max_maps=50), 128.0)
    assert big.n_maps == 50 and big.n_reduces == 50


@needs_swim
def test_swim_fb2009_zero_input_rows_write_trace_bytes():
    rows = read_swim(SWIM)
    jobs = swim_jobs(rows, workload(SWIM), 128.0)
    zero = [(r, j) for r, j in zip(rows, jobs) if r.input_bytes == 0]
    assert len(zero) == 86  # this day's rows with no map input (all map-only)
    assert all(j.n_maps == 1 and j.n_reduces == 0 for _, j in zero)
    trace_out = sum(r.output_bytes for r, _ in zero) / MB
    assert sum(output_mb(j) for _, j in zero) == pytest.approx(trace_out, rel=0.01)
    # the whole day: simulated output within the trace's (6.23 TB), no longer ~2.8x over it
    total = sum(output_mb(j) for j in jobs)
    trace_total = sum(r.output_bytes for r in rows) / MB
    assert 0.95 * trace_total < total <= trace_total * 1.0001
    assert max(j.n_reduces for j in jobs) == 2000  # the 8.2 TB shuffle asks for 8217


# -- Rumen: malformed files ------------------------------------------------------------------
def rumen_job(**over) -> dict:
    job = {
        "jobID": "job_1_0001",
        "user": "u1",
        "submitTime": 1_000_000,
        "totalMaps": 1,
        "totalReduces": 1,
        "outcome": "SUCCESS",
        "mapTasks": [
            {
                "preferredLocations": [{"layers": ["rack1", "host1"]}],
                "attempts": [
                    {
                        "result": "SUCCESS",
                        "hostName": "/rack1/host1",
                        "hdfsBytesRead": MB,
                        "startTime": 1_000_100,
                        "finishTime": 1_002_100,
                    }
                ],
            }
        ],
        "reduceTasks": [
            {"attempts": [{"result": "SUCCESS", "reduceShuffleBytes": MB, "hdfsBytesWritten": MB}]}
        ],
    }
    job.update(over)
    return job


def write_jobs(path: Path, *jobs: dict) -> Path:
    path.write_text("\n".join(json.dumps(j) for j in jobs) + "\n")
    return path


def test_rumen_good_synthetic_job_reads(tmp_path):
    (j,) = read_rumen(write_jobs(tmp_path / "ok.json", rumen_job()))
    assert (j.job_id, j.total_maps, j.map_input_bytes, j.shuffle_bytes) == ("job_1_0001", 1, MB, MB)
    assert j.map_locality["node"] == 1 and j.map_durations_s == (2.0,)


def attempt_with(**kw) -> list:
    att = {"result": "SUCCESS", "hostName": "/rack1/host1", "hdfsBytesRead": MB, **kw}
    return [{"attempts": [att]}]


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"totalMaps": "abc"}, r"job 2 \(job_1_0001\): totalMaps must be a number, got 'abc'$"),
        ({"totalMaps": -2}, r"job 2 \(job_1_0001\): totalMaps must be a whole number >= 0"),
        ({"totalReduces": 1.5}, r"totalReduces must be a whole number >= 0, got 1\.5$"),
        ({"submitTime": [1]}, r"job 2 \(job_1_0001\): submitTime must be a number, got \[1\]$"),
        ({"submitTime": None}, r"job 2 \(job_1_0001\): submitTime is missing$"),
        ({"submitTime": 10**400}, r"job 2 \(job_1_0001\): submitTime must be a number, got 1000"),
        ({"jobID": 7}, r"job 2: jobID must be a string, got 7$"),
        ({"mapTasks": "none"}, r"job 2 \(job_1_0001\): mapTasks must be a list, got 'none'$"),
        ({"mapTasks": [3]}, r"mapTasks\[0\] must be an object, got 3$"),
        ({"mapTasks": [{"attempts": {"a": 1}}]}, r"mapTasks\[0\]\.attempts must be a list"),
        (
            {"mapTasks": attempt_with(hdfsBytesRead="12")},
            r"mapTasks\[0\]\.attempts\[0\]\.hdfsBytesRead must be a number, got '12'$",
        ),
        (
            {"mapTasks": attempt_with(startTime=True)},
            r"mapTasks\[0\]\.attempts\[0\]\.startTime must be a number, got True$",
        ),
        ({"mapTasks": attempt_with(hostName=5)}, r"\.hostName must be a string, got 5$"),
        ({"mapTasks": attempt_with(result=0)}, r"\.result must be a string, got 0$"),
        (
            {"mapTasks": [{"preferredLocations": [{"layers": "rack1/host1"}], "attempts": []}]},
            r"preferredLocations\[0\]\.layers must be a list of strings",
        ),
        (
            {"reduceTasks": [{"attempts": [{"result": "SUCCESS", "reduceShuffleBytes": {}}]}]},
            r"reduceTasks\[0\]\.attempts\[0\]\.reduceShuffleBytes must be a number, got \{\}$",
        ),
        ({"user": ["x" * 100]}, r"user must be a string, got \['x+\.\.\.$"),
    ],
)
def test_rumen_wrong_types_name_file_job_and_field(tmp_path, over, match):
    p = write_jobs(tmp_path / "bad.json", rumen_job(), rumen_job(**over))
    one_line_error(read_rumen, p, match)


def test_rumen_nan_literal_is_not_a_number(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(rumen_job()).replace('"submitTime": 1000000', '"submitTime": NaN'))
    one_line_error(read_rumen, p, r"^bad\.json: job 1 \(job_1_0001\): submitTime must be .* nan$")


def test_rumen_truncated_json(tmp_path):
    text = json.dumps(rumen_job()) + "\n" + json.dumps(rumen_job(jobID="job_1_0002"))
    p = tmp_path / "cut.json"
    p.write_text(text[: len(text) - 40])
    one_line_error(read_rumen, p, r"^cut\.json: job 2 \(line 2\): invalid JSON at character \d+")


@needs_rumen
def test_rumen_truncated_real_trace(tmp_path):
    text = gzip.decompress(RUMEN.read_bytes())
    p = tmp_path / "cut.trace.json"
    p.write_bytes(text[: len(text) // 2])
    one_line_error(read_rumen, p, r"^cut\.trace\.json: job \d+ \(line \d+\): invalid JSON")
    g = tmp_path / "cut.trace.json.gz"
    g.write_bytes(RUMEN.read_bytes()[:100_000])  # a gzip stream cut short
    one_line_error(read_rumen, g, r"^cut\.trace\.json\.gz: not a valid gzip file \(")


def test_rumen_top_level_array(tmp_path):
    p = tmp_path / "array.json"
    p.write_text(json.dumps([rumen_job(), rumen_job()]))
    one_line_error(read_rumen, p, r"^array\.json: job 1: expected a JSON object per job .* a list$")


def test_rumen_bad_gzip(tmp_path):
    p = tmp_path / "bad.json.gz"
    p.write_bytes(b"this is not gzip at all")
    one_line_error(read_rumen, p, r"^bad\.json\.gz: not a valid gzip file \(")
    p.write_bytes(b"\x1f\x8b\x08\x00garbage-after-magic")
    one_line_error(read_rumen, p, r"^bad\.json\.gz: not a valid gzip file \(")


def test_rumen_gzip_detected_by_content(tmp_path):
    p = tmp_path / "packed.json"  # gzip data without the .gz suffix
    p.write_bytes(gzip.compress(json.dumps(rumen_job()).encode()))
    assert len(read_rumen(p)) == 1


def test_rumen_non_utf8(tmp_path):
    p = tmp_path / "latin.json"
    good = json.dumps(rumen_job()).encode()
    p.write_bytes(good + b"\n" + good.replace(b'"u1"', b'"\xe9t\xe9"'))
    one_line_error(
        read_rumen, p, r"^latin\.json: job 2 \(line 2\): not UTF-8 text \(byte \d+ of the file\)$"
    )
    g = tmp_path / "latin.json.gz"
    g.write_bytes(gzip.compress(p.read_bytes()))
    one_line_error(read_rumen, g, r"^latin\.json\.gz: job 2 \(line 2\): not UTF-8 text")


@pytest.mark.parametrize("text", ["", "  \n\n"])
def test_rumen_empty_trace(tmp_path, text):
    p = tmp_path / "empty.json"
    p.write_text(text)
    one_line_error(read_rumen, p, r"^empty\.json: no jobs \(empty trace\)$")


def rumen_workload(path: Path, **kw) -> object:
    sc = mrgym.load_scenario("ila72", {"workload": {"kind": "rumen", "path": str(path), **kw}})
    return sc.workload


def test_rumen_empty_selection(tmp_path):
    p = write_jobs(tmp_path / "t.json", rumen_job(), rumen_job(jobID="j2", submitTime=1_030_000))
    rows = read_rumen(p)
    with pytest.raises(
        ValueError, match=r"^t\.json: no jobs in the selection start_s=60, .*0-30 s"
    ):
        rumen_jobs(rows, rumen_workload(p, start_s=60.0), 128.0)
    q = write_jobs(tmp_path / "nomaps.json", rumen_job(totalMaps=0))
    with pytest.raises(ValueError, match=r"^nomaps\.json: no jobs with totalMaps > 0$"):
        rumen_jobs(read_rumen(q), rumen_workload(q), 128.0)


# -- Rumen: sizes --------------------------------------------------------------------------------
def test_rumen_zero_input_job_shuffles_trace_bytes(tmp_path):
    """500 maps that read nothing and 3 reduces that shuffle 30 MB: the simulated job
    shuffles 30 MB (a ratio over a 1-byte guard made it ~1.5e7 MB)."""
    maps = [{"attempts": [{"result": "SUCCESS", "hdfsBytesRead": 0}]}] * 500
    red = [{"attempts": [{"result": "SUCCESS", "reduceShuffleBytes": 10 * MB}]}] * 3
    p = write_jobs(
        tmp_path / "z.json",
        rumen_job(totalMaps=500, totalReduces=3, mapTasks=maps, reduceTasks=red),
    )
    (job,) = rumen_jobs(read_rumen(p), rumen_workload(p), 128.0)
    assert job.n_maps == 500 and job.n_reduces == 3
    assert shuffle_mb(job) == pytest.approx(30.0, rel=0.01)


def test_rumen_reduces_shrink_with_maps_and_are_capped(tmp_path):
    maps = [{"attempts": [{"result": "SUCCESS", "hdfsBytesRead": 64 * MB}]}] * 400
    red = [{"attempts": [{"result": "SUCCESS", "reduceShuffleBytes": 100 * MB}]}] * 80
    p = write_jobs(
        tmp_path / "r.json",
        rumen_job(totalMaps=400, totalReduces=80, mapTasks=maps, reduceTasks=red),
        rumen_job(jobID="j2", totalMaps=1, totalReduces=500),
    )
    big, wide = rumen_jobs(read_rumen(p), rumen_workload(p, max_maps=100), 128.0)
    # a quarter of the maps: a quarter of the input, shuffle and reduces (per-reduce 100 MB)
    assert big.n_maps == 100 and big.n_reduces == 20
    assert shuffle_mb(big) == pytest.approx(2000.0)
    assert math.isclose(shuffle_mb(big) / big.n_reduces, 100.0)
    assert wide.n_maps == 1 and wide.n_reduces == 100  # 500 asked, capped at max_maps


@needs_rumen
def test_rumen_mumak_trace_shuffle_equals_trace():
    rows = read_rumen(RUMEN)
    jobs = rumen_jobs(rows, rumen_workload(RUMEN), 128.0)
    trace = sum(r.shuffle_bytes for r in rows) / MB
    assert trace == pytest.approx(1060.0, rel=0.01)
    # every job is under max_maps, so nothing shrinks: the trace's 1.06 GB, not the 40 GB
    # that ratios over 0-byte inputs gave its ten jobs reading nothing
    assert sum(shuffle_mb(j) for j in jobs) == pytest.approx(trace, rel=0.01)
