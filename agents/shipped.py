"""The trained models shipped in the repository's ``models/`` folder, by short name.

Each ``models/NAME/`` holds a ``best_model.zip`` (the pick on the validation seeds), the
``config.yaml`` it was trained with and its ``train_stats.yaml``; ``NAME`` is the short name
that ``mrgym benchmark --models``, ``mrgym compare --models``, ``mrgym evaluate --model``,
``python -m agents.analysis.generalize --models`` and :meth:`mrgym.ModelPolicy.load`
accept in place of a path (``models/README.md`` lists them with their leaderboard rows).  A
path that exists always wins over a short name; ``mrgym train --resume`` refuses one.
"""

from __future__ import annotations

from pathlib import Path

# beside agents/ in a source checkout (the editable install the README's quick start makes)
MODELS_DIR = Path(__file__).resolve().parents[1] / "models"


def shipped() -> dict[str, Path]:
    """Short name -> best_model.zip of every shipped model (empty without the folder)."""
    if not MODELS_DIR.is_dir():
        return {}
    return {
        d.name: d / "best_model.zip"
        for d in sorted(MODELS_DIR.iterdir())
        if (d / "best_model.zip").is_file()
    }


def is_short_name(path: str | Path) -> bool:
    """Whether ``path`` reads as a bare short name (no folder part, no .zip) that no file
    or folder of that name shadows."""
    text = str(path)
    p = Path(text)
    return bool(text) and p.name == text and p.suffix != ".zip" and not p.exists()


def shipped_path(path: str | Path) -> Path | None:
    """The shipped model ``path`` names, or None when it is not a shipped short name."""
    if not is_short_name(path):
        return None
    return shipped().get(str(path))
