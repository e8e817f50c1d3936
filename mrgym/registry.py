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

if TYPE_CHECKING:
    from mrgym.sim.scheduler import Scheduler

EntryPoint = str | Callable[..., "Scheduler"]

# "package.module:Attr" or "package.module:Outer.attr"
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

#: The classic Hadoop schedulers (``baselines/classic.py``), in the order every listing
#: and every plot colour follows.
CLASSIC: tuple[tuple[str, str], ...] = (
    ("fifo", "baselines.classic:FifoScheduler"),
    ("fair", "baselines.classic:FairScheduler"),
    ("delay", "baselines.classic:DelayScheduler"),
    ("capacity", "baselines.classic:CapacityScheduler"),
    ("late", "baselines.classic:LateScheduler"),
    ("dl-sched", "baselines.classic:DlSchedScheduler"),
    ("rand-sched", "baselines.classic:RandSchedScheduler"),
)

#: The five papers' schedulers (``baselines/<paper>.py``), after the classic ones.
PAPERS: tuple[tuple[str, str], ...] = (
    ("ila", "baselines.ila:IlaScheduler"),
    ("iao", "baselines.ila:IaoScheduler"),
    ("lao", "baselines.ila:LaoScheduler"),
    ("pna", "baselines.pna:PnaScheduler"),
    ("coupling", "baselines.pna:CouplingScheduler"),
    ("lsap-sched", "baselines.lsap:LsapScheduler"),
    ("lsap-fair-sched", "baselines.lsap:LsapFairScheduler"),
    ("hybridmr", "baselines.hybridmr:HybridMRScheduler"),
    ("hybridmr-phase1", "baselines.hybridmr:HybridMRPhase1Scheduler"),
    ("fifo-random", "baselines.hybridmr:FifoRandomScheduler"),
    ("progress-share", "baselines.lee_progress:ProgressShareScheduler"),
    ("lee-fair", "baselines.lee_progress:LeeFairScheduler"),
    ("cloud-driver", "baselines.lee_cloud:CloudDriver"),
)

#: Simple policies in the agent's own action space, after the papers' schedulers: job orders
#: (``baselines/simple.py``) and a random order under a cap per host (``baselines/hostcap.py``).
SIMPLE: tuple[tuple[str, str], ...] = (
    ("random", "baselines.simple:RandomScheduler"),
    ("sjf", "baselines.simple:SjfScheduler"),
    ("srpt", "baselines.simple:SrptScheduler"),
    ("wfair", "baselines.simple:WeightedFairScheduler"),
    ("hostcap", "baselines.hostcap:HostCapScheduler"),
)

#: Compositions ``<gater>-gate+<order>``: the schedulers whose ``gate`` idles slots
#: (HybridMR's phase II, ILA's IASM) and the job orders that may decide the rest.
GATERS: tuple[str, ...] = ("hybridmr", "ila")
ORDERS: tuple[str, ...] = ("random", "sjf", "srpt", "wfair", "fair", "hostcap")
_COMPOSE = "baselines.simple:compose"
_COMPOSITION = re.compile(r"^(?P<gater>.*)-gate\+(?P<order>.*)$")

_REGISTRY: dict[str, EntryPoint] = {}


class EntryPointError(ImportError, ValueError):
    """A registered entry point that cannot be loaded (its module fails to import, lacks
    the attribute, or the attribute is not callable).  A ``ValueError`` too, so that the
    CLI reports it in one line like any other bad name."""


def _key(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"scheduler name: expected a str, got {type(name).__name__}")
    return name.lower()


def register(name: str, entry_point: EntryPoint) -> None:
    """Record ``entry_point`` under ``name`` (case-insensitive; a second registration of a
    name replaces the first).  A string is checked for its ``"module:attr"`` form here and
    imported only when ``make`` first needs it."""
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


def unregister(name: str) -> None:
    """Forget ``name`` (a ``ValueError`` naming the registered ones if it is unknown)."""
    _REGISTRY.pop(_known(name))


def available() -> list[str]:
    """Registered names, in registration order (the classic baselines first)."""
    return list(_REGISTRY)


def entry_point(name: str) -> EntryPoint:
    """What ``name`` is registered as, unresolved (a string stays a string)."""
    return _REGISTRY[_known(name)]


def compositions() -> list[str]:
    """Every ``<gater>-gate+<order>`` name ``make`` builds (:data:`GATERS` x :data:`ORDERS`)."""
    return [f"{g}-gate+{o}" for g in GATERS for o in ORDERS]


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
        raise ValueError(f"scheduler {name!r}: unknown gater {m['gater']!r}; expected {valid}")
    if m["order"] not in ORDERS:
        raise ValueError(f"scheduler {name!r}: unknown order {m['order']!r}; expected {valid}")
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
        raise ValueError(f"unknown tool {name!r}; expected one of {sorted(TOOLS)}")
    return _resolve(TOOLS[name], f"tool {name!r}")


def make(name: str, **params) -> Scheduler:
    """A new scheduler: the factory registered as ``name`` called with ``params``."""
    return load(name)(**params)


def _known(name: str) -> str:
    key = _key(name)
    if key not in _REGISTRY:
        raise ValueError(f"unknown scheduler {name!r}; expected one of {available()}")
    return key


for _name, _ep in CLASSIC + PAPERS + SIMPLE:
    register(_name, _ep)
del _name, _ep
