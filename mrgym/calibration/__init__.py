"""Calibration of the model's parameters on the calibration claims (docs/calibration.md).

- :mod:`mrgym.calibration.targets`: the target numbers and where each comes from;
- :mod:`mrgym.calibration.probes`: the cheap experiments that measure them;
- :mod:`mrgym.calibration.fit`: the staged ``scipy.optimize`` fits, and :func:`run`, what
  ``mrgym calibrate`` calls (a JSON of fitted parameters and residuals per target).
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

FILE = "calibration.json"
COMMITTED = Path("docs") / "reproduction" / FILE  # --update, in the source checkout


def target_path(out: str | Path | None, update: bool) -> Path:
    """Where ``mrgym calibrate`` writes: ``--out FILE``, the committed file with
    ``--update``, else ``runs/calibrate-YYYYmmdd-HHMMSS/calibration.json``."""
    if update and out is not None:
        raise ValueError("--update and --out: give one (--update writes the committed file)")
    if out is not None:
        p = Path(out)
        if p.is_dir():
            raise ValueError(f"--out {str(out)!r}: is a folder, expected a .json file")
        return p
    if update:
        from mrgym.reproduce.report import committed_dir

        return committed_dir() / FILE
    from mrgym.summary import fresh_run_dir

    return fresh_run_dir(Path("runs"), "calibrate") / FILE


def run(stages: list[str], quick: bool, out: str | Path | None, update: bool, say=print) -> Path:
    """Fit ``stages`` and write the record (:func:`mrgym.calibration.fit.calibrate`)."""
    from mrgym import version
    from mrgym.calibration.fit import calibrate

    if update and quick:
        raise ValueError("--update and --quick: the committed file holds a full-budget fit")
    target_path(out, update) if out is not None or update else None  # bad options: now
    record = calibrate(stages, quick, say)
    path = target_path(out, update)  # a new runs/ folder only once the fit has run
    words = ["mrgym calibrate", f"--stage {','.join(stages)}"]
    words += ["--quick"] if quick else []
    words += ["--update"] if update else ([f"--out {out}"] if out is not None else [])
    head = {
        "command": " ".join(words),
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "version": version(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**head, **record}, indent=1, allow_nan=False))
    if update:  # the docs page shows the committed fit
        write_docs_table(path.parent.parent / "calibration.md", record)
    return path


MARKERS = ("<!-- fit:start -->", "<!-- fit:end -->")


def write_docs_table(page: Path, record: dict) -> None:
    """Replace the block between :data:`MARKERS` of ``page`` by :func:`markdown`."""
    text = page.read_text()
    head, rest = text.split(MARKERS[0], 1)
    tail = rest.split(MARKERS[1], 1)[1]
    page.write_text(f"{head}{MARKERS[0]}\n{markdown(record)}\n{MARKERS[1]}{tail}")


def markdown(record: dict) -> str:
    """The fit's result as docs/calibration.md shows it (between its ``fit:start`` and
    ``fit:end`` markers): each stage's parameters with bounds, start and fitted value, then
    each target's residual after the last pass (``(measured - target) / tolerance``)."""
    last: dict[str, dict] = {}
    for rec in record["stages"]:
        last[rec["stage"]] = rec  # the last pass's record of each stage
    lines = [
        "| stage | parameter | bounds | start | fitted |",
        "|---|---|---|---|---|",
    ]
    for name, rec in last.items():
        for p in rec["params"]:
            v = rec["final_params"][p["name"]]
            lines.append(
                f"| {name} | `{p['name']}` | {p['lo']:g}-{p['hi']:g} | {p['start']:g} | {v:.4g} |"
            )
    lines += ["", "| stage | target or penalty | residual |", "|---|---|---|"]
    for name, rec in last.items():
        for key, r in rec["residuals"].items():
            lines.append(f"| {name} | `{key}` | {r:+.2f} |")
    passes = record.get("passes", 1)
    evals = sum(rec["evaluations"] for rec in record["stages"])
    lines += [
        "",
        f"{passes} passes over the stages, {evals} objective evaluations in all; fixed "
        f"settings: {', '.join(f'`{k}` = {v}' for k, v in sorted(_fixed(record).items()))}.",
    ]
    return "\n".join(lines)


def _fixed(record: dict) -> dict:
    fitted = {p["name"] for rec in record["stages"] for p in rec["params"]}
    return {k: v for k, v in record["fitted"].items() if k not in fitted}
