"""One-line scenario errors: :class:`ScenarioError`, the short reprs that keep a huge input
to one line, and the translation of a pydantic ``ValidationError`` into
``NAME.dotted.key: what was expected, got what`` (``ila72.cluster.racks: must be >= 1,
got 0``)."""

from __future__ import annotations

import reprlib
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError


class ScenarioError(ValueError):
    """A scenario that cannot be built; the message names the key."""


# reprlib never expands more than a few items or levels, so even a huge input (or a YAML
# "billion laughs" of aliases) costs microseconds to show.
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 6, 6, 4
_REPR.maxset = _REPR.maxfrozenset = 6
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def short(value: Any, limit: int = 80) -> str:
    """A repr of ``value`` for a one-line error message, at most ``limit`` characters."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: Any, limit: int = 40) -> str:
    """A mapping key as it appears in an error's dotted key, cut to ``limit`` characters."""
    text = str(key)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def field_error(message: str, **ctx: Any) -> PydanticCustomError:
    """A validation error whose message is used as is (``at`` names a list index)."""
    return PydanticCustomError("mrgym", message, ctx)


class CheckError(ValueError):
    """A cross-check of the whole scenario failed (:mod:`mrgym.config.checks`); the message
    starts with the dotted key it is about."""

    def __init__(self, key: str, msg: str):
        super().__init__(f"{key}: {msg}")


_BOUND_OPS = {
    "greater_than_equal": ">=",
    "greater_than": ">",
    "less_than": "<",
    "less_than_equal": "<=",
}
_INT_ERRORS = ("int_type", "int_parsing", "int_from_float", "int_parsing_size")
_FLOAT_ERRORS = ("float_type", "float_parsing")


def _key_part(part: Any) -> str | None:
    """One element of an error location as a key; None for pydantic's own tags."""
    if part == "[key]":  # the error is about a mapping key, named by the previous part
        return None
    return key_text(part)


def _bound(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 1e8 reads as 100000000, like the int bounds
    return str(value)


def _message(err: dict) -> str:
    """What was expected and what was given, for one pydantic error."""
    typ, ctx = err["type"], err.get("ctx") or {}
    got = short(err.get("input"))
    if typ == "extra_forbidden":
        return "unknown key"
    if typ in _BOUND_OPS:
        return f"must be {_BOUND_OPS[typ]} {_bound(next(iter(ctx.values())))}, got {got}"
    if typ == "missing":
        return "is required"
    if typ == "finite_number":
        return f"must be a finite number, got {got}"
    if typ in _INT_ERRORS:
        return f"must be an integer, got {got}"
    if typ in _FLOAT_ERRORS:
        return f"must be a number, got {got}"
    if typ in ("too_long", "string_too_long"):
        what = "characters" if isinstance(err.get("input"), str) else "items"
        n = len(err["input"]) if hasattr(err.get("input"), "__len__") else "more"
        return f"must have at most {ctx['max_length']:,} {what}, got {n:,}"
    if typ == "mrgym":
        return err["msg"]
    return f"{err['msg'].replace('Input should be', 'must be')}, got {got}"


def format_validation_error(e: ValidationError, name: str, root: Any = None) -> str:
    """The first error of ``e`` as one line that starts with the scenario ``name``; an
    unknown key says which known key of its section is closest (``did you mean``), the
    section found by walking the model ``root`` (the Scenario: its module imports this
    one, so it is passed in, not imported)."""
    err = e.errors()[0]
    ctx = err.get("ctx") or {}
    if err["type"] == "value_error" and isinstance(ctx.get("error"), CheckError):
        return f"{name}.{ctx['error']}"
    parts = [p for p in map(_key_part, err["loc"]) if p is not None]
    if "at" in ctx:  # a list item checked by hand (cluster.rack_uplink_mbps)
        parts.append(str(ctx["at"]))
    key = ".".join(parts)
    loc = f"{name}.{key}" if key else name
    unknown = err["type"] == "extra_forbidden" and root is not None
    hint = _known_key_hint(root, err["loc"]) if unknown else ""
    return f"{loc}: {_message(err)}{hint}"


def _known_key_hint(root: Any, loc: tuple) -> str:
    """``" (did you mean 'replication'?)"`` for an unknown key at ``loc``: the closest
    field of the section it sits in (the model ``root`` walked down ``loc``)."""
    from mrgym.suggest import did_you_mean

    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int):  # a list item: the list's model is already in hand
            continue
        field = getattr(model, "model_fields", {}).get(part)
        model = _model_in(field.annotation) if field is not None else None
        if model is None:
            return ""
    return did_you_mean(loc[-1], getattr(model, "model_fields", {}))


def _model_in(annotation: Any) -> Any:
    """The pydantic model an annotation holds (``X``, ``X | None``, ``list[X]``), or None."""
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
