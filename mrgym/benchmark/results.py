"""A benchmark run as one JSON file: what ran (scenario, split, seeds, K, the command,
mrgym's version and git commit), every policy's per-seed values, and the summaries.

The file is rewritten whole, atomically (a temporary file renamed over it), each time a
policy finishes: a run stopped halfway keeps the policies that finished, and a reader
never sees half a file.  ``complete`` says whether every policy asked for is in it."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mrgym.benchmark.protocol import CONFIDENCE, INTERVAL_METHOD, METRIC_KEYS, RANK_KEY
from mrgym.benchmark.stats import summarize

#: The JSON layout's version: a reader refuses files of another.
FORMAT = 1
KINDS = ("baseline", "model")


@dataclass
class PolicyResult:
    """One policy's values on the run's seeds.  ``per_seed[key][i]`` is its value on
    ``seeds[i]`` (a stochastic policy: the mean of its ``samples`` samples there, each in
    ``per_sample[key][i]``)."""

    name: str
    kind: str  # "baseline" or "model"
    stochastic: bool
    samples: int  # K: the episodes per seed (1 for a deterministic policy)
    seeds: list[int]
    per_seed: dict[str, list[float | None]]
    command: str  # a command line that reproduces this row alone
    per_sample: dict[str, list[list[float | None]]] | None = None
    source: str | None = None  # a model's path, as given
    wall_s: float = 0.0  # the episodes' wall time, summed (not part of the result)


@dataclass
class RunInfo:
    """What made a result file."""

    scenario: str
    split: str
    seeds: list[int]
    samples: int  # K asked for (deterministic policies run once per seed)
    command: str
    mrgym_version: str
    git_commit: str | None = None
    git_dirty: bool | None = None  # files differed from the commit (GitState.dirty)
    git_dirty_files: list[str] | None = None  # which (GitState.files)
    # ``--resume`` kept policies of a file made at another commit: that commit
    resumed_from_commit: str | None = None
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def document(
    info: RunInfo,
    results: list[PolicyResult],
    complete: bool,
    failed: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON object of a run: ``info``'s fields, the protocol, the policies (run
    order) and their summaries."""
    summaries, best = summarize(results)
    return {
        "format": FORMAT,
        **asdict(info),
        "complete": complete,
        "metrics": list(METRIC_KEYS),
        "rank_metric": RANK_KEY,
        "confidence": CONFIDENCE,
        "interval": INTERVAL_METHOD,
        "best_baseline": best,
        "failed": dict(failed or {}),
        "policies": [asdict(r) for r in results],
        "summary": [asdict(s) for s in summaries],
    }


def write_json(path: str | Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``path`` atomically (a temporary file in the same folder, renamed
    over it), so that an interruption leaves the previous file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | Path) -> dict[str, Any]:
    """A result file, checked: its format, and the keys the leaderboard and ``--resume``
    read (a ``ValueError`` naming the file and the key otherwise)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"{path}: format {got!r}; expected a benchmark result of format {FORMAT}")
    for key in ("scenario", "split", "seeds", "samples", "command", "complete", "policies"):
        if key not in doc:
            raise ValueError(f"{path}: no {key!r} key; expected a benchmark result")
    return doc


def policy_results(doc: dict[str, Any], where: str = "result") -> list[PolicyResult]:
    """The policies of a result object, checked against its seeds."""
    out = []
    for p in doc["policies"]:
        try:
            r = PolicyResult(**p)
        except TypeError as e:
            raise ValueError(f"{where}: a policy entry does not fit ({e})") from None
        if r.kind not in KINDS:
            raise ValueError(f"{where}: {r.name}: kind {r.kind!r}; expected one of {KINDS}")
        if r.seeds != doc["seeds"]:
            raise ValueError(f"{where}: {r.name}: its seeds differ from the file's")
        bad = [k for k, v in r.per_seed.items() if len(v) != len(r.seeds)]
        if RANK_KEY not in r.per_seed or bad:
            raise ValueError(
                f"{where}: {r.name}: per_seed needs {RANK_KEY!r} and one value per seed"
                f"{f' (not so for {bad})' if bad else ''}"
            )
        out.append(r)
    return out


@dataclass(frozen=True)
class GitState:
    """The checkout a run ran from: its commit and what differed from it."""

    commit: str | None  # None outside a git checkout or without git
    dirty: bool | None  # tracked files differed, or untracked files were there
    files: list[str] | None = None  # those files, relative to the checkout


def git_state(folder: str | Path | None = None) -> GitState:
    """The commit of the checkout mrgym runs from and the files that differ from it:
    tracked files changed, added or deleted, and untracked files that git does not
    ignore (a new module is code too).  One ``git status``: about 0.1 s."""
    where = Path(folder) if folder else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return GitState(None, None)
        status = subprocess.run(
            ["git", "status", "--porcelain", "-z", "--untracked-files=normal"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return GitState(None, None)
    sha = commit.stdout.strip() or None
    if status.returncode != 0:
        return GitState(sha, None)
    files = changed_files(status.stdout)
    return GitState(sha, bool(files), files)


def changed_files(porcelain_z: str) -> list[str]:
    """The paths of ``git status --porcelain -z`` output (a rename's new path), in order."""
    out: list[str] = []
    entries = iter(porcelain_z.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        out.append(path)
        if "R" in code or "C" in code:  # a rename or copy: its old path comes next
            next(entries, None)
    return out


def neutral(path: str) -> bool:
    """Whether a change to ``path`` cannot change a benchmark result: the documentation
    (``docs/``, result files included, and any ``.md``) and the tests."""
    return path.startswith(("docs/", "tests/")) or path.endswith(".md")


def unclean(doc: dict[str, Any]) -> str | None:
    """Why a result file cannot be trusted to come from its commit alone: the local
    changes it records that could change a result (None: a clean run, or one whose
    changes were documentation or tests only)."""
    if not doc.get("git_dirty"):
        return None if doc.get("git_commit") else "no git commit recorded"
    files = doc.get("git_dirty_files")
    if files is None:
        return "local changes, files not recorded"
    code = [f for f in files if not neutral(f)]
    if not code:
        return None
    more = f" and {len(code) - 3} more" if len(code) > 3 else ""
    return f"local changes to {', '.join(code[:3])}{more}"
