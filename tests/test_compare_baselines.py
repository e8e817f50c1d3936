"""agents.analysis.curves and agents.analysis.pareto read the baselines' numbers from a
``mrgym compare`` result (``--baselines``) instead of having them typed by hand."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("torch")

from agents.analysis import curves, pareto  # noqa: E402
from mrgym import cli  # noqa: E402


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp")
    argv = ["compare", "--config", "lee-gpu", "--schedulers", "fifo,fair", "--seeds", "0-1"]
    assert cli.main([*argv, "--workers", "1", "--out", str(out)]) == 0
    return out


def _hand_means(folder, column: str) -> dict[str, float]:
    """The mean over the seeds of ``column`` per policy, straight from the CSV."""
    with open(folder / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out: dict[str, list[float]] = {}
    for r in rows:
        out.setdefault(r["policy"], []).append(float(r[column]))
    return {p: sum(v) / len(v) for p, v in out.items()}


def _run(tmp_path, name: str):
    """A fake training run with two held-out evaluations (mean, p95)."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / name / "tb" / "run_1"))
    for step, mean, p95 in ((100, 400.0, 900.0), (200, 100.0, 150.0)):
        w.add_scalar("mr_eval/mean_jct", mean, step)
        w.add_scalar("mr_eval/p95_jct", p95, step)
        w.add_scalar("mr_eval/jobs_completed", 2, step)
    w.close()
    return tmp_path / name


def test_compare_means_are_the_seed_means_of_the_csv(compare_dir):
    mean = _hand_means(compare_dir, "mean_jct_s")
    p95 = _hand_means(compare_dir, "p95_jct_s")
    assert set(mean) == {"fifo", "fair"} and mean["fifo"] != mean["fair"]
    got = curves.compare_means(compare_dir)  # the folder, or its results.csv
    assert got == curves.compare_means(compare_dir / "results.csv")
    for p in mean:
        assert got[p]["mean_jct"] == pytest.approx(mean[p])
        assert got[p]["p95_jct"] == pytest.approx(p95[p])
    assert list(curves.compare_means(compare_dir, ["fair"])) == ["fair"]
    assert pareto.file_baselines(str(compare_dir), None) == {
        p: (pytest.approx(mean[p]), pytest.approx(p95[p])) for p in mean
    }


def test_pareto_takes_the_file_and_a_hand_typed_value_replaces_one(compare_dir, tmp_path, capsys):
    run = _run(tmp_path, "a-s0")
    fair = _hand_means(compare_dir, "mean_jct_s")["fair"]
    fair_p95 = _hand_means(compare_dir, "p95_jct_s")["fair"]
    png = tmp_path / "p.png"
    argv = [str(run), "--baselines", str(compare_dir), "--baseline-names", "fair", f"--out={png}"]
    pareto.main(argv)
    out = capsys.readouterr().out
    # the run's 100 s / 150 s point beats fair (~147 / ~197 s on lee-gpu) on both
    assert fair > 100.0 and fair_p95 > 150.0
    assert "| a-s0@200 | 100.0 | 150.0 |" in out and "| fair |" not in out
    assert png.stat().st_size > 5_000
    pareto.main([*argv, "--baseline", "fair=50:1000"])  # by hand: replaces the file's
    assert "| fair | 50.0 | 1000.0 |" in capsys.readouterr().out


def test_curves_take_the_file_s_value_for_the_tag(compare_dir, tmp_path, monkeypatch):
    seen = {}

    def fake_plot(runs, baselines, out, tag, title):
        seen.update(baselines)
        return out

    monkeypatch.setattr(curves, "plot_curves", fake_plot)
    run = _run(tmp_path, "b-s0")
    curves.main([str(run), "--baselines", str(compare_dir), "--tag", "mr_eval/p95_jct"])
    assert seen == pytest.approx(_hand_means(compare_dir, "p95_jct_s"))
    seen.clear()
    curves.main([str(run), "--baselines", str(compare_dir), "--baseline", "fifo=1"])
    assert seen["fifo"] == 1.0
    assert seen["fair"] == pytest.approx(_hand_means(compare_dir, "mean_jct_s")["fair"])


def test_a_bad_baselines_file_or_name_is_one_line(compare_dir, tmp_path, capsys):
    run = _run(tmp_path, "c-s0")
    for argv, msg in (
        (["--baselines", str(tmp_path / "none")], "expected a mrgym compare folder"),
        (["--baselines", str(compare_dir), "--baseline-names", "late"], "late: not in"),
        (["--baseline-names", "fair"], "--baseline-names: only with --baselines"),
    ):
        with pytest.raises(SystemExit) as e:
            pareto.main([str(run), *argv, "--out", str(tmp_path / "x.png")])
        assert e.value.code == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
