"""HybridMR phase II (Sharma et al., ICDCS'13, §III.B, Algorithm 3): the Dynamic Resource
Manager (DRM) and the Interference Prevention System (IPS) of the virtual cluster.

Each control period (default 3 s, one TaskTracker heartbeat; the paper gives no period)
the :class:`Phase2` controller looks at every virtualized host that runs Hadoop workers:

* **DRM, CPU** (§III.B.1; MROrchestrator [31]).  The LRM's resource profiler measures each
  worker VM's demand: the running compute phases of its tasks, one core each.  The GRM's
  contention detector computes the CPU the host's Hadoop VMs may use without hurting the
  co-hosted interactive VMs at ``target_frac`` of their SLA (the IPS's model below gives
  the host share they need; no limit without interactive VMs), and the performance balancer divides it among the worker VMs: each keeps its static
  share (its vCPUs) and the cores left over go to the "resource-deficit" VMs whose
  demand exceeds their vCPUs (a VM with two compute-bound tasks next to a VM whose tasks
  read or shuffle).  When the budget is below the VMs' static shares they are throttled
  in proportion to demand (never below ``min_cap`` cores).  Caps go out as ``Throttle``.
* **DRM, I/O** (§III.B.1: "we also estimate the I/O interference through an exponential
  regression model, similar to [13]").  The DRM fits ``eff(n) = a + b exp(-k (n - 1))``, a
  disk's aggregate throughput with ``n`` streams relative to one stream, to monitored
  (streams, MB/s) pairs (``scipy.optimize.curve_fit``) and stops new maps from starting
  on a host whose disk would fall below ``io_min_eff`` of its single-stream throughput
  with one more stream (the DRM "monitors the available capacity on each VM to guide the
  placement of MapReduce jobs within the virtual cluster").  An idle disk always takes a
  map (the paper is silent): the fit learns from busy disks only, so a poor one (eff(1) <
  ``io_min_eff``, seen after host failures) would otherwise starve the virtual pool.
* **IPS** (§III.B.2).  The interactive VM's performance model is the linear regression
  of :mod:`baselines.hybridmr_ips` (the co-hosted CPU load it tolerates at its measured
  request rate, fitted to a profiling run's monitoring; :class:`baselines.hybridmr.
  LearnedPhase2`).  This class's own :meth:`Phase2.budget` is the analytic M/M/1-PS
  reference, which reads the app's true service time: no scheduler uses it, and tests
  compare the learned budget with it.  When a measured
  response time leaves its SLA the Arbiter runs Algorithm 3: the tasks interfering with
  it (the compute phases on the host's Hadoop VMs), each with its estimated interference
  (the cores it takes), are reassigned least-interfering first (Min-Min) to the best-fit
  available VM (BestFit bin packing: fewest free slots that still fit, on a virtual host
  without SLA pressure) — killed here, reserved for that VM, and launched there at its
  next heartbeat — until the host's Hadoop demand fits the budget.  Whatever cannot be
  reassigned is handled by the VM: live-migrated to a virtualized host with enough spare
  cores (the migration's pre-copy and downtime cost what the simulator's model says,
  ``Dynamics.migrate``), else paused.  A host under SLA pressure gets no new tasks; a
  paused VM resumes once the response time is back below ``resume_frac`` x SLA and its
  demand fits the budget.

* **DRM, memory** (§III.B.1: "Separate estimation models are built for CPU, memory and
  I/O resource profiles of a task"; the mechanism is deferred to [31]: under Xen, memory
  moves between co-hosted guests only through their balloon drivers).  Only with the simulator's guest page
  caches (``execution.guest_page_cache``); without them a VM has no memory of its own to
  move and ``mem`` does nothing.  The LRM reads each worker VM's memory monitoring (the
  guest's dirty pages, its dirty threshold and the MB its writers were throttled to the
  disk since the last period: ``VmMetrics``).  A VM's pressure is its dirty pages over
  its threshold, plus 1 if its writers were throttled in the last period; one at or above
  ``mem_high`` (1.0: throttled) is memory-deficit, one below ``mem_low`` has memory to
  spare.  Each period the balancer moves ``mem_step_gb`` from the host's most idle Hadoop VM (a worker or, in the split
  architecture, the DataNode VM) to its most pressed deficit one
  (balloon inflated in one, deflated in the other: the host's total is unchanged), never
  leaving a VM below ``mem_floor`` of its configured memory.  The paper's piece-wise
  linear regression of memory [31] is not given; this threshold rule uses the same
  signal.  The interactive VMs' memory is not managed: the simulator's interactive model
  has no memory dependence (its response time depends on CPU only).

Deviations and choices (the paper defers the models to [31] and gives no constants):
``headroom`` 0.2 (the interactive load may grow 20 % within a period), ``target_frac`` 0.5
(aim at half the SLA), ``min_cap`` 0.25
cores, ``io_min_eff`` 0.5, ``resume_frac`` 0.5, ``max_pause_s`` 30 s, reservation lifetime two periods, migration
downtime 1 s.  A VM's cap may exceed its vCPUs up to its host's cores (Xen vCPU hot-plug up
to ``maxvcpus``): with one vCPU per VM, as the paper configures them, no redistribution
between VMs would otherwise be possible.  Memory: ``mem_step_gb`` 0.25 GB (a balloon
moves memory in steps; the paper gives none), ``mem_high`` 1.0 (0.8, a nearly full cache
also counting, did worse on Fig. 8(c)'s mix: -5.1 % vs -4.7 %), ``mem_low`` 0.3,
``mem_floor`` 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import curve_fit

from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import MAP, REDUCE, Balloon, Kill, Migrate, Pause, Resume, Throttle

MANAGED = frozenset({"cpu", "io", "mem"})


def _eff(n, a, b, k):
    return a + b * np.exp(-k * (n - 1.0))


@dataclass
class IoModel:
    """The DRM's exponential I/O interference model of one disk class (ratio to one stream)."""

    a: float = 1.0
    b: float = 0.0
    k: float = 0.0
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    fitted_at: int = 0

    window: int = 2000  # the latest observations only: a refit's cost stays bounded

    def observe(self, streams: int, ratio: float) -> None:
        if streams >= 1 and np.isfinite(ratio):
            self.xs.append(float(streams))
            self.ys.append(float(ratio))
            if len(self.xs) > self.window:
                drop = len(self.xs) - self.window
                del self.xs[:drop], self.ys[:drop]
                self.fitted_at = max(0, self.fitted_at - drop)

    def refit(self, min_new: int = 50) -> None:
        """Least squares on every observation so far, once ``min_new`` arrived since the
        last fit and at least three stream counts were seen."""
        if len(self.xs) - self.fitted_at < min_new or len(set(self.xs)) < 3:
            return
        self.fitted_at = len(self.xs)
        try:
            (a, b, k), _ = curve_fit(
                _eff,
                np.array(self.xs),
                np.array(self.ys),
                p0=(0.3, 0.7, 0.2),
                bounds=([0.0, 0.0, 0.0], [1.5, 1.5, 5.0]),
                maxfev=200,
            )
        except (RuntimeError, ValueError):  # no convergence: keep the previous fit
            return
        self.a, self.b, self.k = float(a), float(b), float(k)

    def efficiency(self, streams: int) -> float:
        return float(_eff(float(streams), self.a, self.b, self.k))


@dataclass
class Phase2:
    """The DRM and IPS of the virtual cluster (module docstring).  Holds ids only."""

    manage: frozenset[str] = MANAGED
    period_s: float = 3.0
    headroom: float = 0.2
    min_cap: float = 0.25
    io_min_eff: float = 0.5
    target_frac: float = 0.5
    resume_frac: float = 0.5
    max_pause_s: float = 30.0
    downtime_s: float = 1.0
    migrate: bool = True
    mem_step_gb: float = 0.25
    mem_high: float = 1.0
    mem_low: float = 0.3
    mem_floor: float = 0.5
    caps: dict[int, float] = field(default_factory=dict)  # vm id -> cap set by Throttle
    paused: dict[int, float] = field(default_factory=dict)  # vm id -> since
    pressured: set[int] = field(default_factory=set)  # host ids under SLA pressure
    moving: dict[int, tuple[int, float]] = field(default_factory=dict)  # vm -> (target, since)
    reserved: dict[tuple[int, str, int], tuple[int, float]] = field(default_factory=dict)
    io: IoModel = field(default_factory=IoModel)
    n_breaches: int = 0
    n_reassigned: int = 0
    n_paused: int = 0
    n_migrated: int = 0
    n_throttles: int = 0
    n_balloons: int = 0
    balloons: dict[int, float] = field(default_factory=dict)  # vm id -> balloon set (GB)
    seen_throttled: dict[int, float] = field(default_factory=dict)  # vm id -> MB last period

    def __post_init__(self) -> None:
        unknown = set(self.manage) - MANAGED
        if unknown:
            raise ValueError(
                f"hybridmr manage: expected a subset of {sorted(MANAGED)}, got {sorted(unknown)}"
            )
        self.manage = frozenset(self.manage)
        for name, lo, hi, lo_open in (
            ("period_s", 0.0, None, True),
            ("headroom", 0.0, None, False),
            ("target_frac", 0.0, 1.0, True),
            ("resume_frac", 0.0, 1.0, True),
            ("min_cap", 0.0, None, True),
            ("io_min_eff", 0.0, 1.0, False),
            ("downtime_s", 0.0, None, False),
            ("max_pause_s", 0.0, None, False),
            ("mem_step_gb", 0.0, None, True),
            ("mem_high", 0.0, 1.0, True),
            ("mem_low", 0.0, 1.0, False),
            ("mem_floor", 0.0, 1.0, False),
        ):
            v = getattr(self, name)
            bad = (
                not np.isfinite(v)
                or (v <= lo if lo_open else v < lo)
                or (hi is not None and v > hi)
            )
            if bad:
                rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]" if hi is not None else None
                want = f"in {rng}" if rng else (f"> {lo:g}" if lo_open else f">= {lo:g}")
                raise ValueError(f"hybridmr {name}: expected a number {want}, got {v!r}")

    # -- monitoring-derived quantities ------------------------------------------------------
    @staticmethod
    def demand(vm) -> float:
        """Cores a worker VM's tasks want now: one per running compute phase (LRM profiler)."""
        return float(sum(1 for a in vm.running if a.work is not None and a.work.kind == "compute"))

    def budget(self, host, view) -> float:
        """Cores the host's Hadoop VMs may use while its interactive VMs meet
        ``target_frac`` x SLA, by the analytic M/M/1-PS model (infinite without interactive
        VMs).  A reference only: it reads the app's true service time, which a scheduler
        cannot measure; :class:`baselines.hybridmr.LearnedPhase2` overrides it with the
        fitted regression, and that is what HybridMR runs.

        A VM served at a fraction ``g`` of its demand answers in ``s / (g - rho0)`` with
        ``rho0 = lambda s / vCPUs`` (load grown by ``headroom``), so it needs
        ``g >= rho0 + s / T``; the host grants ``cores / total demand`` when over-committed."""
        inter = 0.0
        need = 0.0
        for vm in host.vms:
            app = view.interactive_app(vm)
            if app is None:
                continue
            svc = app.spec.service_ms / 1000.0
            lam = app.rps * (1.0 + self.headroom)
            inter += min(vm.vcpus, lam * svc)
            need = max(need, lam * svc / vm.vcpus + svc / (self.target_frac * app.spec.sla_s))
        if need <= 0:
            return float("inf")
        dom0 = view.host_metrics(host).dom0_cpu_cores
        return host.type.cores / min(1.0, need) - inter - dom0

    # -- the control period -----------------------------------------------------------------
    def control(self, view) -> list:
        now = view.now
        acts: list = []
        self._expire(now)
        self._settle(view)
        hosts = [h for h in view.topology.hosts if h.virtualized and h.alive and _workers(h)]
        breached = {h.id for h in hosts if _breach(h, view)}
        self.n_breaches += len(breached - self.pressured)
        for h in hosts:
            hm = view.host_metrics(h)
            if hm.disk_streams >= 1 and h.disk.capacity > 0:
                self.io.observe(hm.disk_streams, hm.io_mbps / h.disk.capacity)
        if "io" in self.manage:
            self.io.refit()
        for h in hosts:
            budget = self.budget(h, view)
            if h.id in breached:
                self.pressured.add(h.id)
                acts += self._arbitrate(h, budget, view, breached)
            elif h.id in self.pressured and _calm(h, view, self.resume_frac):
                self.pressured.discard(h.id)
            acts += self._resume(h, budget, view)
            if "cpu" in self.manage:
                acts += self._balance(h, budget)
            if "mem" in self.manage:
                acts += self._balance_memory(h, view)
        return acts

    def _balance_memory(self, host, view) -> list:
        """DRM, memory: one balloon step from the most idle donor to the most pressed
        memory-deficit worker VM of ``host`` (module docstring), from monitoring only."""
        press: dict[int, float] = {}
        # the host's Hadoop VMs: its workers and, in the split architecture, its DataNode
        # VM, whose cache takes every HDFS replica written to the host
        vms = {
            vm.id: vm
            for vm in host.vms
            if vm.memory_gb > 0 and vm.alive and view.interactive_app(vm) is None
        }
        for vid, vm in vms.items():
            m = view.vm_metrics(vm)
            if m.dirty_limit_mb <= 0 and m.dirty_mb <= 0 and m.throttled_mb <= 0:
                continue  # no guest page cache to read (guest_page_cache off)
            throttled = m.throttled_mb - self.seen_throttled.get(vid, 0.0)
            self.seen_throttled[vid] = m.throttled_mb
            fill = m.dirty_mb / m.dirty_limit_mb if m.dirty_limit_mb > 0 else 1.0
            press[vid] = fill + (1.0 if throttled > 0 else 0.0)
        if len(press) < 2:
            return []
        need = max(press, key=lambda v: (press[v], -v))
        give = min(press, key=lambda v: (press[v], v))
        if press[need] < self.mem_high or press[give] >= self.mem_low:
            return []
        step = self.mem_step_gb
        donor, taker = vms[give], vms[need]
        room = donor.memory_gb * (1.0 - self.mem_floor) - self.balloons.get(give, 0.0)
        # a guest can grow only up to its maxmem (here twice its memory: Dynamics clamps)
        headroom = taker.memory_gb + self.balloons.get(need, 0.0)
        if room < step - 1e-9 or headroom < step - 1e-9:
            return []
        acts = []
        for vid, delta in ((give, step), (need, -step)):
            self.balloons[vid] = round(self.balloons.get(vid, 0.0) + delta, 6)
            acts.append(Balloon(vid, self.balloons[vid]))
        self.n_balloons += 1
        return acts

    def _balance(self, host, budget: float) -> list:
        """The performance balancer: divide ``budget`` among the host's running worker VMs."""
        vms = [vm for vm in _workers(host) if vm.id not in self.paused]
        if not vms:
            return []
        want = {vm.id: min(host.type.cores, self.demand(vm)) for vm in vms}
        static = sum(vm.vcpus for vm in vms)
        caps: dict[int, float] = {}
        if budget >= static:  # room for every static share: deficit VMs get the rest
            spare = min(budget, host.type.cores) - sum(min(vm.vcpus, want[vm.id]) for vm in vms)
            extra = {vm.id: max(0.0, want[vm.id] - vm.vcpus) for vm in vms}
            need = sum(extra.values())
            for vm in vms:
                give = extra[vm.id] * min(1.0, max(0.0, spare) / need) if need > 0 else 0.0
                caps[vm.id] = vm.vcpus + give
        else:  # contention with the interactive VMs: max-min fair caps summing to the budget
            caps = _water_fill(want, max(budget, self.min_cap * len(vms)), self.min_cap)
        acts = []
        for vm in vms:
            cap = None if abs(caps[vm.id] - vm.vcpus) < 1e-6 else round(caps[vm.id], 6)
            if cap != self.caps.get(vm.id):
                acts.append(Throttle(vm.id, cap))
                self.n_throttles += 1
                if cap is None:
                    self.caps.pop(vm.id, None)
                else:
                    self.caps[vm.id] = cap
        return acts

    def _arbitrate(self, host, budget: float, view, breached: set[int]) -> list:
        """Algorithm 3: reassign the interfering tasks, then migrate or pause what is left."""
        acts: list = []
        load = sum(self.demand(vm) for vm in _workers(host) if vm.id not in self.paused)
        floor = 0.0 if "cpu" not in self.manage else self.min_cap * len(_workers(host))
        if load <= max(budget, floor) and "cpu" in self.manage:
            return acts  # throttling alone restores the SLA (the balancer's caps)
        # lines 1-2: the interfering tasks and their estimated interference (cores taken)
        tasks = sorted(
            (
                (a.work.cores, a.task.job.id, a.task.kind, a.task.index, a)
                for vm in _workers(host)
                for a in vm.running
                if a.work is not None and a.work.kind == "compute" and not a.speculative
            ),
            key=lambda t: t[:4],
        )
        free = _available(view, breached | self.pressured, self.paused)  # line 3
        while tasks and load > budget:  # lines 4-9
            cores, job_id, kind, index, att = tasks.pop(0)  # Min-Min: least interfering
            best = _best_fit(free, kind)  # lines 5-6
            if best is None:
                tasks.insert(0, (cores, job_id, kind, index, att))
                break
            free[best][0 if kind == MAP else 1] -= 1  # line 8: adjust VM_best's resources
            self.reserved[(job_id, str(kind), index)] = (best, view.now)
            acts.append(Kill(job_id, kind, index))
            self.n_reassigned += 1
            load -= max(1.0, cores)
        if load > budget:
            acts += self._evict(host, view, breached)
        return acts

    def _evict(self, host, view, breached: set[int]) -> list:
        """Live-migrate the busiest worker VM to a virtualized host with spare cores, else
        pause it (§III.B: "the VM running the task can ... be paused, or ... migrated")."""
        busy = sorted(
            (
                vm
                for vm in _workers(host)
                if vm.id not in self.paused and vm.id not in self.moving and vm.running
            ),
            key=lambda v: (-self.demand(v), v.id),
        )
        if not busy:
            return []
        vm = busy[0]
        if self.migrate:
            need = self.demand(vm)
            incoming: dict[int, float] = {}  # demand already on its way to a host
            for vid, (hid, _) in self.moving.items():
                incoming[hid] = incoming.get(hid, 0.0) + self.demand(view.topology.vms[vid])
            for h in view.topology.hosts:
                if (
                    h is host
                    or not h.virtualized
                    or not h.alive
                    or h.id in breached
                    or h.id in self.pressured
                    or h.pool != host.pool
                ):
                    continue
                used = sum(self.demand(v) for v in _workers(h)) + incoming.get(h.id, 0.0)
                if self.budget(h, view) - used >= need + self.min_cap:
                    self.n_migrated += 1
                    self.moving[vm.id] = (h.id, view.now)
                    return [Migrate(vm.id, h.id, self.downtime_s)]
        self.paused[vm.id] = view.now
        self.n_paused += 1
        return [Pause(vm.id)]

    def _resume(self, host, budget: float, view) -> list:
        """Resume a paused VM once its host is calm and the budget has room for it (with CPU
        managed the balancer then caps it); a VM paused ``max_pause_s`` that still does not
        fit has its tasks reassigned (killed, so Hadoop runs them elsewhere) and resumes."""
        if host.id in self.pressured:
            return []
        acts: list = []
        for vm in _workers(host):
            since = self.paused.get(vm.id)
            if since is None:
                continue
            others = sum(self.demand(v) for v in _workers(host) if v is not vm)
            room = budget - others
            fits = room >= self.min_cap if "cpu" in self.manage else self.demand(vm) <= room
            if not fits and view.now - since < self.max_pause_s:
                continue
            if not fits:
                for a in list(vm.running):
                    acts.append(Kill(a.task.job.id, a.task.kind, a.task.index))
                    self.n_reassigned += 1
            del self.paused[vm.id]
            acts.append(Resume(vm.id))
        return acts

    def _settle(self, view) -> None:
        """Forget migrations that arrived, whose VM died, or that take over 10 minutes
        (the simulator aborted them: an end host failed)."""
        for vid, (hid, since) in list(self.moving.items()):
            vm = view.topology.vms[vid]
            if vm.host.id == hid or not vm.alive or view.now - since > 600.0:
                del self.moving[vid]

    def _expire(self, now: float) -> None:
        for key, (_, t) in list(self.reserved.items()):
            if now - t > 2 * self.period_s:
                del self.reserved[key]

    # -- decisions ---------------------------------------------------------------------------
    def reserved_for(self, ctx):
        """A task Algorithm 3 reassigned to this VM that is pending again, or None."""
        vm_id = ctx.vm.id
        for (job_id, kind, index), (vid, _) in list(self.reserved.items()):
            if vid != vm_id or kind != str(ctx.slot_kind):
                continue
            del self.reserved[(job_id, kind, index)]
            job = next((j for j in ctx.jobs if j.id == job_id), None)
            if job is None or not ctx.can_launch(job, ctx.slot_kind):
                continue
            task = (job.maps if kind == str(MAP) else job.reduces)[index]
            if task.state == PENDING and not task.running:  # pending again after the kill
                return job_id, index
        return None

    def admits(self, ctx) -> bool:
        """May a new task start on this VM (no SLA pressure; the disk can take a map)?"""
        host = ctx.vm.host
        if host.id in self.pressured or ctx.vm.id in self.paused:
            return False
        if "io" in self.manage and ctx.slot_kind == MAP and host.virtualized:
            streams = ctx.view.host_metrics(host).disk_streams
            # an idle disk always takes a map: a poor fit must not close it (module docstring)
            return streams == 0 or self.io.efficiency(streams + 1) >= self.io_min_eff
        return True


def _water_fill(want: dict[int, float], budget: float, floor: float) -> dict[int, float]:
    """Max-min fair shares of ``budget`` for demands ``want`` (every VM at least ``floor``);
    what no demand takes is split evenly, so a VM whose tasks start later has room."""
    caps = {v: floor for v in want}
    left = budget - floor * len(want)
    open_ = sorted(want, key=lambda v: (want[v], v))
    while open_ and left > 1e-12:
        share = left / len(open_)
        v = open_[0]
        take = min(share, max(0.0, want[v] - caps[v]))
        if take < share:  # v is satisfied: the others split what it leaves
            caps[v] += take
            left -= take
            open_.pop(0)
        else:
            for u in open_:
                caps[u] += share
            left = 0.0
    if left > 1e-12:
        for v in caps:
            caps[v] += left / len(caps)
    return caps


def _workers(host) -> list:
    return [vm for vm in host.vms if vm.alive and (vm.map_slots or vm.reduce_slots)]


def _breach(host, view) -> bool:
    for vm in host.vms:
        r = view.response_time_s(vm)
        if r is not None and r > view.interactive_app(vm).spec.sla_s:
            return True
    return False


def _calm(host, view, frac: float) -> bool:
    for vm in host.vms:
        r = view.response_time_s(vm)
        if r is not None and r > frac * view.interactive_app(vm).spec.sla_s:
            return False
    return True


def _available(view, breached: set[int], paused: dict) -> dict[int, list[int]]:
    """Free map/reduce slots of the worker VMs on virtualized hosts without SLA trouble."""
    out = {}
    for h in view.topology.hosts:
        if not h.virtualized or not h.alive or h.id in breached:
            continue
        for vm in _workers(h):
            if vm.id not in paused and (vm.free_map > 0 or vm.free_reduce > 0):
                out[vm.id] = [vm.free_map, vm.free_reduce]
    return out


def _best_fit(free: dict[int, list[int]], kind) -> int | None:
    """BestFit bin packing: the VM with the fewest free slots of the kind that still fits."""
    i = 0 if kind == MAP else 1
    fits = [(slots[i], vid) for vid, slots in free.items() if slots[i] > 0]
    return min(fits)[1] if fits else None


__all__ = ["Phase2", "IoModel", "MANAGED", "REDUCE"]
