"""Schedulers by name, as ``gym.make`` makes environments: ``make("fair")``.

``register(name, entry_point)`` records a factory ``(**params) -> Scheduler`` under a
name: either a ``"module:attr"`` string, imported on the first ``make`` of that name (so
registering costs no import, and the library never imports ``baselines`` itself), or a
callable.  ``make(name, **params)`` builds one; ``available()`` lists the names in
registration order, the classic baselines first (``baselines.make`` and friends are the
same functions).

``make`` and ``load`` also build compositions, ``"<gater>-gate+<order>"`` (e.g.
``"hybridmr-gate+srpt"``): a scheduler of :data:`GATERS` gates the slots, one of
:data:`ORDERS` decides the slots its gate leaves (``baselines/simple.py``; ``hostcap`` is
``baselines/hostcap.py``).  They are not
registered, so ``available()`` (and every listing built on it) leaves them out;
:func:`compositions` lists them.

Imports run one way: the simulator core (``mrgym.sim``) knows nothing of this registry;
the runner, the policies, the harness and the CLI look schedulers up here.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from mrgym.suggest import did_you_mean

if TYPE_CHECKING:
    from mrgym.sim.scheduler import Scheduler

EntryPoint = str | Callable[..., "Scheduler"]

# "package.module:Attr" or "package.module:Outer.attr"
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

#: The classic Hadoop schedulers (``baselines/classic.py``), in the order every listing
#: and every plot colour follows.
CLASSIC: tuple[tuple[str, str, str], ...] = (
    (
        "fifo",
        "baselines.classic:FifoScheduler",
        "Hadoop 1's FIFO: the oldest job first, its closest map",
    ),
    (
        "fair",
        "baselines.classic:FairScheduler",
        "PureFair: the job furthest below its fair share first, greedy locality",
    ),
    (
        "delay",
        "baselines.classic:DelayScheduler",
        "delay scheduling: Fair, a job waits a little for a node- or rack-local slot",
    ),
    (
        "capacity",
        "baselines.classic:CapacityScheduler",
        "queues with capacity shares, greedy locality",
    ),
    (
        "late",
        "baselines.classic:LateScheduler",
        "LATE on Fair: speculative copies of the tasks estimated to finish last",
    ),
    (
        "dl-sched",
        "baselines.classic:DlSchedScheduler",
        "Hadoop's default: node-local, else rack-local, else a random task",
    ),
    (
        "rand-sched",
        "baselines.classic:RandSchedScheduler",
        "a random task with probability `randomness`, else dl-sched",
    ),
)

#: The five papers' schedulers (``baselines/<paper>.py``), after the classic ones.
PAPERS: tuple[tuple[str, str, str], ...] = (
    (
        "ila",
        "baselines.ila:IlaScheduler",
        "ILA: fair order, interference-aware admission, adaptive delay",
    ),
    (
        "iao",
        "baselines.ila:IaoScheduler",
        "ILA's interference-aware admission with PureFair's greedy locality",
    ),
    ("lao", "baselines.ila:LaoScheduler", "ILA's adaptive delay scheduling alone"),
    (
        "pna",
        "baselines.pna:PnaScheduler",
        "PNA: a task accepted with a probability falling with its network cost",
    ),
    (
        "coupling",
        "baselines.pna:CouplingScheduler",
        "Coupling: reduces launched as maps progress, near their input",
    ),
    (
        "lsap-sched",
        "baselines.lsap:LsapScheduler",
        "lsap: one assignment of all pending maps to the idle map slots per round",
    ),
    (
        "lsap-fair-sched",
        "baselines.lsap:LsapFairScheduler",
        "lsap-sched with lsap's fairness + locality cost",
    ),
    (
        "hybridmr",
        "baselines.hybridmr:HybridMRScheduler",
        "HybridMR: profile-based native/virtual placement, then phase II's DRM and IPS",
    ),
    (
        "hybridmr-phase1",
        "baselines.hybridmr:HybridMRPhase1Scheduler",
        "HybridMR's phase I placement alone, Fair inside the pools",
    ),
    (
        "fifo-random",
        "baselines.hybridmr:FifoRandomScheduler",
        "HybridMR's comparator: each job to a random pool, FIFO",
    ),
    (
        "progress-share",
        "baselines.lee_progress:ProgressShareScheduler",
        "Lee's heterogeneity-aware scheduler: jobs by progress share",
    ),
    (
        "lee-fair",
        "baselines.lee_progress:LeeFairScheduler",
        "Lee's comparator: a fair scheduler with delay scheduling",
    ),
    (
        "cloud-driver",
        "baselines.lee_cloud:CloudDriver",
        "Lee's cloud driver: starts and releases standby hosts around Fair",
    ),
)

#: Simple policies in the agent's own action space, after the papers' schedulers: job orders
#: (``baselines/simple.py``) and a random order under a cap per host (``baselines/hostcap.py``).
SIMPLE: tuple[tuple[str, str, str], ...] = (
    ("random", "baselines.simple:RandomScheduler", "a uniformly random job that can launch here"),
    ("sjf", "baselines.simple:SjfScheduler", "smallest job (fewest tasks in all) first"),
    ("srpt", "baselines.simple:SrptScheduler", "fewest remaining (pending + running) tasks first"),
    (
        "wfair",
        "baselines.simple:WeightedFairScheduler",
        "Decima's weighted fair: weight x remaining tasks^alpha",
    ),
    (
        "hostcap",
        "baselines.hostcap:HostCapScheduler",
        "random, declining a slot while its host runs its cap of such tasks",
    ),
)

#: Compositions ``<gater>-gate+<order>``: the schedulers whose ``gate`` idles slots
#: (HybridMR's phase II, ILA's IASM) and the job orders that may decide the rest.
GATERS: tuple[str, ...] = ("hybridmr", "ila")
#: What each gater's gate does, for the compositions' descriptions.
GATES: dict[str, str] = {
    "hybridmr": "HybridMR's phase II gate",  # idles a slot on a thrashing disk, SLA pressure
    "ila": "ILA's interference-aware gate",  # idles a map slot no job is admitted to
}
ORDERS: tuple[str, ...] = ("random", "sjf", "srpt", "wfair", "fair", "hostcap")
_COMPOSE = "baselines.simple:compose"
_COMPOSITION = re.compile(r"^(?P<gater>.*)-gate\+(?P<order>.*)$")

#: The compositions ``mrgym compare`` runs by default beside the registered schedulers:
#: those that are a scenario's best baseline on the leaderboard (docs/leaderboard.md; a
#: test holds this to its result files), so that the default comparison has them.
LEADERBOARD_COMPOSITIONS: tuple[str, ...] = ("hybridmr-gate+hostcap", "hybridmr-gate+srpt")

_REGISTRY: dict[str, EntryPoint] = {}
_DESCRIPTIONS: dict[str, str] = {}


class EntryPointError(ImportError, ValueError):
    """A registered entry point that cannot be loaded (its module fails to import, lacks
    the attribute, or the attribute is not callable).  A ``ValueError`` too, so that the
    CLI reports it in one line like any other bad name."""


def _key(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"scheduler name: expected a str, got {type(name).__name__}")
    return name.lower()


def register(name: str, entry_point: EntryPoint, description: str | None = None) -> None:
    """Record ``entry_point`` under ``name`` (case-insensitive; a second registration of a
    name replaces the first).  A string is checked for its ``"module:attr"`` form here and
    imported only when ``make`` first needs it.  ``description``: one line for
    ``mrgym schedulers`` (default: the first line of the factory's docstring)."""
    key = _key(name)
    if not key:
        raise ValueError("scheduler name: must not be empty")
    if isinstance(entry_point, str):
        if not _ENTRY_POINT.match(entry_point):
            raise ValueError(
                f"scheduler {key!r}: entry point {entry_point!r}: expected 'module:attr', "
                "e.g. 'baselines.classic:FairScheduler'"
            )
    elif not callable(entry_point):
        raise TypeError(
            f"scheduler {key!r}: entry point: expected a 'module:attr' string or a callable, "
            f"got {type(entry_point).__name__}"
        )
    _REGISTRY[key] = entry_point
    _DESCRIPTIONS.pop(key, None)
    if description:
        _DESCRIPTIONS[key] = " ".join(description.split())


def unregister(name: str) -> None:
    """Forget ``name`` (a ``ValueError`` naming the registered ones if it is unknown)."""
    key = _known(name)
    _REGISTRY.pop(key)
    _DESCRIPTIONS.pop(key, None)


def available() -> list[str]:
    """Registered names, in registration order (the classic baselines first)."""
    return list(_REGISTRY)


def entry_point(name: str) -> EntryPoint:
    """What ``name`` is registered as, unresolved (a string stays a string)."""
    return _REGISTRY[_known(name)]


def compositions() -> list[str]:
    """Every ``<gater>-gate+<order>`` name ``make`` builds (:data:`GATERS` x :data:`ORDERS`)."""
    return [f"{g}-gate+{o}" for g in GATERS for o in ORDERS]


def names(which: str = "default") -> list[str]:
    """The scheduler names a listing or a comparison takes: ``"registered"``
    (:func:`available`), ``"default"`` (those and :data:`LEADERBOARD_COMPOSITIONS`: what
    ``mrgym compare`` runs unless told otherwise) or ``"all"`` (those and every
    composition: what ``mrgym schedulers`` lists)."""
    if which == "registered":
        return available()
    if which == "default":
        return available() + [c for c in LEADERBOARD_COMPOSITIONS if c not in _REGISTRY]
    if which == "all":
        return available() + [c for c in compositions() if c not in _REGISTRY]
    raise ValueError(f"scheduler set {which!r}: expected registered, default or all")


def describe(name: str) -> str:
    """One line on what scheduler ``name`` does: its registered description, for a
    composition its gate's and its order's, else the first line of its factory's
    docstring ("" when there is none)."""
    parts = composition(name)
    if parts is not None:
        gater, order = parts
        return f"{GATES[gater]}, the rest by {order}: {describe(order)}"
    key = _known(name)
    if key in _DESCRIPTIONS:
        return _DESCRIPTIONS[key]
    doc = (getattr(load(key), "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def composition(name: str) -> tuple[str, str] | None:
    """(gater, order) of a composition's name; None for a name without ``+`` or a
    registered one; a ``ValueError`` naming the valid gaters and orders for a bad one."""
    key = _key(name)
    if "+" not in key or key in _REGISTRY:
        return None
    m = _COMPOSITION.match(key)
    valid = f"gaters {list(GATERS)}, orders {list(ORDERS)}"
    if m is None:
        raise ValueError(
            f"scheduler {name!r}: a composition is '<gater>-gate+<order>', "
            f"e.g. 'hybridmr-gate+srpt', with {valid}"
        )
    if m["gater"] not in GATERS:
        hint = did_you_mean(m["gater"], GATERS)
        raise ValueError(
            f"scheduler {name!r}: unknown gater {m['gater']!r}{hint}; expected {valid}"
        )
    if m["order"] not in ORDERS:
        hint = did_you_mean(m["order"], ORDERS)
        raise ValueError(
            f"scheduler {name!r}: unknown order {m['order']!r}{hint}; expected {valid}"
        )
    return m["gater"], m["order"]


def load(name: str) -> Callable[..., Scheduler]:
    """The factory registered as ``name``, its entry point imported if it is a string; for
    a composition, its factory ``(gater_params=None, order_params=None) -> Scheduler``."""
    parts = composition(name)
    if parts is not None:
        return functools.partial(_resolve(_COMPOSE, f"scheduler {_key(name)!r}"), *parts)
    key = _known(name)
    ep = _REGISTRY[key]
    if not isinstance(ep, str):
        return ep
    return _resolve(ep, f"scheduler {key!r}")


def _resolve(ep: str, what: str) -> Callable:
    module, _, attr = ep.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        why = " ".join(str(e).split()) or type(e).__name__
        raise EntryPointError(f"{what}: cannot load entry point {ep!r}: {why}") from e
    if not callable(obj):
        raise EntryPointError(f"{what}: entry point {ep!r} is a {type(obj).__name__}, not callable")
    return obj


#: Paper tools that are not schedulers (provisioners, predictors, profile builders): the
#: library reaches them by name here, as it reaches schedulers, and never imports
#: ``baselines`` itself.
TOOLS: dict[str, str] = {
    "hybridmr-profiles": "baselines.hybridmr_profile:ProfileDB.load_default",
    "hybridmr-profiling-error": "baselines.hybridmr_profile:profiling_error",
    "hybridmr-design": "baselines.hybridmr:design",
    "tara-placement": "baselines.tara:placement",
    "tara-predict": "baselines.tara_predict:predict_jct",
    "jct-predict": "baselines.lee_predict:predict_job",
    "cloud-driver": "baselines.lee_cloud:CloudDriver",
}


def tool(name: str) -> Callable:
    """The paper tool registered in :data:`TOOLS` as ``name`` (imported on first use)."""
    if name not in TOOLS:
        hint = did_you_mean(name, TOOLS)
        raise ValueError(f"unknown tool {name!r}{hint}; expected one of {sorted(TOOLS)}")
    return _resolve(TOOLS[name], f"tool {name!r}")


def make(name: str, **params) -> Scheduler:
    """A new scheduler: the factory registered as ``name`` called with ``params``."""
    return load(name)(**params)


def _known(name: str) -> str:
    key = _key(name)
    if key not in _REGISTRY:
        hint = did_you_mean(key, names("all"))
        raise ValueError(f"unknown scheduler {name!r}{hint}; expected one of {available()}")
    return key


for _name, _ep, _what in CLASSIC + PAPERS + SIMPLE:
    register(_name, _ep, _what)
del _name, _ep, _what
