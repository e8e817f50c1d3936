"""A reduce's copy phase: fetching its job's map outputs in rounds (Hadoop 1's copier).

A round (``copy_outputs``) takes the outputs that appeared since the last one (a copier
learns of them at most once per heartbeat), groups the backlog by source -- this host
(its local disk) or a source rack -- and copies the ``parallel_copies`` largest groups at
once, each as one flow of its MB / reducers from the group's largest output's host.

Two paths give the same rounds (the same groups in the same order, the same sums):

* the **indexed** path (issue "Speed"): while no output of the job was lost or came twice
  and no VM moved since its first output, all reducers of a job share one
  :class:`OutputIndex` (its outputs and their MB per source rack, in arrival order).  A
  group from another rack is then a range of that list, summed by one ``sum`` over a
  slice, so a round costs a step per source rack, not one per map output and reducer.
  Only the reducer's own rack, whose outputs split between this host and the others, is
  walked output by output.
* the **general** path groups output by output and rebuilds its groups when outputs are
  lost or VMs move.  A reducer switches to it, with the state the indexed path reached,
  as soon as the index stops holding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import simpy

from mrgym.sim.jobs import Attempt, Job, MapOutput

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.attempts import AttemptRunner
    from mrgym.sim.topology import Host

HOST = ("host",)  # the group of outputs on the reducer's own host


@dataclass(eq=False)
class OutputIndex:
    """A job's map outputs by source rack, shared by its reducers (valid while ``ok``)."""

    gen: int  # the path cache's generation (VM placement) when the first output appeared
    ok: bool = True  # False for good once an output is lost, repeats a map or a VM moved
    rack_of: list[int] = field(default_factory=list)  # source rack by place in job.outputs
    by_rack: dict[int, list[MapOutput]] = field(default_factory=dict)
    mb_by_rack: dict[int, list[float]] = field(default_factory=dict)
    maps: set[int] = field(default_factory=set)


def record_output(job: Job, out: MapOutput, generation: int) -> None:
    """Append a finished map's output to ``job.outputs`` and to the job's index."""
    out.seq = len(job.outputs)
    job.outputs.append(out)
    idx = job.out_index
    if idx is None:
        idx = job.out_index = OutputIndex(generation)
    if not idx.ok:
        return
    if generation != idx.gen or out.map_index in idx.maps:  # a VM moved, or a map re-ran
        idx.ok = False
        return
    idx.maps.add(out.map_index)
    r = out.vm.host.rack.id
    idx.rack_of.append(r)
    lst = idx.by_rack.get(r)
    if lst is None:
        idx.by_rack[r] = [out]
        idx.mb_by_rack[r] = [out.mb]
    else:
        lst.append(out)
        idx.mb_by_rack[r].append(out.mb)


def output_lost(job: Job) -> None:
    """One of the job's outputs was lost: its reducers take the general path."""
    if job.out_index is not None:
        job.out_index.ok = False


@dataclass(eq=False)
class CopyState:
    """Where a reducer's copy phase stands: the general path's variables."""

    have: set[int] = field(default_factory=set)  # map indices copied
    groups: dict[tuple, list[MapOutput]] = field(default_factory=dict)  # backlog by source
    sums: dict[tuple, float] = field(default_factory=dict)  # a group's MB, while unchanged
    seen: set[int] = field(default_factory=set)  # map indices that entered the backlog
    dup: bool = False
    epoch: tuple | None = None
    cursor: int = 0  # outputs of job.outputs looked at
    shuffled: float = 0.0  # MB copied
    last_round: float = -math.inf
    my_rack: int = -1  # the reducer's rack when it started (its cross-rack MB count)
    waited: bool = False  # this round's heartbeat wait is done (a handover at round start)


def copy_outputs(runner: AttemptRunner, att: Attempt):
    """The copy phase of reduce ``att`` (a SimPy sub-generator): returns the MB it copied,
    or None when the attempt ended meanwhile."""
    st = CopyState(my_rack=att.vm.host.rack.id)
    # the indexed path hands over at once, with a fresh state, when the index does not hold
    state = yield from _indexed(runner, att, st)
    if state != "switched":
        return st.shuffled if state == "done" else None
    alive = yield from _general(runner, att, st)
    return st.shuffled if alive else None


def _account(runner: AttemptRunner, st: CopyState, part: float, key: tuple) -> None:
    st.shuffled += part
    runner.shuffle_mb += part
    if key[0] == "rack" and key[1] != st.my_rack:
        runner.shuffle_cross_rack_mb += part


def _copy_links(topo, src, here) -> tuple:
    """A copy's path: map outputs are served from the page cache, so the aggregated copy
    crosses the network path minus the source NIC (documented)."""
    return topo.path(src, here)[1:] or (here.nic_down,)


def _copy(env, att: Attempt, st: CopyState, works: list, take: list, groups: dict, sums: dict):
    """Run a round's copies: the taken groups leave the backlog, the attempt waits for all."""
    att.works = works
    st.last_round = env.now
    for key, _v in take:
        del groups[key]
        del sums[key]
    yield simpy.AllOf(env, [w.event for w in works])
    att.works = []
    att.work = None


def _output_event(env: simpy.Environment, job: Job) -> simpy.Event:
    """The event a copier with an empty backlog waits on: the job's next map output (one
    event shared by all of the job's reducers)."""
    if job.output_event is None:
        job.output_event = env.event()
    return job.output_event


def _fetch(runner: AttemptRunner, st: CopyState, items: list, key: tuple, n_red: int) -> None:
    """The general path's accounting of one copied group: only outputs still there and not
    copied before count (one may have been lost, or its map re-run, during the copy)."""
    have = st.have
    got = [o for o in items if not o.lost and o.map_index not in have]
    for o in got:
        have.add(o.map_index)
    _account(runner, st, sum(o.mb for o in got) / n_red, key)


def _index_holds(runner: AttemptRunner, job: Job, gen: int, lost0: int) -> bool:
    """Whether the job's OutputIndex still describes the backlog: no output lost, no map
    re-run and no VM moved since the reducer's indexed path began (at placement generation
    ``gen``, with ``lost0`` outputs lost in the simulation)."""
    i = job.out_index  # None: no output yet (the first one's generation is checked)
    return (
        (i is None or (i.ok and i.gen == gen))
        and runner.topo._path_cache.generation == gen
        and runner.sim.dynamics.outputs_lost == lost0
    )


def _hand_over(
    runner: AttemptRunner,
    att: Attempt,
    st: CopyState,
    groups: dict[tuple, int | list[MapOutput]],
    scanned: dict[int, int],
    own_copied: list[MapOutput],
    cursor: int,
    epoch: tuple | None,
    batch: list,
) -> None:
    """Turn the indexed path's state into the general path's ``st``: the copied outputs,
    the backlog's groups in order, and the groups of the round just copied (``batch``)
    accounted as the general path would."""
    job = att.task.job
    i = job.out_index
    by_rack = i.by_rack if i is not None else {}
    copied: set[int] = {o.map_index for o in own_copied}
    done_at = {key[1]: a for key, a, _b, _mb in batch if type(a) is int}
    for r, lst in by_rack.items():
        if r == st.my_rack:
            continue
        a = groups.get(("rack", r))
        a = done_at.get(r, a if a is not None else scanned.get(r, 0))
        copied.update(o.map_index for o in lst[:a])
    st.have = copied
    st.groups = {
        key: (v if type(v) is list else by_rack[key[1]][v : scanned[key[1]]])
        for key, v in groups.items()
    }
    st.seen = {o.map_index for o in job.outputs[:cursor]}
    st.cursor = cursor
    st.epoch = epoch
    n_red = len(job.reduces)
    for key, a, b, _mb in batch:  # the general path's accounting of a round's copies
        _fetch(runner, st, a if type(a) is list else by_rack[key[1]][a:b], key, n_red)
    if batch:
        att.fetched = len(st.have)


def _index_new(
    idx: OutputIndex,
    cursor: int,
    n: int,
    scanned: dict[int, int],
    groups: dict[tuple, int | list[MapOutput]],
    sums: dict[tuple, float],
    here: Host,
) -> None:
    """Group the outputs ``cursor:n`` of the index: another rack's group is a range start
    in its ``by_rack`` list; the reducer's own rack splits, output by output, into this
    host (``HOST``) and the rest of the rack.  A group that grew loses its sum."""
    my_rack = here.rack.id
    own = ("rack", my_rack)
    new = []  # keys that start a group this round: (first output's place, key, value)
    for r in dict.fromkeys(idx.rack_of[cursor:n]):  # in order of first arrival
        lst = idx.by_rack[r]
        a = scanned.get(r, 0)
        scanned[r] = len(lst)
        if r != my_rack:
            key = ("rack", r)
            if key in groups:
                sums.pop(key, None)
            else:
                new.append((lst[a].seq, key, a))
            continue
        split: dict[tuple, list[MapOutput]] = {}
        for o in lst[a:]:
            k = HOST if o.vm.host is here else own
            s = split.get(k)
            if s is None:
                split[k] = [o]
            else:
                s.append(o)
        for k, outs in split.items():
            items = groups.get(k)
            if items is None:
                new.append((outs[0].seq, k, outs))
            else:
                items.extend(outs)
                sums.pop(k, None)
    new.sort(key=lambda t: t[0])
    for _seq, key, v in new:
        groups[key] = v


def _index_sums(groups: dict, sums: dict, idx: OutputIndex, scanned: dict[int, int]) -> None:
    """Sum the MB of each group that has no sum yet (new, or grown since its last sum): a
    range of another rack's ``mb_by_rack``, or the own rack's outputs one by one."""
    for key, v in groups.items():
        if key not in sums:
            if type(v) is list:
                sums[key] = sum([o.mb for o in v])
            else:
                sums[key] = sum(idx.mb_by_rack[key[1]][v : scanned[key[1]]])


def _index_copies(
    runner: AttemptRunner,
    att: Attempt,
    here: Host,
    take: list,
    sums: dict,
    idx: OutputIndex,
    scanned: dict[int, int],
) -> tuple[list, list]:
    """Start a round's flows on the indexed path: one per taken group, from the host of the
    group's (first) largest output, to ``here`` (the reducer's host when the path began).
    Returns the flows and the batch (key, range start or outputs, range end, MB per
    reducer)."""
    job = att.task.job
    n_red = len(job.reduces)
    works, batch = [], []
    for key, v in take:
        mb = sums[key] / n_red
        if key is HOST:
            links = (here.disk,)
            b = 0
        else:
            if type(v) is list:
                src = max(v, key=lambda o: o.mb).vm.host
                b = 0
            else:
                r = key[1]
                b = scanned[r]
                sl = idx.mb_by_rack[r][v:b]
                src = idx.by_rack[r][v + sl.index(max(sl))].vm.host  # the first largest
            links = _copy_links(runner.topo, src, here)
        works.append(runner.flow(att, links, mb, job, tag="shuffle"))
        batch.append((key, v, b, mb))
    return works, batch


def _indexed(runner: AttemptRunner, att: Attempt, st: CopyState):
    """Rounds on the job's OutputIndex while it holds.  Returns "ended" (the attempt
    ended), "done" (every output copied) or "switched" (``st`` holds the general path's
    state)."""
    job = att.task.job
    env = runner.env
    here = att.vm.host
    n_maps = len(job.maps)
    lost0, gen = runner.sim.dynamics.outputs_lost, runner.topo._path_cache.generation
    scanned: dict[int, int] = {}  # source rack -> how many of its outputs are grouped
    # key -> the start of its range in by_rack (other racks), or its outputs (own rack)
    groups: dict[tuple, int | list[MapOutput]] = {}
    sums = st.sums
    own_copied: list[MapOutput] = []
    n_have = 0
    cursor = 0
    epoch = None  # the general path's epoch, set once a round began
    while n_have < n_maps:
        wait = st.last_round + runner.hb - env.now
        if wait > 0 and len(job.outputs) - cursor < n_maps - n_have:
            yield env.timeout(wait)
            if att.outcome != "running":
                return "ended"
        if not _index_holds(runner, job, gen, lost0):
            _hand_over(runner, att, st, groups, scanned, own_copied, cursor, epoch, [])
            st.waited = True  # the general path must not wait a second time this round
            return "switched"
        epoch = (lost0, gen, here)
        idx = job.out_index
        n = len(job.outputs)
        if n > cursor:
            _index_new(idx, cursor, n, scanned, groups, sums, here)
            cursor = n
        if not groups:
            yield _output_event(env, job)
            if att.outcome != "running":
                return "ended"
            continue
        _index_sums(groups, sums, idx, scanned)
        order = sorted(groups.items(), key=lambda kv: -sums[kv[0]])
        take = order[: runner.params.parallel_copies]
        works, batch = _index_copies(runner, att, here, take, sums, idx, scanned)
        yield from _copy(env, att, st, works, take, groups, sums)
        if not _index_holds(runner, job, gen, lost0):  # lost an output, or a VM moved
            _hand_over(runner, att, st, groups, scanned, own_copied, cursor, epoch, batch)
            return "switched"
        for key, v, b, mb in batch:  # all copied: the MB summed over them is the same sum
            if type(v) is list:
                n_have += len(v)
                own_copied.extend(v)
            else:
                n_have += b - v
            _account(runner, st, mb, key)
        att.fetched = n_have
    return "done"


def _fresh_outputs(job: Job, st: CopyState) -> list[MapOutput]:
    """The outputs that appeared since the last round, neither lost nor copied; one whose
    map index entered the backlog before marks ``st.dup`` (the groups must be rebuilt)."""
    outs, have, seen = job.outputs, st.have, st.seen
    fresh = []
    cursor = st.cursor
    while cursor < len(outs):
        o = outs[cursor]
        if not o.lost and o.map_index not in have:
            fresh.append(o)
            if o.map_index in seen:
                st.dup = True
            seen.add(o.map_index)
        cursor += 1
    st.cursor = cursor
    return fresh


def _regroup(st: CopyState, fresh: list[MapOutput], epoch: tuple) -> list[MapOutput]:
    """Empty the groups and return the whole backlog, in arrival order, to group afresh:
    an output may have left it otherwise than by a copy, or a VM moved (the keys change)."""
    have = st.have
    backlog = [o for items in st.groups.values() for o in items]
    backlog.sort(key=lambda o: o.seq)
    backlog += fresh
    backlog = [o for o in backlog if not o.lost and o.map_index not in have]
    st.groups = {}
    st.sums.clear()
    st.epoch = epoch
    return backlog


def _group_by_source(fresh: list[MapOutput], groups: dict, sums: dict, here: Host) -> None:
    """Add outputs to the groups by source: this host (local disk) or a source rack; a
    group that grew loses its sum."""
    for o in fresh:
        h = o.vm.host
        key = HOST if h is here else ("rack", h.rack.id)
        items = groups.get(key)
        if items is None:
            groups[key] = [o]
        else:
            items.append(o)
            sums.pop(key, None)


def _general_copies(runner: AttemptRunner, att: Attempt, take: list, sums: dict) -> list:
    """Start a round's flows on the general path: one per taken group, from the host of
    the group's (first) largest output."""
    job = att.task.job
    here = att.vm.host
    n_red = len(job.reduces)
    works = []
    for key, items in take:
        mb = sums[key] / n_red
        if key[0] == "host":
            links = (here.disk,)
        else:
            src = max(items, key=lambda o: o.mb).vm.host
            links = _copy_links(runner.topo, src, here)
        works.append(runner.flow(att, links, mb, job, tag="shuffle"))
    return works


def _general(runner: AttemptRunner, att: Attempt, st: CopyState):
    """Rounds grouping output by output, from ``st``.  Returns False if the attempt ended.

    The backlog (outputs not yet copied, in arrival order) is kept grouped by source
    across rounds: a group's MB is summed again only when it grew, and a round costs its
    new outputs, not the whole backlog.  Groups are rebuilt from the backlog, as a fresh
    grouping would make them, when an output may have left it otherwise than by a copy
    (one was lost, a map index came twice) or a VM moved (the keys change)."""
    vm = att.vm
    job = att.task.job
    env, dyn = runner.env, runner.sim.dynamics
    paths = runner.topo._path_cache
    n_maps, n_red = len(job.maps), len(job.reduces)
    have, sums = st.have, st.sums
    while len(have) < n_maps:
        # Map-completion events reach a reduce through its TaskTracker's heartbeat, so
        # a copier learns of new outputs at most once per heartbeat period (Hadoop 1).
        wait = st.last_round + runner.hb - env.now
        if st.waited:
            st.waited = False
        elif wait > 0 and len(job.outputs) - st.cursor < n_maps - len(have):
            yield env.timeout(wait)
            if att.outcome != "running":
                return False
        here = vm.host
        fresh = _fresh_outputs(job, st)
        now_epoch = (dyn.outputs_lost, paths.generation, here)
        if st.dup or now_epoch != st.epoch:
            fresh = _regroup(st, fresh, now_epoch)
        groups = st.groups
        _group_by_source(fresh, groups, sums, here)
        if not groups:
            yield _output_event(env, job)
            if att.outcome != "running":
                return False
            continue
        # each group's MB summed when it changed (the same sum, in the same order)
        for key, items in groups.items():
            if key not in sums:
                sums[key] = sum([o.mb for o in items])
        order = sorted(groups.items(), key=lambda kv: -sums[kv[0]])
        take = order[: runner.params.parallel_copies]
        works = _general_copies(runner, att, take, sums)
        yield from _copy(env, att, st, works, take, groups, sums)
        for key, items in take:
            _fetch(runner, st, items, key, n_red)
        att.fetched = len(have)
    return True
