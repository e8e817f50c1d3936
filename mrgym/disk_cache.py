"""Results that are a pure function of their inputs and of this code, kept on disk so that
a later process reads them instead of simulating again.

Two things use it, both costly and the same for every policy:

- ILA's offline training set (``baselines.ila_training.training_set``; §4.1 profiles the
  applications once per cluster, before any job runs): ~20 CPU-s on ``ila72``;
- each seed's reference JCTs (:func:`mrgym.reference.reference_jct`, the fairness track's
  and the ``slowdown`` reward's denominators): one simulation per job, ~5-10 CPU-s a seed on
  ``ila72``.

Where: the folder ``$MRGYM_CACHE`` names, else ``$XDG_CACHE_HOME/mrgym``, else
``~/.cache/mrgym``; ``MRGYM_CACHE=off`` keeps nothing (every process computes again).

An entry's name hashes the caller's key (the scenario's whole configuration, the seed and
the parameters) with a fingerprint of the code (the bytes of every file of the ``mrgym``
and ``baselines`` packages, located without importing them, taken when this module is
imported) and the machine and versions of Python, NumPy and SimPy, so an edit of the
simulator, a baseline or a scenario gives new names and an entry is never stale: a cached
result is the one the current code would compute, bit for bit (pickle keeps every float).
A process whose files changed after it loaded them computes with its old code and writes
nothing; one without source files (a byte-code-only install) keeps nothing.  What is read
from a file outside the configuration (a trace) is not in the key: such results are not
kept (:func:`mrgym.reference.reference_jct`).  Entries are written to a temporary file and
renamed into place, so workers that race compute the same entry twice at worst, and an
entry that cannot be read is computed again and rewritten.  The folder holds one
subfolder per code fingerprint, marked by :data:`MARKER`; marked folders unused for
:data:`PRUNE_DAYS` are removed when a new one is made.  Entries are pickles: read only a
folder you write yourself.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import pickle
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ENV = "MRGYM_CACHE"
OFF = "off"
PRUNE_DAYS = 7.0
#: the packages whose files an entry depends on: the simulator and the schedulers (the
#: reference JCTs run ``fair``, ILA's training set its probe scheduler)
CODE = ("mrgym", "baselines")
_FINGERPRINTS: dict[tuple[str, ...], str | None] = {}
MARKER = ".mrgym-cache"  # in each fingerprint's folder: only such folders are pruned


def cache_dir() -> Path | None:
    """The cache's folder (None: ``MRGYM_CACHE=off``); a relative one is made absolute, so
    that workers started in another folder share it."""
    where = os.environ.get(ENV, "").strip()
    if where.lower() == OFF:
        return None
    if where:
        return Path(where).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mrgym"


def _hash_code(packages: tuple[str, ...]) -> str | None:
    """sha256 over the files of ``packages`` (relative paths and bytes, caches excluded;
    located, not imported), the machine and the versions of Python, NumPy and SimPy; None
    when a package has no source files to hash (a byte-code-only install)."""
    import numpy
    import simpy

    h = hashlib.sha256()
    env = (platform.machine(), platform.python_version(), numpy.__version__, simpy.__version__)
    h.update(" ".join(env).encode())
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"packages: {name!r} is not an importable package")
        root = Path(next(iter(spec.submodule_search_locations)))
        files = [
            p
            for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        ]
        if not any(p.suffix == ".py" for p in files):
            return None
        for p in files:
            h.update(p.relative_to(root.parent).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:20]


def code_fingerprint(packages: tuple[str, ...] = CODE) -> str | None:
    """The fingerprint of the code this process runs: :func:`_hash_code` of ``packages``,
    taken once (for :data:`CODE`, when this module is imported, with the code; ~10 ms)."""
    if packages not in _FINGERPRINTS:
        _FINGERPRINTS[packages] = _hash_code(packages)
    return _FINGERPRINTS[packages]


def entry_path(kind: str, key: Any, packages: tuple[str, ...] = CODE) -> Path | None:
    """Where the entry of ``kind`` (a short name, e.g. ``reference_jct``) for ``key`` (any
    JSON-serialisable value; objects by ``str``) lives, under the fingerprint of the code
    of ``packages``; None with the cache off or no source to fingerprint."""
    root = cache_dir()
    fingerprint = code_fingerprint(packages)
    if root is None or fingerprint is None:
        return None
    text = json.dumps(key, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return root / fingerprint / f"{kind}-{digest}.pkl"


def cached(kind: str, key: Any, compute: Callable[[], T], packages: tuple[str, ...] = CODE) -> T:
    """``compute()``'s result for ``key``, read from the cache when an entry exists, else
    computed and written (an unwritable folder only costs the write).  ``packages``: the
    code ``compute`` runs (its entries change with their files)."""
    path = entry_path(kind, key, packages)
    if path is None:
        return compute()
    try:
        with path.open("rb") as f:
            value = pickle.load(f)
    except Exception:  # noqa: BLE001 - none yet, or a truncated or foreign file: compute
        pass
    else:
        _touch(path.parent)  # in use: not pruned by another checkout's process
        return value
    value = compute()
    # the files changed since this process loaded its code (an edit during a long run):
    # the value is the old code's, so it is not filed under the new code's fingerprint
    if _hash_code(packages) == code_fingerprint(packages):
        _write(path, value)
    return value


def _write(path: Path, value: Any) -> None:
    """Write ``value`` atomically; any failure (a read-only or full disk, a value pickle
    refuses) only costs the write and leaves no temporary file."""
    try:
        if not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            (path.parent / MARKER).touch()
            _prune(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - the result is still returned
        Path(tmp).unlink(missing_ok=True)


def _touch(folder: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(folder)


def _prune(keep: Path) -> None:
    """Remove the other fingerprints' folders (those holding :data:`MARKER`) that no process
    used for PRUNE_DAYS; nothing else (``MRGYM_CACHE`` may name a folder that holds other
    things too)."""
    cutoff = time.time() - PRUNE_DAYS * 86400.0
    for d in keep.parent.iterdir():
        try:
            if d != keep and (d / MARKER).is_file() and d.stat().st_mtime < cutoff:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            continue


with contextlib.suppress(ValueError):  # without baselines there is nothing to cache
    code_fingerprint()  # the code as this process loads it (see cached)
