"""Optional dependencies of the commands: a command that needs an extra that is not
installed fails at once with one line naming what to install, not with an import
traceback (or, for ``compare --tensorboard``, after every run has finished)."""

from __future__ import annotations

import importlib.util

#: The ``[rl]`` extras (pyproject.toml): what ``agents`` imports.
RL_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard")
# from a clone, as README installs it (mrgym is not on PyPI: "mrgym[rl]" alone would ask
# PyPI for a package of that name)
RL_HINT = 'the RL extras: pip install -e ".[rl]" in the mrgym checkout'
#: ``mrgym tune``'s search (``[dev]`` installs them beside ``[rl]``).
TUNE_MODULES = ("ray", "optuna")
TUNE_HINT = 'Ray Tune and Optuna: pip install "ray[tune]" optuna (or "mrgym[dev]")'


def missing(modules: tuple[str, ...]) -> list[str]:
    """The top-level modules of ``modules`` that cannot be imported.  ``find_spec`` looks
    for them without importing (torch takes seconds to import)."""
    out = []
    for name in modules:
        try:
            if importlib.util.find_spec(name) is None:
                out.append(name)
        except (ImportError, ValueError):  # a broken install, or sys.modules[name] = None
            out.append(name)
    return out


def require(what: str, modules: tuple[str, ...] = RL_MODULES, hint: str = RL_HINT) -> None:
    """Raise a one-line ``ValueError`` (``mrgym: error: ...``, exit status 2) when one of
    ``modules`` is missing; ``what`` names the command, e.g. ``mrgym train``."""
    if missing(modules):
        raise ValueError(f"{what} needs {hint}")


def hint_for(module: str | None) -> str | None:
    """The install hint for a ``ModuleNotFoundError``'s module, when it is an extra's."""
    top = (module or "").split(".")[0]
    if top in RL_MODULES:
        return RL_HINT
    if top in TUNE_MODULES:
        return TUNE_HINT
    return None
