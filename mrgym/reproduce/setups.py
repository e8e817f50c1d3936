"""Where each scenario value behind a claim comes from (issue "Fidelity III": setups with
provenance).

A claim's *setup* is the list of the values that matter for its number, each with its
source.  A source is one of four kinds, and nothing else:

- ``paper``: a section of the same paper (any section: ILA §2.2's VMs are §2.3's);
- ``Hadoop default``: the default of the Hadoop version the paper names;
- ``independent measurement``: a measurement outside the five papers (a spec sheet, a
  published benchmark, a trace), named;
- ``calibrated``: fitted or set by looking at papers' numbers; ``on`` names the claims
  whose numbers set it.  A claim whose own number set one of its values is a calibration
  claim (:mod:`mrgym.reproduce.roles`; a test holds the two consistent).

Values are read from the scenario the claim runs (:func:`scenario_setup`), not typed
again, so a setup cannot drift from the code; values that are not scenario keys (a
scheduler's parameter, a workload's size) are :func:`fixed`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

PAPER = "paper"
HADOOP = "Hadoop default"
MEASURED = "independent measurement"
CALIBRATED = "calibrated"
KINDS = (PAPER, HADOOP, MEASURED, CALIBRATED)


@dataclass(frozen=True)
class Source:
    kind: str  # one of KINDS
    ref: str  # where: "§2.2: 'Each slave VM was configured with 3 VCPUs'", "Hadoop 0.20.205"
    on: tuple[str, ...] = ()  # CALIBRATED: the claims whose numbers set the value

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"source kind: expected one of {KINDS}, got {self.kind!r}")
        if self.on and self.kind != CALIBRATED:
            raise ValueError(f"source {self.ref!r}: only a calibrated value names claims (on)")

    def text(self) -> str:
        on = f" (on {', '.join(self.on)})" if self.on else ""
        return f"{self.kind}: {self.ref}{on}"


def paper(ref: str) -> Source:
    return Source(PAPER, ref)


def hadoop(ref: str) -> Source:
    return Source(HADOOP, ref)


def measured(ref: str) -> Source:
    return Source(MEASURED, ref)


def calibrated(ref: str, on: tuple[str, ...] = ()) -> Source:
    return Source(CALIBRATED, ref, tuple(on))


@dataclass(frozen=True)
class Setting:
    what: str  # a scenario key ("cluster.hosts.0.vm.map_slots") or a named value
    value: str  # as the experiment uses it
    source: Source


Setup = Callable[[], tuple[Setting, ...]]


def fixed(what: str, value: Any, source: Source) -> Setting:
    """A value that is not read from a scenario (a scheduler's parameter, a job's size)."""
    return Setting(what, _text(value), source)


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def lookup(scenario: Any, key: str) -> Any:
    """A dotted key's value in a loaded scenario: ``cluster.hosts.0.vm.map_slots``;
    ``execution.X`` is the model parameter in effect (the defaults with the scenario's
    overrides); ``catalog.TYPE.FIELD`` an instance type's field; ``profile.NAME.FIELD`` a
    job profile's field."""
    from mrgym.sim.build import model_params
    from mrgym.sim.jobs import get_profile
    from mrgym.sim.topology import CATALOG

    head, _, rest = key.partition(".")
    if head == "execution":
        return getattr(model_params(scenario), rest)
    if head == "catalog":
        name, _, field = rest.rpartition(".")
        return getattr(CATALOG[name], field)
    if head == "profile":
        name, _, field = rest.rpartition(".")
        return getattr(get_profile(name), field)
    node: Any = scenario.model_dump()
    for part in key.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(f"setup key {key!r}: no {part!r} in the scenario")
    return node


def scenario_setup(
    scenario: Any, sources: Mapping[str, Source], overrides: dict | None = None
) -> tuple[Setting, ...]:
    """Settings for ``sources``' keys, their values read from ``scenario`` (a bundled
    name, a dict or a Scenario) with ``overrides``."""
    from mrgym.config import load_scenario

    sc = load_scenario(scenario, overrides)
    return tuple(Setting(k, _text(lookup(sc, k)), s) for k, s in sources.items())


def resolve(setup: Setup | tuple[Setting, ...] | None) -> tuple[Setting, ...]:
    """A claim's settings: a tuple as it is, a callable's result (built when a report is
    written: setups load scenarios)."""
    if setup is None:
        return ()
    return setup() if callable(setup) else tuple(setup)


def markdown(settings: tuple[Setting, ...]) -> list[str]:
    """The setup as a markdown table (a claim's section of the report)."""
    if not settings:
        return []
    md = ["| setting | value | source |", "|---|---|---|"]
    for s in settings:
        md.append(f"| `{s.what}` | {s.value} | {s.source.text()} |".replace("\n", " "))
    return md


def as_json(settings: tuple[Setting, ...]) -> list[dict]:
    return [
        {
            "what": s.what,
            "value": s.value,
            "kind": s.source.kind,
            "ref": s.source.ref,
            "on": list(s.source.on),
        }
        for s in settings
    ]


def self_calibrated(key: str, settings: tuple[Setting, ...]) -> list[str]:
    """The settings of claim ``key`` set by looking at its own number."""
    return [s.what for s in settings if s.source.kind == CALIBRATED and key in s.source.on]
