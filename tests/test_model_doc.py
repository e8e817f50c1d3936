"""docs/model.md's table of model constants states ModelParams' defaults: every field is in
it, with its default value (the fitted ones change with each `mrgym calibrate --update`)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from mrgym.sim.params import ModelParams

DOC = Path(__file__).resolve().parents[1] / "docs" / "model.md"


def _table() -> dict[str, str]:
    """Field name -> the value its row states (parenthesised notes and units dropped)."""
    text = DOC.read_text()
    start = text.index("| constant | default | meaning |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()[2:]
    out: dict[str, str] = {}
    for row in rows:
        names_cell, value_cell = row.split(" | ")[0:2]
        names = re.findall(r"`([a-z_0-9]+)`", names_cell)
        values = [v.strip() for v in re.sub(r"\s*\([^)]*\)", "", value_cell).split(",")]
        assert len(names) == len(values), row
        for name, value in zip(names, values):
            out[name] = value.split()[0].strip("`")
    return out


def test_every_model_constant_is_in_the_table_with_its_default() -> None:
    table = _table()
    defaults = dataclasses.asdict(ModelParams())
    assert set(table) == set(defaults)
    for name, value in defaults.items():
        stated = table[name]
        if isinstance(value, bool):
            assert stated == str(value).lower(), name
        elif isinstance(value, str):
            assert stated == value, name
        else:
            assert float(stated) == pytest.approx(value), name
