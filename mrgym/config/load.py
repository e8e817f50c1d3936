"""Loading a scenario: a bundled name (``configs/NAME.yaml``), a YAML path, a dict or a
:class:`~mrgym.config.schema.Scenario`, with ``overrides`` merged before validation."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mrgym.config.errors import ScenarioError, format_validation_error, key_text, short
from mrgym.config.schema import Scenario
from mrgym.config.yaml import read_yaml_file
from mrgym.suggest import did_you_mean


def _bundled_config_dir() -> Path:
    """Where the bundled scenarios live: a wheel ships the top-level ``configs/`` as package
    data ``mrgym/_configs`` (pyproject.toml); a source checkout or editable install has no
    such folder and reads ``configs/`` beside the package."""
    from importlib.resources import files  # used once, at import time

    installed = files("mrgym") / "_configs"
    if isinstance(installed, Path) and installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "configs"


CONFIG_DIR = _bundled_config_dir()


def available_scenarios() -> list[str]:
    """Names of the bundled scenarios (``configs/*.yaml``; ``configs/train`` holds training
    configs, not scenarios)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def _merge(base: Any, over: dict, prefix: str = "") -> Any:
    """Merge ``over`` into a copy of ``base``; dotted keys reach into mappings and lists
    (``cluster.hosts.0.count``)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        head, _, rest = str(k).partition(".")
        if isinstance(out, list):
            if not head.isdigit() or int(head) >= len(out):
                raise ScenarioError(
                    f"{prefix}{short(head, 40)}: list index out of range (0..{len(out) - 1})"
                )
            idx = int(head)
            out[idx] = _merge(out[idx], {rest: v}, f"{prefix}{head}.") if rest else v
            continue
        if not isinstance(out, dict):
            raise ScenarioError(
                f"{prefix}{short(str(k), 40)}: cannot set a key inside a {type(out).__name__}"
            )
        if rest:
            sub = out.get(head) if out.get(head) is not None else {}
            out[head] = _merge(sub, {rest: v}, f"{prefix}{head}.")
        elif isinstance(v, dict) and isinstance(out.get(head), dict):
            out[head] = _merge(out[head], v, f"{prefix}{head}.")
        else:
            out[head] = v
    return out


def _scenario_path(source: str | Path) -> Path:
    """The YAML file of a bundled name or a path; errors say what is wrong with it."""
    if not isinstance(source, (str, Path)):
        raise ScenarioError(
            "config: must be a bundled scenario name, a YAML path, a dict or a Scenario, "
            f"got {type(source).__name__}"
        )
    if not str(source).strip():
        raise ScenarioError(
            f"config: the scenario name is empty; expected one of {available_scenarios()} "
            "or a YAML path"
        )
    path = Path(source)
    shown = short(str(source))
    if not path.suffix:
        bundled = CONFIG_DIR / f"{source}.yaml"
        if bundled.is_file():
            return bundled
        if path.is_dir():
            raise ScenarioError(f"scenario path {shown} is a directory, expected a YAML file")
        hint = did_you_mean(source, available_scenarios())
        raise ScenarioError(
            f"unknown scenario {shown}{hint}; expected one of {available_scenarios()} or a "
            "YAML path"
        )
    return path


def _name(value: Any, default: str) -> str:
    """The scenario name that prefixes error keys (a bad one is reported by the schema)."""
    return value if isinstance(value, str) and 0 < len(value) <= 200 else default


def load_scenario(source: str | Path | dict | Scenario, overrides: dict | None = None) -> Scenario:
    """A bundled scenario name, a YAML path, a dict, or a Scenario; plus overrides."""
    if isinstance(source, Scenario):
        if not overrides:
            return source
        data, name = source.model_dump(), source.name
    elif isinstance(source, dict):
        data, name = copy.deepcopy(source), _name(source.get("name", "scenario"), "scenario")
    else:
        path = _scenario_path(source)
        # errors name a bundled file by its name, a user's file as the user wrote it
        shown = path.name if path.parent == CONFIG_DIR else key_text(source, 120)
        data = read_yaml_file(path, shown)
        name = _name(data.setdefault("name", path.stem), path.stem)
    if overrides:
        if not isinstance(overrides, dict):
            raise ScenarioError(f"overrides must be a dict, got {type(overrides).__name__}")
        data = _merge(data, overrides, f"{name}.")
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(format_validation_error(e, name, Scenario)) from None
