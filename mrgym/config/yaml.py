"""Reading YAML safely: no Python tags, no key given twice, ``1e8`` read as a number, a
file size limit, and every problem one :class:`~mrgym.config.errors.ScenarioError` line
that names the source (and the line, where there is one)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from mrgym.config.errors import ScenarioError, short
from mrgym.config.limits import MAX_FILE_BYTES


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, line: int):
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line = key, line


class UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when built
    """A safe loader that refuses a key given twice in one mapping: PyYAML would keep the
    last one silently, so a pasted-twice key overrides the intended value unseen.  It also
    reads ``1e8`` and ``1e-6`` as numbers (YAML 1.2; PyYAML's YAML 1.1 wants a dot, so a
    bound documented as "1e8 s" could not be written as such)."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` keys may be overridden by explicit ones
                key = self.construct_object(key_node, deep=deep)
                try:
                    if key in seen:
                        raise _DuplicateKey(key, key_node.start_mark.line + 1)
                    seen.add(key)
                except TypeError:  # unhashable key: SafeLoader reports it below
                    pass
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_yaml(text: str, source: str, lines: bool = True) -> Any:
    """Parse YAML safely (no Python tags, no duplicate keys); a problem is a one-line
    :class:`ScenarioError` that starts with ``source`` (and ``:LINE`` when ``lines``)."""
    try:
        # a command-line byte that is not UTF-8 arrives as a lone surrogate (PEP 383):
        # libyaml would fail on it with a bare codec error naming no key
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScenarioError(
            f"{source}: not UTF-8 text (character {e.start + 1} is a byte that is not UTF-8)"
        ) from None
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as e:
        where = f"{source}:{e.line}" if lines else source
        raise ScenarioError(f"{where}: duplicate key {short(e.key)}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}" if lines and mark is not None else source
        what = _one_line(e.problem or e.context or "syntax error")
        raise ScenarioError(f"{where}: not valid YAML: {what[:160]}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{source}: not valid YAML: {_one_line(e)[:160]}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: not valid YAML: nested too deeply") from None


def read_yaml_file(path: Path, source: str, what: str = "scenario") -> dict:
    """A YAML file that must hold a mapping (a scenario, a training config), read with
    :func:`parse_yaml`'s checks; every problem is one line naming ``source``."""
    if not path.exists():
        raise ScenarioError(f"{what} file {source} does not exist")
    if not path.is_file():
        raise ScenarioError(f"{what} path {source} is not a file (a directory?)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ScenarioError(f"{what} file {source} is larger than {MAX_FILE_BYTES >> 20} MiB")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise ScenarioError(f"{what} file {source} cannot be read: {why}") from None
    data = parse_yaml(text, source) or {}
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: must be a mapping of keys, got {type(data).__name__}")
    return data
