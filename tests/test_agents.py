"""SB3 training on MRCluster-v0 with tiny budgets: train, save, load, evaluate, resume, TB tags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from helpers import run_cli
from helpers import tiny_train_config as _cfg

from agents.config import TrainConfigError, load_train_config
from agents.train import ModelFactory, load_model, train


def _tags(run: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for events in run.glob("tb/*/events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo", "a2c", "dqn"])
def test_each_algorithm_trains_saves_and_evaluates(algo, tmp_path):
    run = train(_cfg(algo), logdir=tmp_path, progress=False)
    assert (run / "model.zip").exists() and (run / "config.yaml").exists()
    model, cfg = load_model(run / "model.zip")
    assert cfg.algorithm == algo and model.num_timesteps >= 256
    import mrgym

    rows = mrgym.evaluate([ModelFactory(run / "model.zip")], ["lee-gpu"], [100, 101])
    assert len(rows) == 2 and all(r["jobs_submitted"] == 2 and r["sim_time_s"] <= 600 for r in rows)
    assert rows[0]["policy"] == f"tiny-{algo}"  # the run name says the algorithm: no prefix


def test_tensorboard_has_mr_tags_and_hparams(tmp_path):
    # 2-minute episodes, so several end within the budget
    run = train(
        _cfg("maskable_ppo", n_envs=2, steps=512, cap_s=120), logdir=tmp_path, progress=False
    )
    tags = _tags(run)
    # (mean JCT appears once an episode completes a job; two-minute episodes may not)
    for tag in (
        "mr/jobs_completed",
        "mr/locality_node",
        "mr/fairness",
        "mr/utilization",
        "mr/reward_jct",
        "mr/reward_throughput",
        "mr_eval/jobs_completed",
    ):
        assert tag in tags, sorted(tags)


def test_resume_continues_the_step_count(tmp_path, monkeypatch):
    cfg = _cfg("maskable_ppo", steps=128)
    run = train(cfg, logdir=tmp_path, progress=False)
    ckpt = run / "checkpoints" / "model_128_steps.zip"
    assert ckpt.exists()
    cfg2 = cfg.model_copy(update={"total_steps": 384})
    monkeypatch.chdir(tmp_path)  # a resume must not write into the default logdir runs/
    run2 = train(cfg2, resume=ckpt, progress=False)
    assert run2 == run and not (tmp_path / "runs").exists()
    model, _ = load_model(run / "model.zip")
    assert model.num_timesteps == 384
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["steps"] == 384 and stats["resumed_from"] == 128
    # from model.zip (or the run folder) with the run's own config: same folder, carries on
    assert train(None, steps=512, resume=run / "model.zip", progress=False) == run
    assert load_model(run)[0].num_timesteps == 512
    assert yaml.safe_load((run / "config.yaml").read_text())["total_steps"] == 512
    assert (run / "checkpoints" / "model_512_steps.zip").exists()
    with pytest.raises(ValueError, match=r"already has 512 steps .* pass more than 512"):
        train(None, steps=256, resume=run, progress=False)
    other = cfg.model_copy(update={"env": cfg.env.model_copy(update={"queue_order": "arrival"})})
    with pytest.raises(ValueError, match="the config's env .* differs from the run's"):
        train(other, steps=1024, resume=run, progress=False)


def test_cli_resume_from_a_checkpoint(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(yaml.safe_dump(_cfg("maskable_ppo", steps=128).model_dump()))
    assert run_cli("train", "--config", str(cfg), "--logdir", str(tmp_path)).returncode == 0
    run = tmp_path / "tiny-maskable_ppo"
    missing = run / "checkpoints" / "model_100000_steps.zip"
    r = run_cli("train", "--resume", str(missing), "--steps", "256")
    assert r.returncode == 2 and ".zip.zip" not in r.stderr
    assert "no saved model at" in r.stderr and "model_128_steps.zip" in r.stderr
    ckpt = run / "checkpoints" / "model_128_steps.zip"
    r = run_cli("train", "--resume", str(ckpt), "--steps", "100")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "the model already has 128 steps" in r.stderr
    r = run_cli("train", "--resume", str(ckpt), "--steps", "256", "--logdir", str(tmp_path / "x"))
    assert r.returncode == 0, r.stderr
    assert f"model: {run / 'model.zip'}" in r.stdout and not (tmp_path / "x").exists()
    assert yaml.safe_load((run / "train_stats.yaml").read_text())["steps"] == 256


def test_short_run_says_why_it_has_no_episode_tags(tmp_path, capsys):
    # a one-day cap: no lee-gpu episode ends within 64 steps
    run = train(_cfg("maskable_ppo", steps=64, cap_s=86_400), logdir=tmp_path, progress=False)
    assert yaml.safe_load((run / "train_stats.yaml").read_text())["episodes_finished"] == 0
    err = capsys.readouterr().err
    assert "no training episode finished in 64 steps" in err
    assert "held-out episodes on lee-gpu took ~" in err and "mr/ and rollout/" in err
    assert not any(t.startswith("mr/") for t in _tags(run))


def test_bad_training_config_names_the_key(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("algorithm: sac\n")
    with pytest.raises(TrainConfigError, match="bad.yaml: algorithm:"):
        load_train_config(p)
    p.write_text("n_envs: 2\nlearning_rate: 0.1\n")
    with pytest.raises(TrainConfigError, match="bad.yaml: learning_rate: unknown key"):
        load_train_config(p)


@pytest.mark.parametrize(
    "algo,typo,meant",
    [("maskable_ppo", "nsteps", "n_steps"), ("dqn", "buffersize", "buffer_size")],
)
def test_a_hyperparameter_typo_is_one_line_with_the_keys_and_a_guess(tmp_path, algo, typo, meant):
    """Checked when the config is read, before an environment is built: the algorithm's
    constructor would say it at the end of a long traceback."""
    p = tmp_path / "bad.yaml"
    p.write_text(f"algorithm: {algo}\nhyperparameters:\n  {typo}: 64\n  gamma: 0.99\n")
    with pytest.raises(TrainConfigError) as e:
        load_train_config(p)
    msg = str(e.value)
    assert msg.startswith(
        f"bad.yaml: hyperparameters.{typo}: unknown key (did you mean {meant!r}?)"
    )
    taken = msg.split(f"({algo} takes ")[1].rstrip(")").split(", ")
    assert meant in taken and "gamma" in taken and typo not in taken
    assert "seed" not in taken and "env" not in taken  # train() passes those itself
    r = run_cli("train", "--config", str(p), "--logdir", str(tmp_path / "runs"))
    assert (
        r.returncode == 2 and r.stderr.count("\n") == 1 and f"did you mean {meant!r}?" in r.stderr
    )
    assert not (tmp_path / "runs").exists()  # no run folder, no environment


def test_a_bundled_recipe_is_found_by_its_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_train_config("maskable_ppo_ila72").name == "maskable_ppo_ila72"
    assert load_train_config("ppo_ila72.yaml").name == "ppo_ila72"
    # the tried recipes, by their folder
    assert load_train_config("tried/ftlam_jobset_ila72_gate").lambda_per == "second"
    with pytest.raises(
        TrainConfigError, match="did you mean 'maskable_ppo_ila72'[?][)] [(]bundled: "
    ):
        load_train_config("maskable_ppo")
    # a file of that name in the working folder wins
    (tmp_path / "ppo_ila72.yaml").write_text("algorithm: a2c\n")
    assert load_train_config("ppo_ila72.yaml").algorithm == "a2c"


def test_bundled_training_configs_load():
    import mrgym
    from mrgym.benchmark.protocol import VALIDATION_SEEDS

    scenarios = set()
    # the recipes at the top and the tried ones (configs/train/tried/)
    for path in sorted(Path(__file__).resolve().parents[1].glob("configs/train/**/*.yaml")):
        cfg = load_train_config(path)
        assert cfg.name == path.stem  # the run folder is named for the file
        mrgym.load_scenario(cfg.env.scenario)  # a bundled scenario
        scenarios.add(cfg.env.scenario)
        # every pick is a development decision: on the protocol's validation seeds, and on
        # their first half, as recipes are compared on the second (docs/learning.md)
        assert set(cfg.eval.seeds) <= set(VALIDATION_SEEDS[:10]), path.name
    assert {"ila72", "pna60", "hybrid48", "lee-gpu"} <= scenarios


def test_cli_train_evaluate_compare(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(yaml.safe_dump(_cfg("maskable_ppo", steps=128).model_dump()))
    r = run_cli("train", "--config", str(cfg), "--logdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    model = tmp_path / "tiny-maskable_ppo" / "model.zip"
    # the scenario and env settings come from the model's config.yaml
    r = run_cli("evaluate", "--model", str(model), "--seeds", "100-101")
    assert r.returncode == 0, r.stderr
    assert "| tiny-maskable_ppo |" in r.stdout
    tb = tmp_path / "tb"
    # --workers 1: the tensorboard runs are written here, from the rows, whichever way the
    # runs went; a model's runs through the default spawned pool are
    # tests/test_decision_cap.py's, and a pool here would only re-import torch and SB3 in
    # two more interpreters
    r = run_cli(
        "compare",
        "--workers",
        "1",
        "--config",
        "lee-gpu",
        "--seeds",
        "0-1",
        "--schedulers",
        "fifo",
        "--models",
        str(model),
        "--out",
        str(tmp_path / "cmp"),
        "--tensorboard",
        str(tb),
    )
    assert r.returncode == 0, r.stderr
    # (an untrained model may make FIFO's schedule on lee-gpu's two jobs: "(= fifo)")
    assert "| fifo |" in r.stdout and re.search(
        r"^\| tiny-maskable_ppo( \(= fifo\))? \|", r.stdout, re.M
    )
    # one folder per comparison under the --tensorboard DIR, named as the compare's own
    # folder, a run per policy in it
    (cmp,) = tb.iterdir()
    assert cmp.name == "cmp"
    assert sorted(p.name for p in cmp.iterdir()) == ["fifo", "tiny-maskable_ppo"]
    assert f"tensorboard --logdir {tb}" in r.stdout
    # the baseline is a constant line over the agent's steps (0..128), the model a point
    # at its own step count, under the agent's own tags
    fifo, agent = _scalars(cmp / "fifo"), _scalars(cmp / "tiny-maskable_ppo")
    for tag in ("mr/mean_jct", "mr_eval/mean_jct", "mr/locality_node", "mr_eval/jobs_completed"):
        assert [s for s, _ in fifo[tag]] == [0, 128] and fifo[tag][0][1] == fifo[tag][1][1]
        assert [s for s, _ in agent[tag]] == [128]


def test_compare_tensorboard_in_runs_joins_the_compare_folder(tmp_path, monkeypatch):
    """``--tensorboard runs`` with the default ``runs/compare-...`` folder writes the
    policies' runs into that folder, beside results.csv: one folder per comparison."""
    monkeypatch.chdir(tmp_path)
    args = ["compare", "--config", "lee-gpu", "--seeds", "0", "--schedulers", "fifo,fair"]
    r = run_cli(*args, "--workers", "1", "--tensorboard", "runs")
    assert r.returncode == 0, r.stderr
    (cmp,) = (tmp_path / "runs").iterdir()
    assert re.fullmatch(r"compare-lee-gpu-\d{8}-\d{6}", cmp.name), cmp.name
    assert {"results.csv", "fair", "fifo"} <= {p.name for p in cmp.iterdir()}


def _scalars(run: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run))
    acc.Reload()
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


def test_tensorboard_baselines_span_the_agent_runs_under_the_logdir(tmp_path):
    from agents.tensorboard import write_tensorboard

    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "train_stats.yaml").write_text("steps: 300000\n")
    rows = [
        {"policy": "fifo", "seed": s, "mean_jct_s": v, "map_locality.node": 0.5}
        for s, v in ((0, 100.0), (1, 300.0))
    ]
    assert write_tensorboard(rows, tmp_path) == {"fifo": [0, 300_000]}
    fifo = _scalars(tmp_path / "fifo")
    assert fifo["mr/mean_jct"] == [(0, 200.0), (300_000, 200.0)]  # the mean over the seeds
    assert fifo["mr_eval/locality_node"] == [(0, 0.5), (300_000, 0.5)]
    # a second comparison into the same folder replaces the line instead of adding a
    # second one over the same steps (a zig-zag)
    rows2 = [dict(r, mean_jct_s=50.0) for r in rows]
    write_tensorboard(rows2, tmp_path)
    assert _scalars(tmp_path / "fifo")["mr/mean_jct"] == [(0, 50.0), (300_000, 50.0)]


def _eval_steps(run: Path) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps: list[int] = []
    for events in sorted(run.glob("tb/*/events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        if "mr_eval/jobs_completed" in acc.Tags()["scalars"]:
            steps += [e.step for e in acc.Scalars("mr_eval/jobs_completed")]
    return steps


def test_resume_keeps_the_held_out_schedule_and_a_second_run_gets_its_own_folder(tmp_path):
    base = _cfg("maskable_ppo", steps=128)
    cfg = base.model_copy(update={"eval": base.eval.model_copy(update={"every_steps": 128})})
    run = train(cfg, logdir=tmp_path, progress=False)
    train(None, steps=384, resume=run, progress=False)
    # once per 128 steps and at the end, never twice at a step, never every step after a
    # resume until the schedule catches up
    assert sorted(_eval_steps(run)) == [128, 256, 384]
    # the same config again: a new folder, not the old run's checkpoints beside new ones
    again = train(cfg, logdir=tmp_path, progress=False)
    assert again == tmp_path / f"{cfg.name}-2" and (again / "model.zip").exists()


def test_checkpoints_and_evaluations_do_not_change_what_trains(tmp_path):
    """The same seed and config train the same weights however often the run saves and
    evaluates (sampled): a pick among denser checkpoints sees the same run."""
    import torch

    base = _cfg("maskable_ppo", steps=256)
    dense = base.model_copy(
        update={
            "name": "dense",
            "checkpoint_every_steps": 64,
            "eval": base.eval.model_copy(update={"every_steps": 64, "decode": "sample"}),
        }
    )
    a = train(base, logdir=tmp_path, progress=False)
    b = train(dense, logdir=tmp_path, progress=False)
    dense_saves = len(list((b / "checkpoints").glob("*.zip")))
    assert dense_saves == 4 > len(list((a / "checkpoints").glob("*.zip")))
    assert sorted(_eval_steps(b)) == [64, 128, 192, 256]  # it did evaluate, every 64 steps
    wa = load_model(a)[0].policy.state_dict()
    wb = load_model(b)[0].policy.state_dict()
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_an_interrupted_run_saves_its_model(tmp_path, monkeypatch):
    from agents import callbacks

    def interrupt(self):  # Ctrl-C during training, after the first rollout
        if self.num_timesteps >= 64:
            raise KeyboardInterrupt
        return True

    monkeypatch.setattr(callbacks.MRMetricsCallback, "_on_step", interrupt)
    with pytest.raises(KeyboardInterrupt):
        train(_cfg("maskable_ppo", steps=256), logdir=tmp_path, progress=False)
    run = tmp_path / "tiny-maskable_ppo"
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["interrupted"] and 64 <= stats["steps"] < 256
    assert load_model(run)[0].num_timesteps == stats["steps"]  # --resume RUN continues it


def _steps(run: Path) -> dict[str, list[int]]:
    """Each scalar tag's steps, over the run's event files."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, list[int]] = {}
    for events in sorted(run.glob("tb/*/events.out.tfevents.*")):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            out.setdefault(tag, []).extend(e.step for e in acc.Scalars(tag))
    return out


def test_one_point_per_step_per_tag_and_a_line_per_evaluation(tmp_path, capsys):
    """The held-out evaluation writes its mr_eval/ tags alone: SB3's train/*, time/ and the
    mr/ means keep to the rollouts' ends (here the evaluation at the last step used to write
    a second train/* point there).  Each evaluation prints its result."""
    base = _cfg("maskable_ppo", steps=320)
    cfg = base.model_copy(update={"eval": base.eval.model_copy(update={"every_steps": 128})})
    run = train(cfg, logdir=tmp_path, progress=True)
    rollout_ends = [64, 128, 192, 256, 320]  # n_steps 64, one environment
    steps = _steps(run)
    for tag, at in steps.items():
        assert len(at) == len(set(at)), (tag, at)
        assert set(at) <= ({128, 256, 320} if tag.startswith("mr_eval/") else set(rollout_ends))
    assert steps["time/fps"] == rollout_ends
    assert steps["train/loss"] == rollout_ends[1:]  # an update's loss: at the next rollout's end
    assert steps["mr_eval/jobs_completed"] == [128, 256, 320]

    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("eval @ ")]
    assert [int(x.split()[2].replace(",", "")) for x in lines] == [128, 256, 320]
    assert all("(1 seed: 7; " in x for x in lines)
    jct = _scalars(run / "tb" / "run_1").get("mr_eval/mean_jct", [])
    for step, value in jct:  # the line's number is the evaluation's
        (line,) = [x for x in lines if x.startswith(f"eval @ {step} steps: ")]
        assert f"mean JCT {value:.1f} s" in line
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    best = stats.get("best_eval_step")
    news = [int(x.split()[2].replace(",", "")) for x in lines if x.endswith(": new best")]
    if best is not None:  # the last "new best" line is the pick, with its number
        assert news and news[-1] == best
        assert f"eval @ {best} steps: mean JCT {stats['best_eval_mean_jct_s']:.1f} s" in "\n".join(
            x for x in lines if x.endswith(": new best")
        )
    assert 0 < stats["eval_wall_s"] < stats["wall_s"]


def test_an_evaluation_writes_alone_and_is_taken_out_of_fps(monkeypatch):
    """SB3's time/fps divides the steps by the time since ``model.start_time``: each
    evaluation moves that start by its own duration.  The values SB3 holds for its next
    dump stay held."""
    from types import SimpleNamespace

    from stable_baselines3.common.logger import KVWriter, Logger

    from agents import callbacks

    class Written(KVWriter):
        def __init__(self) -> None:
            self.rows: list[tuple[int, dict]] = []

        def write(self, key_values, key_excluded, step=0) -> None:
            self.rows.append((step, dict(key_values)))

    out = Written()
    clock = iter([5_000, 5_000 + 7 * 10**9])  # the evaluation "takes" 7 s
    monkeypatch.setattr(callbacks, "time", SimpleNamespace(perf_counter_ns=lambda: next(clock)))
    model = SimpleNamespace(get_env=lambda: None, logger=Logger(None, [out]), start_time=10**12)
    cb = callbacks.HeldOutEvalCallback(lambda: None, [1, 2], every_steps=100)
    cb.init_callback(model)
    episode = callbacks.HeldOutEpisode({"mean_jct": 100.0, "p95_jct": 150.0}, 10, True, -3.0)
    monkeypatch.setattr(cb, "_episodes", lambda: [episode, episode])
    cb.logger.record("train/loss", 0.5)
    cb.logger.record_mean("mr/mean_jct", 90.0)
    assert cb.evaluate() == 100.0
    assert model.start_time == 10**12 + 7 * 10**9 and cb.eval_s == 7.0
    alone = {"mr_eval/mean_jct": 100.0, "mr_eval/p95_jct": 150.0, "mr_eval/complete": 1.0}
    assert out.rows == [(0, alone)]
    # what SB3 recorded before the evaluation is written at its own next dump
    assert dict(cb.logger.name_to_value) == {"train/loss": 0.5, "mr/mean_jct": 90.0}
    cb.logger.record_mean("mr/mean_jct", 110.0)  # record_mean's count was kept too
    cb.logger.dump(64)
    assert out.rows[1] == (64, {"train/loss": 0.5, "mr/mean_jct": 100.0})
