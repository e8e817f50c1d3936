"""A model's episodes in ``mrgym compare`` stop after a decision cap (``--max-decisions``,
by default the model's ``eval.max_steps``), and the table flags policies whose runs were
cut before every job finished."""

from __future__ import annotations

import math
import re

import pytest
from helpers import run_cli
from helpers import tiny_train_config as _cfg

from agents.model_policy import ModelSpec
from mrgym.summary import markdown_table, summarize

# xdist: the tiny trained run built once
pytestmark = pytest.mark.xdist_group("decision-cap")


def _row(policy: str, seed: int, jct: float, truncated) -> dict:
    return {
        "policy": policy,
        "scenario": "s",
        "seed": seed,
        "mean_jct_s": jct,
        "truncated": truncated,
    }


def test_the_table_flags_cut_runs_and_counts_them():
    rows = [
        _row("agent", 0, 10.0, True),
        _row("agent", 1, 12.0, False),
        _row("fair", 0, 11.0, False),
        _row("fair", 1, 13.0, "False"),  # read back from a CSV
        _row("late", 0, 11.0, "True"),
        _row("late", 1, 13.0, False),
    ]
    summary = summarize(rows)
    assert [r["truncated"] for r in summary] == [1, 0, 1]
    table = markdown_table(summary)
    assert "| agent † |" in table and "| fair |" in table and "| late † |" in table
    assert "† agent: 1 of 2 runs cut before every job finished" in table
    assert "† fair" not in table
    assert not math.isnan(summary[0]["mean_jct_s"][0])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from agents.train import train

    return train(
        _cfg("maskable_ppo", steps=64), logdir=tmp_path_factory.mktemp("cap"), progress=False
    )


def test_compare_cuts_a_model_at_max_decisions_and_says_so(run_dir, tmp_path):
    model = str(run_dir / "model.zip")
    common = ["compare", "--config", "lee-gpu", "--seeds", "0", "--schedulers", "fifo"]
    r = run_cli(*common, "--models", model, "--max-decisions", "5", "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    assert "| tiny-maskable_ppo † |" in r.stdout and "| fifo |" in r.stdout
    assert "† tiny-maskable_ppo: 1 of 1 runs cut" in r.stdout
    csv = (tmp_path / "a" / "results.csv").read_text()
    assert "truncated" in csv.splitlines()[0]
    # without the flag the model's own eval.max_steps (200 000) applies: lee-gpu finishes.
    # --workers 1: the cap is set in this process (_cap_model) before the runs go out, and
    # the capped run above already takes the default pool path; a second spawned pool
    # would only re-import torch and SB3 in two more interpreters (~4 CPU-s)
    r = run_cli(*common, "--models", model, "--workers", "1", "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    # (on lee-gpu's two jobs the untrained model may make FIFO's schedule: "(= fifo)")
    assert re.search(r"^\| tiny-maskable_ppo( \(= fifo\))? \|", r.stdout, re.M), r.stdout
    assert "†" not in r.stdout
    r = run_cli(*common, "--models", model, "--max-decisions", "-1", "--out", str(tmp_path / "c"))
    assert r.returncode != 0 and "--max-decisions: expected a count >= 0" in r.stderr
    # mrgym evaluate takes the same cap
    r = run_cli("evaluate", "--model", model, "--seeds", "0", "--max-decisions", "5")
    assert r.returncode == 0, r.stderr
    assert "| tiny-maskable_ppo † |" in r.stdout and "1 of 1 runs cut" in r.stdout


def test_a_model_spec_carries_its_cap_to_the_worker_policy(run_dir):
    spec = ModelSpec(str(run_dir / "model.zip"), "m", 7)
    policy = spec(None)
    assert policy.max_decisions == 7 and policy.eval_max_steps == 200_000
    assert ModelSpec(str(run_dir / "model.zip"), "m")(None).max_decisions is None


def test_a_cap_of_zero_means_no_cap_and_none_means_the_models_eval_cap():
    from mrgym.cli.commands import _cap_model

    class Policy:
        eval_max_steps = 200
        max_decisions = None

    class Factory:
        policy = Policy()

    f = Factory()
    assert _cap_model(f, 0) is None and f.policy.max_decisions is None
    assert _cap_model(f, None) == 200 and f.policy.max_decisions == 200
    assert _cap_model(f, 7) == 7 and f.policy.max_decisions == 7


def test_the_training_seed_table_counts_every_model_run_in_its_footnote():
    from mrgym.summary import across_training_seeds, markdown_table, summarize

    rows = []
    for pol, cut in (("m-s1", (True, False)), ("m-s2", (False, "True"))):
        for seed, t in enumerate(cut):
            rows.append(
                {"policy": pol, "scenario": "s", "seed": seed, "mean_jct_s": 10.0 + seed}
                | {"truncated": t}
            )
    grouped = across_training_seeds(summarize(rows), {"m-s1": "m", "m-s2": "m"})
    assert [g["truncated"] for g in grouped] == [2]
    table = markdown_table(grouped)
    assert "| m (2 training seeds) † |" in table
    assert "† m (2 training seeds): 2 of 4 runs cut" in table
