"""Run the registered claims and write the reproduction report.

``reproduce(papers, n_seeds, out)`` imports the claim modules, runs each selected claim
over ``range(n_seeds)`` (or the claim's own default), and writes into one folder:

- ``report.md``: header (what, command, date, seeds, how verdicts are decided), one table
  with a row per claim, then one section per claim with its plot and raw numbers;
- ``<key>.png``: each experiment's figure, beside the report (relative links);
- ``results.json``: everything in the table plus the raw numbers.

The folder is a new ``runs/reproduce-YYYYmmdd-HHMMSS/`` unless told otherwise: ``--update``
writes the committed report, ``docs/reproduction/`` of the source checkout
(:data:`COMMITTED`), and ``--out DIR`` any folder.

An experiment that raises becomes a ``not reproduced`` row whose reason starts with
``experiment failed:``: one broken experiment must not cost the other rows, and the row
says so instead of hiding it (the command then exits 1).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mrgym.reproduce import setups
from mrgym.reproduce.claims import VERDICTS, Claim
from mrgym.reproduce.roles import ROLES, VALIDATION, role

# re-exported: what runs one claim lives below this module and mrgym.reproduce.parallel
from mrgym.reproduce.running import (  # noqa: F401
    FAILED,
    PAPERS,
    Outcome,
    claim_modules,
    load_claims,
    pick,
    run_claim,
    select,
)
from mrgym.summary import fresh_run_dir

PAPER_NAMES = {
    "ila": "ILA",
    "pna": "PNA",
    "lsap": "lsap",
    "hybridmr": "HybridMR",
    "lee": "Lee (thesis)",
}
REPORT = "report.md"
HEADER = "# Reproduction of the papers' claims"  # the first line of every report.md
RESULTS = "results.json"  # beside the report, as are the figures (``<key>.png``)
# the committed report's folder, relative to the source checkout (``--update``); the
# checkout is the one this package was imported from (:func:`committed_dir`)
COMMITTED = Path("docs") / "reproduction"
REPO = Path(__file__).resolve().parents[2]
RUNS = Path("runs")  # the default: a new runs/reproduce-YYYYmmdd-HHMMSS/ per run
COLUMNS = ("paper", "figure/table", "claim", "role", "paper's number", "ours", "verdict", "why")

VERDICT_RULES = (
    "Each claim states its criterion in its *why* column. **reproduced**: our number meets "
    "the criterion (within the stated tolerance of the paper's number, or the paper's "
    "curve shape where the paper gives only a shape). **same direction**: the effect has "
    "the paper's sign or ordering but not its magnitude. **not reproduced**: neither; the "
    "row says what we measured and, where known, why. Numbers are means over seeds with "
    "the half-width of the 95 % Student-t interval (± …); one seed gives no interval."
)
ROLE_RULES = (
    "Each row's *role* (`docs/calibration.md`): **calibration** "
    "rows are numbers the model's parameters were fitted on or set from, **validation** "
    "rows are the evidence (the model was not tuned on them), **paper's model** rows re-run "
    "the paper's own model rather than the simulator, **probe** rows show one mechanism "
    "in isolation."
)


def role_counts(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Verdict counts per role (every role of :data:`ROLES`, zero where none)."""
    return {
        r: {
            v: sum(o.result.verdict == v and role(o.claim.key) == r for o in outcomes)
            for v in VERDICTS
        }
        for r in ROLES
    }


def _count_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def counts_text(outcomes: Sequence[Outcome]) -> str:
    """Two lines: the verdict counts of every row, and of the validation rows alone."""
    every = {v: sum(o.result.verdict == v for o in outcomes) for v in VERDICTS}
    valid = role_counts(outcomes)[VALIDATION]
    return f"verdicts: {_count_text(every)}\nvalidation rows only: {_count_text(valid)}"


def run_claims(
    claims: Sequence[Claim],
    n_seeds: int | None,
    out: Path,
    progress: bool | str = False,
    workers: int = 1,
    backend: str = "process",
    address: str | None = None,
    quick: bool = False,
) -> list[Outcome]:
    """Run ``claims`` with ``range(n_seeds)`` (each claim's ``default_seeds`` when None),
    their figures going to ``out``; ``quick``: the smaller sizes of :meth:`Claim.execute`.

    ``progress``: ``True`` shows a tqdm bar on a terminal and one stderr line per claim
    otherwise (``[3/9] ila-fig3: reproduced (0.4 s)``), as ``mrgym.evaluate`` does.
    ``workers`` > 1 or ``backend="ray"``: claim groups in parallel
    (:mod:`mrgym.reproduce.parallel`), outcomes in the same order."""
    from mrgym.runner import progress_mode

    if workers > 1 or backend != "process":
        from mrgym.reproduce.parallel import run_claims_parallel

        return run_claims_parallel(
            list(claims), n_seeds, out, workers, backend, address, progress, quick
        )

    mode = progress_mode(progress)
    out.mkdir(parents=True, exist_ok=True)
    bar = None
    if mode == "bar":
        from tqdm import tqdm

        bar = tqdm(total=len(claims), unit="claim", desc="reproduce")
    done: list[Outcome] = []
    try:
        for i, c in enumerate(claims, 1):
            if bar is not None:
                bar.set_postfix_str(c.key)
            o = run_claim(c, list(range(n_seeds or c.default_seeds)), out, quick)
            done.append(o)
            if bar is not None:
                bar.update(1)
            elif mode == "lines":
                print(
                    f"[{i}/{len(claims)}] {c.key}: {o.result.verdict} ({o.wall_s:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if bar is not None:
            bar.close()
    return done


# ---------------------------------------------------------------------------- writing


def _cell(text: str) -> str:
    """A markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _plain(x: Any) -> Any:
    """JSON-safe copy: numpy scalars/arrays to Python, NaN/inf to None, paths to str."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if hasattr(x, "tolist"):  # numpy array or scalar
        return _plain(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, Path):
        return str(x)
    return x


def _rel(plot: Path | None, out: Path) -> str | None:
    if plot is None:
        return None
    return Path(os.path.relpath(Path(plot).resolve(), out.resolve())).as_posix()


def _seed_text(seeds: Sequence[int]) -> str:
    return f"{len(seeds)} ({seeds[0]}-{seeds[-1]})" if len(seeds) > 1 else f"1 ({seeds[0]})"


def table(outcomes: Sequence[Outcome]) -> str:
    """The one summary table, a row per claim."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for o in outcomes:
        c, r = o.claim, o.result
        row = (
            PAPER_NAMES.get(c.paper, c.paper),
            c.where,
            f"[{c.what}](#{c.key})",
            role(c.key),
            c.paper_value,
            r.ours,
            f"**{r.verdict}**",
            r.why,
        )
        lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
    return "\n".join(lines)


def _header(outcomes: Sequence[Outcome], command: str, date: str, quick: bool) -> list[str]:
    from mrgym import version

    counts = {v: sum(o.result.verdict == v for o in outcomes) for v in VERDICTS}
    by_role = role_counts(outcomes)
    seed_counts = sorted({len(o.seeds) for o in outcomes})
    total_s = sum(o.wall_s for o in outcomes)
    sizes = (
        [
            "- sizes: **quick** (`--quick`): smaller experiments for a smoke test, so the "
            "numbers and verdicts are not the full-size ones"
        ]
        if quick
        else []
    )
    return [
        HEADER,
        "",
        "Each row is one number a paper reports (ILA, PNA, lsap, HybridMR, Lee's thesis), "
        "the experiment that measures it on mrgym's simulator, and a verdict. Generated — "
        f"do not edit: `mrgym reproduce --update` rewrites `{COMMITTED.as_posix()}/`, this "
        "page, its figures and `results.json`; without `--update` the command writes a new "
        f"`{RUNS.as_posix()}/reproduce-YYYYmmdd-HHMMSS/` folder.",
        "",
        f"- command: `{command}`",
        f"- date: {date}; mrgym {version()}; {len(outcomes)} claims in {total_s:.1f} s",
        f"- seeds per claim: {', '.join(map(str, seed_counts)) or '-'} "
        "(each claim's default unless `--seeds` is given; seeds are `0..N-1`)",
        f"- verdicts: {_count_text(counts)}",
        f"- validation rows only: {_count_text(by_role[VALIDATION])}",
        *(
            f"- {r} rows: {_count_text(n)}"
            for r, n in by_role.items()
            if r != VALIDATION and sum(n.values())
        ),
        *sizes,
        "",
        VERDICT_RULES,
        "",
        ROLE_RULES,
        "",
        table(outcomes),
        "",
    ]


def _section(o: Outcome, out: Path) -> list[str]:
    """One claim's section: its numbers, verdict, figure and raw data."""
    c, r = o.claim, o.result
    md = [
        f'<a id="{c.key}"></a>',
        f"## {PAPER_NAMES.get(c.paper, c.paper)} {c.where}: {c.what}",
        "",
        f"- paper: {c.paper_value}",
        f"- ours: {r.ours}",
        f"- role: {role(c.key)}",
        f"- verdict: **{r.verdict}** — {r.why}",
        f"- seeds: {_seed_text(o.seeds)}; {o.wall_s:.1f} s",
        "",
    ]
    setup = setups.markdown(c.settings())
    if setup:
        md += ["Setup: each value behind the number and its source.", "", *setup, ""]
    rel = _rel(r.plot, out)
    if rel:
        md += [f"![{c.key}]({rel})", ""]
    if r.data:
        raw = json.dumps(_plain(r.data), indent=1)
        md += ["<details><summary>raw numbers</summary>", "", "```json", raw, "```", ""]
        md += ["</details>", ""]
    return md


def _results(outcomes: Sequence[Outcome], out: Path, command: str, date: str, quick: bool):
    """``results.json``: the table's cells and each claim's raw numbers."""
    from mrgym import version

    rows = [
        {
            "key": o.claim.key,
            "paper": o.claim.paper,
            "role": role(o.claim.key),
            "where": o.claim.where,
            "what": o.claim.what,
            "paper_value": o.claim.paper_value,
            "ours": o.result.ours,
            "verdict": o.result.verdict,
            "why": o.result.why,
            "failed": o.failed,
            "plot": _rel(o.result.plot, out),
            "seeds": o.seeds,
            "wall_s": o.wall_s,
            "data": _plain(o.result.data),
            "setup": setups.as_json(o.claim.settings()),
        }
        for o in outcomes
    ]
    head = {"command": command, "date": date, "version": version()}
    head["verdicts_by_role"] = role_counts(outcomes)
    return {**head, **({"quick": True} if quick else {}), "columns": list(COLUMNS), "claims": rows}


def write_report(
    outcomes: Sequence[Outcome],
    out: Path,
    command: str,
    date: str | None = None,
    quick: bool = False,
) -> Path:
    """Write ``report.md`` and ``results.json`` into ``out`` (the figures are there)."""
    out.mkdir(parents=True, exist_ok=True)
    date = date or _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    md = _header(outcomes, command, date, quick)
    for o in outcomes:
        md += _section(o, out)
    path = out / REPORT
    path.write_text("\n".join(md))
    results = _results(outcomes, out, command, date, quick)
    (out / RESULTS).write_text(json.dumps(results, indent=1, allow_nan=False))
    return path


def is_ours(path: Path) -> bool:
    """Whether ``path`` (a ``report.md`` or ``results.json``) was written by this command:
    only such files are ever replaced."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if path.name == REPORT:
        return text.startswith(HEADER)
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and {"command", "claims"} <= data.keys()


def clear_old(out: Path) -> list[str]:
    """Remove what an earlier report left in ``out``: its ``report.md``, ``results.json``
    (when :func:`is_ours`) and the figures named after a claim or listed in that
    ``results.json`` (a withdrawn claim's too; a run of one paper must not sit beside
    another run's figures); other files stay.  Returns what went."""
    if not out.is_dir():
        return []
    figures = {f"{c.key}.png" for c in load_claims()}
    old = out / RESULTS
    if old.is_file() and is_ours(old):  # also the figures of claims since withdrawn
        claims = json.loads(old.read_text(encoding="utf-8")).get("claims", [])
        figures |= {Path(c["plot"]).name for c in claims if isinstance(c, dict) and c.get("plot")}
    gone = []
    for p in sorted(out.iterdir()):
        if p.is_file() and (p.name in figures or p.name in (REPORT, RESULTS) and is_ours(p)):
            p.unlink()
            gone.append(p.name)
    return gone


def _publish(outcomes: list[Outcome], staging: Path, target: Path) -> list[Outcome]:
    """Move a finished run's figures from ``staging`` into ``target`` (after clearing the
    earlier report there), and point the outcomes at their new place."""
    clear_old(target)
    for p in sorted(staging.iterdir()):
        dest = target / p.name
        if dest.is_dir():
            shutil.rmtree(dest)
        shutil.move(str(p), str(dest))
    moved = []
    for o in outcomes:
        plot = o.result.plot
        if plot is not None and Path(plot).parent.resolve() == staging.resolve():
            o = replace(o, result=replace(o.result, plot=target / Path(plot).name))
        moved.append(o)
    return moved


def committed_dir() -> Path:
    """``docs/reproduction/`` of the source checkout this package runs from (``--update``);
    an installed package has none, and is told so."""
    if not (REPO / "pyproject.toml").is_file() or not (REPO / "docs").is_dir():
        raise ValueError(
            f"--update: writes {COMMITTED.as_posix()}/ of a source checkout, and mrgym runs "
            "from an installed package here; use --out DIR"
        )
    return REPO / COMMITTED


def fresh_dir(root: Path = RUNS) -> Path:
    """A new ``root/reproduce-YYYYmmdd-HHMMSS``: a run never writes into an earlier run's
    folder."""
    return fresh_run_dir(root, "reproduce")


def check_target(
    out: str | Path | None,
    update: bool,
    quick: bool = False,
    paper: str = "all",
    keys: Sequence[str] | None = None,
) -> Path | None:
    """The folder named by ``--out``/``--update`` (None: a fresh one, made later).  The
    committed report is whole: ``--update`` runs every claim at full size."""
    if update and out is not None:
        raise ValueError("--update and --out: give one (--update writes the committed report)")
    if update and quick:
        raise ValueError("--update and --quick: the committed report holds full-size runs")
    if update and (paper != "all" or keys):
        part = f"--paper {paper}" if paper != "all" else "--claims"
        raise ValueError(
            f"--update and {part}: the committed report holds every claim; use --out DIR"
        )
    if update:
        return committed_dir()
    if out is None:
        return None
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r}: is a file, expected a folder")
    for name in (REPORT, RESULTS):
        if (out / name).is_file() and not is_ours(out / name):
            raise ValueError(
                f"--out {str(out)!r}: holds a {name} that mrgym reproduce did not write; "
                "choose another folder"
            )
    return out


def command_line(
    paper: str, n_seeds: int | None, out: str | Path | None, update: bool, keys, quick: bool
) -> str:
    """The ``mrgym reproduce`` command that makes this report again."""
    words = ["mrgym reproduce", f"--paper {paper}"]
    words += [f"--seeds {n_seeds}"] if n_seeds else []
    words += [f"--claims {','.join(keys)}"] if keys else []
    words += ["--quick"] if quick else []
    words += ["--update"] if update else ([f"--out {out}"] if out is not None else [])
    return " ".join(words)


def reproduce(
    paper: str = "all",
    n_seeds: int | None = None,
    out: str | Path | None = None,
    progress: bool | str = False,
    command: str | None = None,
    workers: int = 1,
    backend: str = "process",
    address: str | None = None,
    *,
    update: bool = False,
    keys: Sequence[str] | None = None,
    quick: bool = False,
) -> tuple[Path, list[Outcome]]:
    """Run the claims of ``paper`` (only ``keys`` when given) and write the report; returns
    the report's path and the outcomes.

    Where: ``out`` when given, ``docs/reproduction/`` of the checkout with ``update``, else a
    new ``runs/reproduce-YYYYmmdd-HHMMSS/`` under the working folder.  ``quick``: the claims'
    smaller sizes (:meth:`Claim.execute`).  ``workers``/``backend``/``address``: see
    :func:`run_claims` (the report is the same; its wall-clock fields aside)."""
    if n_seeds is not None and n_seeds < 1:
        raise ValueError(f"--seeds {n_seeds}: expected at least 1")
    target = check_target(out, update, quick, paper, keys)
    claims = select(load_claims(), paper)
    claims = pick(claims, keys) if keys else claims
    if not claims:
        raise ValueError(f"--paper {paper} --claims {','.join(keys or [])}: no claim selected")
    target = target if target is not None else fresh_dir()
    target.mkdir(parents=True, exist_ok=True)
    # the figures go to a staging folder first: the earlier report in ``target`` stays
    # whole until every claim has run (a failed or interrupted run leaves it as it was)
    staging = Path(tempfile.mkdtemp(prefix=".reproduce-", dir=target))
    try:
        outcomes = run_claims(claims, n_seeds, staging, progress, workers, backend, address, quick)
        outcomes = _publish(outcomes, staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    cmd = command or command_line(paper, n_seeds, out, update, keys, quick)
    return write_report(outcomes, target, cmd, quick=quick), outcomes
