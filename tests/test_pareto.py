"""Mean against p95 JCT of the held-out evaluations, and their Pareto front (agents/pareto.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("torch")

from agents.analysis.pareto import (  # noqa: E402
    EvalPoint,
    evaluation_points,
    front_table,
    main,
    pareto_front,
    plot_pareto,
)


def write_run(path, evals):
    """A fake run: (step, mean, p95, jobs) per evaluation; None leaves the tag out."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(path / "tb" / "run_1"))
    for step, mean, p95, jobs in evals:
        for tag, v in (("mean_jct", mean), ("p95_jct", p95), ("jobs_completed", jobs)):
            if v is not None:
                w.add_scalar(f"mr_eval/{tag}", v, step)
    w.close()
    return path


def test_pareto_front_drops_dominated_points_ties_and_duplicates():
    points = [
        (1.0, 5.0),  # 0: front
        (2.0, 3.0),  # 1: front
        (2.0, 4.0),  # 2: same mean as 1, worse p95
        (3.0, 3.0),  # 3: same p95 as 1, worse mean
        (4.0, 1.0),  # 4: front
        (2.0, 3.0),  # 5: a duplicate of 1: only the first is kept
        (5.0, 6.0),  # 6: dominated by everything
        (0.5, 9.0),  # 7: front, the lowest mean
    ]
    assert pareto_front(points) == [7, 0, 1, 4]
    assert pareto_front([]) == []
    assert pareto_front([(3.0, 3.0)]) == [0]


def test_evaluation_points_pair_the_two_tags_and_mark_the_cut_step(tmp_path):
    run = write_run(
        tmp_path / "a-s0",
        [
            (100, 180.0, 400.0, 25),
            (200, 150.0, 450.0, 25),
            (300, 120.0, 300.0, 23),  # fewer jobs finished: cut
            (400, 110.0, None, 25),  # no p95 at this step: no point
        ],
    )
    assert evaluation_points(run) == [
        EvalPoint("a-s0", 100, 180.0, 400.0, True),
        EvalPoint("a-s0", 200, 150.0, 450.0, True),
        EvalPoint("a-s0", 300, 120.0, 300.0, False),
    ]


def test_the_front_skips_cut_evaluations_and_takes_baselines(tmp_path, capsys):
    a = write_run(
        tmp_path / "a-s0",
        [
            (100, 180.0, 400.0, 25),
            (200, 150.0, 450.0, 25),
            (300, 120.0, 300.0, 23),  # would dominate every point, but it was cut
        ],
    )
    b = write_run(tmp_path / "b-s0", [(150_000, 140.0, 420.0, 25), (250_000, 170.0, 350.0, 25)])
    baselines = {"fair": (163.7, 486.6), "hybridmr": (130.0, 520.0)}  # fair is dominated
    expected = "\n".join(
        [
            "| point | mean JCT (s) | p95 JCT (s) |",
            "|---|---:|---:|",
            "| hybridmr | 130.0 | 520.0 |",
            "| b-s0@150000 | 140.0 | 420.0 |",
            "| b-s0@250000 | 170.0 | 350.0 |",
        ]
    )
    assert front_table([a, b], baselines) == expected
    out = plot_pareto([a, b], baselines, tmp_path / "docs" / "p.png", title="t")
    assert out == tmp_path / "docs" / "p.png" and out.stat().st_size > 5_000
    png = tmp_path / "cli" / "q.png"
    main(
        [
            str(a),
            str(b),
            "--baseline=fair=163.7:486.6",
            "--baseline=hybridmr=130:520",
            f"--out={png}",
        ]
    )
    assert capsys.readouterr().out == f"{expected}\nwrote {png}\n"
    assert png.stat().st_size > 5_000


def test_the_cli_refuses_a_bad_baseline_and_a_run_without_p95(tmp_path, capsys):
    run = write_run(tmp_path / "c-s0", [(100, 180.0, None, 25)])
    with pytest.raises(SystemExit) as bad:
        main([str(run), "--baseline", "fair=1", "--out", str(tmp_path / "x.png")])
    assert bad.value.code == 2
    err = capsys.readouterr().err
    assert "--baseline: expected NAME=MEAN:P95, got 'fair=1'" in err
    with pytest.raises(SystemExit) as missing:
        main([str(run), "--out", str(tmp_path / "x.png")])
    assert missing.value.code == 2
    assert f"{run}: no mr_eval/p95_jct in its TensorBoard events" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_nan_points_are_never_on_the_front_in_any_order():
    nan = float("nan")
    assert pareto_front([(nan, 1.0), (1.0, 5.0), (2.0, 3.0)]) == [1, 2]
    assert pareto_front([(1.0, 5.0), (2.0, 3.0), (nan, 1.0)]) == [0, 1]
    assert pareto_front([(1.0, float("inf"))]) == []


def test_the_evaluations_own_complete_tag_marks_a_lone_cut_evaluation(tmp_path):
    # a run with one evaluation, cut: fewer jobs than its own best cannot tell, the tag can
    from torch.utils.tensorboard import SummaryWriter

    run = write_run(tmp_path / "cut-s0", [(1000, 120.0, 300.0, 23)])
    w = SummaryWriter(str(run / "tb" / "run_1"))
    w.add_scalar("mr_eval/complete", 0.0, 1000)
    w.close()
    assert [p.complete for p in evaluation_points(run)] == [False]
    table = front_table([run], {"fair": (150.0, 400.0)})
    assert "cut-s0" not in table and "| fair |" in table
