"""``mrgym compare --tensorboard DIR``: every compared policy as a TensorBoard run
``DIR/compare-CONFIG-YYYYmmdd-HHMMSS/POLICY``, one folder per comparison beside the agents'
training runs in DIR (``tensorboard --logdir DIR`` shows both).

A baseline has no training steps, so each one is a constant line at its mean over the
compared seeds, drawn from step 0 to the last step of the agent runs found under DIR
(their ``train_stats.yaml`` or event files): TensorBoard then draws agent and baselines
on one chart per tag.  The tags are the agent's own: ``mr/`` (training episodes) and
``mr_eval/`` (held-out evaluation), so the lines overlay both charts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from mrgym.metrics import TENSORBOARD_TAGS

PREFIXES = ("mr", "mr_eval")
# a compared model's label ends in @STEPS when it is a checkpoint (agents.train.model_label)
_AT_STEPS = re.compile(r"@(\d+)$")


def run_folder(policy: str) -> str:
    """The policy's name as a folder name (``maskable_ppo:ila72`` -> ``maskable_ppo-ila72``)."""
    return re.sub(r"[^\w.@-]+", "-", policy).strip("-") or "policy"


def agent_steps(logdir: str | Path, skip: Iterable[str] = ()) -> dict[str, int]:
    """The last training step of each agent run under ``logdir``: ``train_stats.yaml`` of
    a finished run, else the last event of a run still training.  Keys are run folders."""
    root = Path(logdir)
    out: dict[str, int] = {}
    if not root.is_dir():
        return out
    skip = set(skip)
    for stats in root.rglob("train_stats.yaml"):
        try:
            steps = int(yaml.safe_load(stats.read_text())["steps"])
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError):
            continue  # someone else's file: not ours to judge
        out[str(stats.parent.relative_to(root))] = steps
    for events in root.glob("*/tb/*/events.out.tfevents.*"):
        run = str(events.parent.parent.parent.relative_to(root))
        if run in out or run in skip:
            continue
        out[run] = max(out.get(run, 0), _last_step(events))
    return out


def _last_step(events: Path) -> int:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    last = 0
    try:
        for ev in EventFileLoader(str(events)).Load():
            last = max(last, int(ev.step))
    except Exception:  # a truncated file of a run still writing: what was read counts
        pass
    return last


def policy_means(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per policy, each tag's mean over the seeds (NaN seeds, e.g. no job done, left out)."""
    sums: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        acc = sums.setdefault(r["policy"], {})
        values = {tag: r.get(key) for key, tag in TENSORBOARD_TAGS.items()}
        for tag, v in values.items():
            if v is not None and not math.isnan(float(v)):
                acc.setdefault(tag, []).append(float(v))
    return {p: {t: sum(v) / len(v) for t, v in acc.items()} for p, acc in sums.items()}


def write_tensorboard(
    rows: list[dict[str, Any]],
    logdir: str | Path,
    baselines: Iterable[str] | None = None,
    end_step: int | None = None,
    out: str | Path | None = None,
) -> dict[str, list[int]]:
    """Write each policy's means as a run ``out/POLICY`` (``out`` defaults to ``logdir``;
    ``mrgym compare`` gives a new ``logdir/compare-CONFIG-STAMP``); returns run folder ->
    steps written.

    ``baselines``: the names that are baselines (default: the registered schedulers); the
    others are models, drawn at their own step count when known (loaded by ``ModelFactory``
    in this process, a checkpoint's ``@N``, or the run of that name under ``logdir``), else
    over the same range.  ``end_step``: the agents' last step (default: the largest of those
    and of the agent runs under ``logdir``; 1 when there is none)."""
    from torch.utils.tensorboard import SummaryWriter

    if baselines is None:
        from mrgym import registry

        baselines = registry.available()
    from agents.train import LOADED_STEPS

    base = set(baselines)
    means = policy_means(rows)
    found = agent_steps(logdir, skip=(run_folder(p) for p in means))
    models = {p: LOADED_STEPS.get(p) for p in means if p not in base}
    end = end_step or max([*found.values(), *(s for s in models.values() if s)], default=0) or 1
    written: dict[str, list[int]] = {}
    for policy, tags in means.items():
        folder = run_folder(policy)
        if policy in base:
            steps = [0, end]  # a constant line across the agents' whole range
        else:
            m = _AT_STEPS.search(policy)
            own = models[policy] or (int(m.group(1)) if m else found.get(policy.split(":")[-1]))
            steps = [own] if own is not None else [0, end]  # 0: a clone picked at step 0
        run_dir = Path(out if out is not None else logdir) / folder
        # a policy's folder holds one comparison: the event files of an earlier one would
        # draw a second line over the same steps (a zig-zag in TensorBoard)
        for old in run_dir.glob("events.out.tfevents.*"):
            old.unlink()
        w = SummaryWriter(str(run_dir))
        for step in steps:
            for tag, v in tags.items():
                for prefix in PREFIXES:
                    w.add_scalar(f"{prefix}/{tag}", v, step)
        w.close()
        written[folder] = steps
    return written
