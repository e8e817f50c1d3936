"""TARA's lightweight prediction engine (Lee thesis, ch. 3, §3.2.2; inputs §3.2.1).

Maps a candidate VM placement to a predicted job completion time, the objective function
of §3.2.1.1.  It follows Hadoop's control flow (Fig. 3.4) with a simplified execution
model, as §3.2.2 asks ("we decided to trade absolute accuracy for speed"): workers read
their input blocks, compute CPU time proportional to the input, write intermediate data
locally; each reduce copies its partition of every map output over the data-center
topology, computes, and writes its output back to HDFS.  The network is "stream-based":
a fluid model where every stream's rate is the minimum over the links of its path of the
link's available capacity divided by the streams on it (bottleneck sharing), recomputed
at every stream completion.  No speculative execution, no noise (§3.2.2: "we do not model
non-deterministic behavior").

Inputs (§3.2.1): the platform description (:class:`TaraModel`: racks, rack-uplink
bandwidth available after background traffic, each server's disk and NIC MB/s and core
speed: data-sheet values) from the scenario's cluster; the framework configuration (slots
per VM, ``parallel_copies``: hadoop-site.xml) from the scenario; the job's size (maps,
reduces, input MB) from its workload.  Everything else comes from the logs of an earlier
run of the job (§3.2.1: "we analyzed Hadoop logs to derive information on the job ...
usually gathered from a previous application run"; :mod:`baselines.tara_profile`): the
map time per host type, the map and reduce selectivity, the reduce CPU per MB, and the
virtualized-I/O factor.  Nothing is read from the simulator's model (its disk-thrash law,
virtualization overheads, profiles' CPU per MB).  A map-only job is its map phase.

The model, per candidate (vectorised over racks and over a batch of candidates; numpy,
no event objects):

* **Maps.** A VM runs ``map_slots`` maps at once, each taking the history run's mean map
  time on that host type (read, compute and local write with ``map_slots`` maps sharing
  the disk, as measured; in proportion to the map's input MB).  The map phase ends after
  ``ceil(maps / slots)`` waves; a rack's share of the map output is its share of the map
  throughput.
* **Shuffle.**  Reduces are spread over the VMs' reduce slots.  A reduce fetches its
  partition of each source rack's map output as one stream, through a pool of
  ``parallel_copies`` copiers (Hadoop's ReduceCopier threads, framework-specific input of
  §3.2.1.2): the largest sources first, ties counted from the rack after the reduce's own
  (so reduces of different racks do not all start on the same source: Hadoop 0.18
  shuffles each reduce's host list), the next source as soon as a copier is free.  A
  stream from rack a to rack b crosses a's uplink, b's downlink and the reduce's NIC; one
  inside a rack only the NIC.  Streams start once the first map wave is done; a reduce
  cannot finish copying before the last map is done.  ``copier="rounds"`` instead waits
  for all ``parallel_copies`` streams of a group before the next group (mrgym's simulator
  does, with its own, per-reduce order).
* **Reduce.** Compute the learned CPU per shuffled MB (the history run's CPU counter over
  its reduce input, at the data-sheet core speed), then write the output
  through the HDFS pipeline: the second replica on a DataNode of another rack (Hadoop's
  default placement; the predictor uses the expected split over racks, in proportion to
  their DataNodes), so the stream crosses the writer's uplink and the target's downlink,
  capped by the writer's disk.  The job ends with its last write.
* **Streams.** A stream of a virtualized VM moves at its bottleneck share times the
  virtualized-I/O factor.  The factor is calibrated on the history run: the value (in
  ``IO_RANGE``, by bisection) at which this engine predicts the history run's measured
  JCT on the history run's own placement.  The clock advances from one
  stream completion to the next, by at least ``quantum`` (2 %) of the elapsed time
  (streams due within a step end with it): 4-5x fewer steps, predictions ≤ 4 % above
  exact stepping on tara80 (``quantum=0`` steps exactly).

Deviations: the calibrated I/O factor absorbs what the engine does not model of the
history run (task start-up, heartbeats, page cache): on tara80 it is 0.68 where the
simulator's hidden factor is 0.83, so network-bound placements are over-predicted (RR-S
1846 s predicted vs 1500 s simulated; 1515 s with the hidden factor, see
docs/baselines.md for every policy).  The virtualization CPU overhead of reduces is not
estimated (only maps are timed per host type).  Reduces of one rack are assumed alike (the model aggregates streams per
(source rack, destination rack) pair, which is exact for identical servers in a rack); a
VM shares its host with no other VM of the job (TARA's one-VM-per-server rule, §3.2.3);
remote map reads, page-cache effects and Dom0 CPU are not modelled.  The thesis engine is
C++ (0.96 s per prediction for Sort 160 GB on 80 VMs, §3.3.4.1); this one is numpy
(``benchmarks/bench_tara.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from baselines.tara_profile import Learned, learn
from mrgym.config import Scenario, load_scenario
from mrgym.sim.build import build_topology, model_params
from mrgym.sim.rng import Streams
from mrgym.workloads import generate

INF = np.inf
REL_EPS = 1e-7  # a stream with less than this share of its volume left is done
IO_RANGE = (0.2, 1.0)  # the virtualized-I/O factor calibrated on the history run


@dataclass(frozen=True)
class TaraModel:
    """The static inputs of a prediction (§3.2.1): platform, application, framework."""

    name: str
    pool_hosts: np.ndarray  # global indices of the servers that may host a VM (the pool)
    host_rack: np.ndarray  # rack of every host (global index)
    up: np.ndarray  # MB/s of each rack's uplink (out of the rack), after background
    down: np.ndarray  # MB/s of each rack's downlink
    nic: np.ndarray  # MB/s of every host's NIC
    t_map: np.ndarray  # seconds of one map on every host (map_slots running at once)
    t_reduce: np.ndarray  # seconds of one reduce's compute on every host
    write_cap: np.ndarray  # MB/s a reduce's HDFS write gets from its host's disk
    io: np.ndarray  # every host's virtualized-I/O factor: a stream of its VMs moves this much
    maps: int
    reduces: int
    map_slots: int
    reduce_slots: int
    map_out_mb: float  # intermediate MB of one map
    reduce_out_mb: float  # HDFS output MB of one reduce
    replication: int
    parallel_copies: int
    quantum: float = 0.02  # a step of the network model is at least this share of the time
    stagger: bool = True  # copier order: ties counted from the rack after the reduce's
    copier: str = "pool"  # "pool" of parallel_copies copiers, or "rounds" of them

    @property
    def n_racks(self) -> int:
        return len(self.up)


def build_model(
    scenario: Any,
    job: int = 0,
    parallel_copies: int | None = None,
    quantum: float = 0.02,
    copier: str = "pool",
    stagger: bool = True,
) -> TaraModel:
    """Read the prediction's inputs from a scenario (name, path, dict or Scenario).  The
    cluster must provision its VMs (``cluster.provision``): the candidates are the
    servers of its pool, the VM spec its slots.  ``parallel_copies`` overrides the
    framework's copier limit; ``quantum``: the network model's least step, as a share of
    the elapsed time (0: exact stream-completion stepping); ``copier`` / ``stagger``: the
    copier model (module docstring)."""
    if copier not in ("pool", "rounds"):
        raise ValueError(f"copier: must be 'pool' or 'rounds', got {copier!r}")
    sc = load_scenario(scenario)
    prov = sc.cluster.provision
    if prov is None:
        raise ValueError(f"{sc.name}: TARA places provisioned VMs; cluster.provision is missing")
    params = model_params(sc)  # builds the platform's topology (links, disks' data sheets)
    # the topology without the VMs: only hosts, racks and links matter here
    cluster = sc.cluster.model_copy(update={"provision": None})
    topo = build_topology(cluster, sc.hdfs, params, np.random.default_rng(0))
    specs = generate(sc, Streams(0).workload)
    if not 0 <= job < len(specs):
        raise ValueError(f"job: must be in [0, {len(specs) - 1}], got {job}")
    spec = specs[job]
    learned = learn(sc, job)  # the history run's logs (baselines.tara_profile)
    hosts = topo.hosts
    pool = np.array([h.id for h in hosts if h.pool == prov.pool], dtype=np.int64)
    disk = np.array([h.type.disk_mbps for h in hosts])  # data sheet
    racks = topo.racks
    m = TaraModel(
        name=sc.name,
        pool_hosts=pool,
        host_rack=np.array([h.rack.id for h in hosts], dtype=np.int64),
        up=np.array([r.uplink_up.capacity * (1 - r.uplink_up.background) for r in racks]),
        down=np.array([r.uplink_down.capacity * (1 - r.uplink_down.background) for r in racks]),
        nic=np.array([h.nic_down.capacity for h in hosts]),
        write_cap=np.minimum(disk, np.array([h.nic_up.capacity for h in hosts])),
        io=np.ones(len(hosts)),
        map_slots=prov.vm.map_slots,
        reduce_slots=prov.vm.reduce_slots,
        replication=sc.hdfs.replication,
        parallel_copies=int(parallel_copies or params.parallel_copies),
        quantum=float(quantum),
        stagger=bool(stagger),
        copier=copier,
        **_app(learned, hosts, spec.n_maps, spec.n_reduces, spec.input_mb),
    )
    virt = np.array([h.virtualized for h in hosts])
    return replace(m, io=np.where(virt, _calibrate_io(m, learned, hosts, virt), 1.0))


def _app(learned: Learned, hosts: list, maps: int, reduces: int, input_mb: float) -> dict:
    """The application's part of a :class:`TaraModel` from the history run's logs."""
    map_mb = input_mb / max(maps, 1)
    t_map = np.array([learned.map_time(h.type.name, map_mb) for h in hosts])
    out_per_map = map_mb * learned.map_selectivity if map_mb > 0 else learned.map_out_mb
    shuffled = maps * out_per_map / max(reduces, 1)
    speed = np.array([h.type.core_speed for h in hosts])  # data sheet
    return dict(
        t_map=t_map,
        t_reduce=learned.reduce_cpu_s_per_mb * shuffled / speed,
        maps=maps,
        reduces=reduces,
        map_out_mb=out_per_map if reduces else 0.0,
        reduce_out_mb=shuffled * learned.reduce_selectivity if reduces else 0.0,
    )


def _calibrate_io(m: TaraModel, learned: Learned, hosts: list, virt: np.ndarray) -> float:
    """The virtualized-I/O factor at which the engine predicts the history run's measured
    JCT on the history run's placement.  Bisection (the prediction falls as the factor
    grows), clipped to ``IO_RANGE``; 1 without virtualized hosts, reduces or a finished
    history run."""
    h = learned.history
    if not virt.any() or h is None or h.reduces == 0 or not h.jct_s > 0:
        return 1.0
    mh = replace(m, **_app(learned, hosts, h.maps, h.reduces, h.input_mb))
    placed = np.array([h.hosts])

    def err(x: float) -> float:
        return float(predict_batch(replace(mh, io=np.where(virt, x, 1.0)), placed)[0]) - h.jct_s

    lo, hi = IO_RANGE
    if err(hi) >= 0:  # even an unhindered hypervisor predicts the run slower
        return hi
    if err(lo) <= 0:
        return lo
    for _ in range(30):  # bisection to ~1e-9 of the range
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if err(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


_MODELS: dict[str, TaraModel] = {}


def model_for(scenario: Any, job: int = 0, **kw) -> TaraModel:
    """:func:`build_model` (``kw``: its options), cached per process by the scenario's
    content; a :class:`TaraModel` is returned as is."""
    if isinstance(scenario, TaraModel):
        return scenario
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    key = json.dumps([sc.model_dump(mode="json"), job, kw], sort_keys=True)
    if key not in _MODELS:
        _MODELS[key] = build_model(sc, job, **kw)
    return _MODELS[key]


def _per_rack(m: TaraModel, hosts: np.ndarray, values: np.ndarray, how: str = "sum"):
    """Aggregate a per-host value over each candidate's VMs per rack: (C, racks)."""
    c, nr = hosts.shape[0], m.n_racks
    idx = (np.arange(c)[:, None] * nr + m.host_rack[hosts]).ravel()
    vals = values[hosts].ravel()
    if how == "sum":
        return np.bincount(idx, vals, minlength=c * nr).reshape(c, nr)
    out = np.zeros(c * nr)
    np.maximum.at(out, idx, vals)
    return out.reshape(c, nr)


def _copier_order(out: np.ndarray, stagger: bool) -> np.ndarray:
    """(C, k, b): the k-th source rack a reduce of rack b copies from: largest output
    first, ties by rack id (``stagger``: counted from the rack after b)."""
    c, nr = out.shape
    a = np.arange(nr)
    tie = (a[None, :] - a[:, None] - 1) % nr if stagger else np.broadcast_to(a, (nr, nr))
    keys = (np.broadcast_to(tie, (c, nr, nr)), np.broadcast_to(-out[:, None, :], (c, nr, nr)))
    return np.lexsort(keys, axis=-1).transpose(0, 2, 1)


def _stream_classes(
    m: TaraModel,
    out: np.ndarray,
    nvm: np.ndarray,
    nred: np.ndarray,
    io: np.ndarray,
    wcap: np.ndarray,
    write: bool,
) -> _Flows:
    """The batch's stream classes (:class:`_Flows`): the shuffle's, per source and
    destination rack in copier order, then the HDFS second replicas', per writer and
    replica rack, each with the links it crosses.  ``out``, ``nvm``, ``nred``, ``io`` and
    ``wcap`` are (C, racks): map output MB, VMs, reduces, I/O factor, write cap."""
    c, nr = out.shape
    some = nvm > 0
    # --- shuffle streams (C, a, b): per reduce of rack b, its partition of rack a ---
    vol_s = np.where(some[:, None, :], out[:, :, None] / m.reduces, 0.0)
    n_s = np.broadcast_to(nred[:, None, :], (c, nr, nr))
    # --- HDFS writes (C, b, d): expected share of rack b's second replicas on rack d ---
    others = (nvm.sum(1, keepdims=True) - nvm)[:, :, None]  # DataNodes outside rack b
    p = np.where(others > 0, nvm[:, None, :] / np.maximum(others, 1), 0.0)
    eye = np.eye(nr, dtype=bool)[None]
    p = np.where(eye, np.where(others > 0, 0.0, 1.0), p)  # a single rack: the replica stays
    vol_w = np.where(some[:, :, None] & (p > 0) & write, m.reduce_out_mb, 0.0)
    n_w = nred[:, :, None] * p
    # the shuffle classes in copier order: position k of rack b's row is the k-th source
    # (largest output first, ties by rack id), so "the first pc unfinished" is a cumsum
    order = _copier_order(out, m.stagger)  # (C, k, b): rack b's k-th source
    vol_s = np.take_along_axis(vol_s, order, axis=1)
    ci = np.arange(c)[:, None]
    n_l = 3 * nr + 1  # uplinks, downlinks, NICs of each rack, and a dummy link
    src, dst = order, np.arange(nr)[None, None, :]
    cross = src != dst
    li_s = np.stack(
        np.broadcast_arrays(
            np.where(cross, src, 3 * nr), np.where(cross, nr + dst, 3 * nr), 2 * nr + dst
        ),
        -1,
    ).reshape(c, nr * nr, 3)
    li = np.concatenate([li_s, np.broadcast_to(_incidence(nr), (c, nr * nr, 3))], 1)
    return _Flows(
        vol=np.concatenate([vol_s.reshape(c, -1), vol_w.reshape(c, -1)], 1),
        mult=np.concatenate([n_s.reshape(c, -1), n_w.reshape(c, -1)], 1),
        cap=np.concatenate([np.full((c, nr * nr), INF), np.repeat(wcap, nr, axis=1)], 1),
        io=np.concatenate([np.tile(io, (1, nr)), np.repeat(io, nr, axis=1)], 1),
        idx=(ci[:, :, None] * n_l + li).ravel(),
    )


def predict_batch(m: TaraModel, hosts: np.ndarray) -> np.ndarray:
    """Predicted JCT (s) of each candidate: ``hosts`` is (C, VMs) global host indices."""
    hosts = np.atleast_2d(np.asarray(hosts, dtype=np.int64))
    c, v = hosts.shape
    nr = m.n_racks
    nvm = _per_rack(m, hosts, np.ones(m.t_map.shape))
    # --- maps: waves over all map slots; a rack's share of the output ~ its map rate ---
    rate = _per_rack(m, hosts, m.map_slots / m.t_map)  # maps per second per rack
    slots = m.map_slots * v
    wave_s = slots / rate.sum(1)  # one wave at the candidate's mean map time
    t_maps = np.ceil(m.maps / max(slots, 1)) * wave_s
    if m.reduces == 0:
        return t_maps
    out = m.maps * m.map_out_mb * rate / rate.sum(1, keepdims=True)  # (C, a) MB of rack a
    nred = m.reduces * nvm / v  # reduces per rack (spread over the VMs' reduce slots)
    some = nvm > 0
    mean = np.maximum(nvm, 1)
    io = np.where(some, _per_rack(m, hosts, m.io) / mean, 1.0)
    nic = np.where(some, _per_rack(m, hosts, m.nic), 1.0)  # the rack's VMs' NICs together
    wcap = np.where(some, _per_rack(m, hosts, m.write_cap) / mean, 1.0)
    t_red = _per_rack(m, hosts, m.t_reduce, "max")
    write = m.replication >= 2 and m.reduce_out_mb > 0
    local = np.zeros((c, nr)) if write else m.reduce_out_mb / (wcap * io)
    flows = _stream_classes(m, out, nvm, nred, io, wcap, write)
    links = np.concatenate(
        [
            np.broadcast_to(m.up, (c, nr)),
            np.broadcast_to(m.down, (c, nr)),
            nic,
            np.full((c, 1), INF),
        ],
        1,
    )
    start = np.minimum(wave_s, t_maps)  # the first map outputs exist after one wave
    end = _fluid(m, flows, links, start, t_maps, t_red, nred > 0)
    return np.maximum(np.where(nred > 0, end + local, -INF).max(1), t_maps)


@dataclass(frozen=True)
class _Flows:
    """Stream classes of a batch, (C, F): F = racks² shuffle classes (source a, destination
    b), then racks² write classes (writer b, replica rack d)."""

    vol: np.ndarray  # MB per stream
    mult: np.ndarray  # streams in the class
    cap: np.ndarray  # MB/s at most (a write: its writer's disk)
    io: np.ndarray  # virtualized-I/O factor of the VMs at the ends
    idx: np.ndarray  # (C * F * 3) flat index of each class's three links in ``links``


_INCIDENCE: dict[int, np.ndarray] = {}


def _incidence(nr: int) -> np.ndarray:
    """(racks², 3) links of the write classes (b, d): b's uplink and d's downlink (only
    across racks; else the dummy link 3·racks) and d's NICs."""
    if nr not in _INCIDENCE:
        a, b = np.meshgrid(np.arange(nr), np.arange(nr), indexing="ij")
        cross = a != b
        li = np.stack([np.where(cross, a, 3 * nr), np.where(cross, nr + b, 3 * nr), 2 * nr + b])
        _INCIDENCE[nr] = li.reshape(3, -1).T.copy()
    return _INCIDENCE[nr]


def _fluid(m, fl, links, start, t_maps, t_red, has_red) -> np.ndarray:
    """The stream-based network model: advance every candidate from one stream completion
    to the next (each candidate on its own clock, the batch in one array), by at least
    ``m.quantum`` of the elapsed time (streams due within a step end with it).  Returns
    when each rack's reduces finish writing (C, racks)."""
    c, nr = t_red.shape
    ns = nr * nr
    pc = max(m.parallel_copies, 1)
    idx, cap, io, mult = fl.idx, fl.cap, fl.io, fl.mult
    flat_links = links.ravel()
    rem = fl.vol.copy()
    eps = REL_EPS * fl.vol
    act = np.zeros(rem.shape, dtype=bool)
    wstart = np.full((c, nr), INF)  # when rack b's reduces start writing
    wend = np.full((c, nr), INF)
    started = np.zeros((c, ns), dtype=bool)  # write classes whose writers are writing
    rounds = m.copier == "rounds"
    group = np.arange(nr) // pc  # copier round of each position in copier order
    n_groups = group[-1] + 1
    cur = np.zeros((c, nr), dtype=np.int64)  # current round of rack b's reduces
    t = start.astype(float).copy()
    live = np.ones(c, dtype=bool)
    while live.any():
        # a reduce's pc copiers fetch from the first unfinished sources in copier order
        u = rem[:, :ns].reshape(c, nr, nr) > 0
        if rounds:  # the sources of the current round: positions [cur·pc, (cur+1)·pc)
            while True:
                left = (u & (group[None, :, None] == cur[:, None, :])).any(1)
                step = ~left & (cur < n_groups)
                if not step.any():
                    break
                cur += step
            act[:, :ns] = (u & (group[None, :, None] == cur[:, None, :])).reshape(c, ns)
        else:
            act[:, :ns] = (u & (np.cumsum(u, axis=1) <= pc)).reshape(c, ns)
        act[:, ns:] = (rem[:, ns:] > 0) & started
        w = act * mult
        cnt = np.bincount(idx, np.repeat(w.ravel(), 3), minlength=flat_links.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = (flat_links / cnt)[idx].reshape(c, -1, 3).min(2)
            rate = np.minimum(share, cap) * io
            ttf = np.where(act, rem / rate, INF)
        pending = np.where(wstart > t[:, None], wstart - t[:, None], INF).min(1)
        dt = np.minimum(np.maximum(ttf.min(1), m.quantum * t), pending)
        dt = np.where(live & np.isfinite(dt), dt, 0.0)
        t += dt
        with np.errstate(invalid="ignore"):  # idle classes may have an infinite rate
            rem -= np.where(act, rate * dt[:, None], 0.0)
        # streams due within this step end with it
        rem[(rem <= eps) | (ttf <= dt[:, None] * (1.0 + REL_EPS))] = 0.0
        copied = has_red & np.isinf(wstart) & (rem[:, :ns].reshape(c, nr, nr).sum(1) <= 0)
        if copied.any():
            wstart = np.where(copied, np.maximum(t, t_maps)[:, None] + t_red, wstart)
        started = np.repeat(t[:, None] >= wstart, nr, axis=1)
        written = (rem[:, ns:].reshape(c, nr, nr).sum(2) <= 0) & (wstart <= t[:, None])
        wend = np.where(written & np.isinf(wend), t[:, None], wend)
        live &= ~np.all(~has_red | np.isfinite(wend), axis=1) & (dt > 0)
    return wend


def hosts_array(m: TaraModel, placement) -> np.ndarray:
    """A placement (host indices, one per VM) as an int array, checked against the pool."""
    hosts = np.asarray(placement, dtype=np.int64)
    if hosts.ndim != 1 or hosts.size == 0:
        raise ValueError(f"placement: must be a non-empty list of host indices, got {placement!r}")
    bad = ~np.isin(hosts, m.pool_hosts)
    if bad.any():
        raise ValueError(
            f"placement: host {int(hosts[bad][0])} is not a server of the provision pool of "
            f"{m.name}"
        )
    return hosts


def predict_jct(scenario: Any, placement, job: int = 0, **kw) -> float:
    """TARA's predicted completion time (s) of job ``job`` of ``scenario`` when its VMs
    run on the hosts ``placement`` (one global host index per VM, as
    ``cluster.provision.hosts`` takes them).  ``scenario`` may be a prepared
    :class:`TaraModel` (then ``job`` and ``kw`` are its own); ``kw``: the options of
    :func:`build_model` (``parallel_copies``, ``quantum``, ``copier``, ``stagger``)."""
    m = model_for(scenario, job, **kw)
    return float(predict_batch(m, hosts_array(m, placement)[None, :])[0])
