"""Live migration of a worker VM the way Xen does it (pre-copy, then stop-and-copy;
HybridMR §IV, Fig. 10(b)-(c)).

First the VM's memory image (``vm.memory_gb``) crosses the network from its host to the
target while it keeps running: a flow driven by both Dom0s that shares NICs and uplinks
with Hadoop's traffic, so a VM on a busy cluster takes longer to migrate (Fig. 10(b):
"larger the amount of memory involved, longer is the migration time"; busy VMs longer than
idle ones).  Then it is paused for ``downtime`` (the stop-and-copy), and its running
compute and local I/O continue on the target.  Its DataNode blocks move with its disk
image.  If either host dies during the copy, the copy is cancelled and the VM stays (or,
when its own host died, is lost with it); a VM that dies during the downtime is left
paused until its host is repaired (a repair restarts it fresh).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import Pause, Resume

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.dynamics import Dynamics
    from mrgym.sim.topology import VM, Host


def live_migrate(dyn: Dynamics, vm: VM, target: Host, downtime: float):
    """The migration process (a SimPy generator) of ``vm`` to ``target``."""
    env = dyn.env
    src = vm.host
    links = dyn.topo.path(src, target)
    if links and vm.memory_gb > 0:
        dom0 = tuple(h for h in (src, target) if h.virtualized)
        copy = dyn.engine.flow(links, vm.memory_gb * 1024.0, dom0_hosts=dom0, tag="migrate")
        while not copy.event.triggered:
            # look every heartbeat whether an end host died: the copy would go nowhere
            yield copy.event | env.timeout(dyn.hb)
            if not copy.event.triggered and not (src.alive and target.alive and vm.alive):
                dyn.engine.cancel(copy)
                dyn._migrating.discard(vm.id)
                return
        if not vm.alive or vm.host is not src:
            dyn._migrating.discard(vm.id)
            return
    dyn.apply_control(Pause(vm.id))
    yield env.timeout(downtime)
    dyn._migrating.discard(vm.id)
    if not vm.alive:
        return
    if not target.alive:  # the target failed meanwhile: the VM stays where it was
        dyn.apply_control(Resume(vm.id))
        return
    # every work of a paused VM is suspended (attempts start new ones suspended), so none
    # is on the old host's CPU pool or disk while it moves; a Resume that came during the
    # downtime is overridden (the VM is not runnable mid-copy)
    dyn.apply_control(Pause(vm.id))
    vm.host.vms.remove(vm)
    vm.host = target
    target.vms.append(vm)
    for att in vm.running:
        for w in ([att.work] if att.work else []) + att.works:
            if w.kind == "compute":
                w.host = target
    dyn.topo._path_cache.clear()
    for job in dyn.tracker.active_list:  # host/rack locality of its replicas changed
        for t in job.maps:
            if t.state == PENDING and t.block is not None and vm in t.block.replicas:
                dyn.tracker.index_map(job, t)
    dyn.apply_control(Resume(vm.id))
