"""Text and image views of the cluster: racks, hosts, VMs, slot occupancy, the job queue."""

from __future__ import annotations

import numpy as np

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _slot_marks(vm, job_letter) -> tuple[str, str]:
    maps = [job_letter(a.task.job.id) for a in vm.running if a.task.kind == "map"]
    reds = [job_letter(a.task.job.id).lower() for a in vm.running if a.task.kind == "reduce"]
    return ("".join(maps) + "." * vm.free_map, "".join(reds) + "." * vm.free_reduce)


def render_ansi(env) -> str:
    sim = env.sim
    if sim is None:
        return "(call reset() first)"
    order = {j.id: i for i, j in enumerate(sim.active_list)}

    def letter(jid: int) -> str:
        i = order.get(jid)
        return "?" if i is None else LETTERS[i % 26]

    lines = [
        f"t={sim.env.now:9.1f}s  jobs done {sim.n_completed}/{len(sim.jobs)}  "
        f"pending maps {sim.n_pending_maps}  ready reduces {sim.n_ready_reduces}  running {sim.n_running}"
    ]
    for rack in sim.topo.racks:
        lines.append(f"{rack.name}:")
        for h in rack.hosts:
            flag = "x" if not h.alive else ("!" if h.evicting else " ")
            vms = []
            for vm in h.vms:
                if not vm.is_worker:
                    continue
                m, r = _slot_marks(vm, letter)
                mark = "*" if env._vm is vm else " "
                vms.append(f"{mark}[{m}|{r}]")
            lines.append(f" {flag}{h.name:<5} {h.type.name:<14} {' '.join(vms)}")
    lines.append(
        "queue: "
        + "  ".join(
            f"{letter(j.id)}={j.name}({j.maps_done}/{len(j.maps)}m {j.reduces_done}/{len(j.reduces)}r)"
            for j in sim.active_list[:12]
        )
    )
    if env._vm is not None:
        # the job slots are the jobs that can launch something on this VM (not the queue's
        # head): show which queue letters the actions 3i.. refer to
        slots = " ".join(f"{i}={letter(j.id)}" for i, j in enumerate(env._slots)) or "none"
        lines.append(f"decision: {env._kind} slot of {env._vm.name}  job slots: {slots}")
    return "\n".join(lines)


def render_rgb(env) -> np.ndarray:
    """One row per host, one cell per slot, coloured by job (grey: free, black: down)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = env.sim
    hosts = sim.topo.hosts
    width = max((sum(v.map_slots + v.reduce_slots for v in h.vms) for h in hosts), default=1) or 1
    grid = np.full((len(hosts), width, 3), 0.85)
    cmap = plt.get_cmap("tab20")
    order = {j.id: i for i, j in enumerate(sim.active_list)}
    for r, h in enumerate(hosts):
        c = 0
        for vm in h.vms:
            busy = [a for a in vm.running]
            for k in range(vm.map_slots + vm.reduce_slots):
                if not h.alive:
                    grid[r, c] = (0, 0, 0)
                elif k < len(busy):
                    grid[r, c] = cmap(order.get(busy[k].task.job.id, 0) % 20)[:3]
                c += 1
    fig, ax = plt.subplots(figsize=(6, max(2.0, 0.25 * len(hosts))), dpi=80)
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    ax.set_xlabel("slot")
    ax.set_ylabel("host")
    ax.set_title(f"t = {sim.env.now:.0f} s, {sim.n_completed}/{len(sim.jobs)} jobs done")
    fig.tight_layout()
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return img
