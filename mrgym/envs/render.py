"""Text and image views of the cluster: racks, hosts, VMs, slot occupancy, the job queue."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mrgym.sim.jobs import MAP, REDUCE

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _slot_marks(vm, job_letter) -> tuple[str, str]:
    maps = [job_letter(a.task.job.id) for a in vm.running if a.task.kind == MAP]
    reds = [job_letter(a.task.job.id).lower() for a in vm.running if a.task.kind == REDUCE]
    return ("".join(maps) + "." * vm.free_map, "".join(reds) + "." * vm.free_reduce)


def render_ansi(env) -> str:
    view = env.view
    if view is None:
        return "(call reset() first)"
    order = {j.id: i for i, j in enumerate(view.jobs)}

    def letter(jid: int) -> str:
        i = order.get(jid)
        return "?" if i is None else LETTERS[i % 26]

    lines = [
        f"t={view.now:9.1f}s  jobs done {view.n_completed}/{len(view.all_jobs)}  "
        f"pending maps {view.n_pending_maps}  ready reduces {view.n_ready_reduces}  running {view.n_running}"
    ]
    for rack in view.topology.racks:
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
            for j in view.jobs[:12]
        )
    )
    if env._vm is not None:
        # the job slots are the jobs that can launch something on this VM (not the queue's
        # head): show which queue letters the actions 3i.. refer to
        slots = " ".join(f"{i}={letter(j.id)}" for i, j in enumerate(env._slots)) or "none"
        lines.append(f"decision: {env._kind} slot of {env._vm.name}  job slots: {slots}")
    return "\n".join(lines)


# -- rgb_array -----------------------------------------------------------------------------
# The image is laid out in data units: a slot is a 1 x 1 cell; a VM box holds its map slots
# (squares, top row) and reduce slots (circles, bottom row); a host box holds its VMs side
# by side; hosts stack down a rack column (wrapping into several columns for big racks),
# and racks sit side by side (wrapping into rows of racks).  Matplotlib (Agg) draws it on a
# canvas of a fixed pixel size, so every frame of an environment has the same shape.
FRAME_PX = (1280, 800)  # width, height of every rgb_array frame
_DPI = 100
_HOSTS_PER_COLUMN = 12
_CELL = 1.0
_VM_PAD = 0.25
_HOST_LABEL_W = 2.6
_FREE = "#ffffff"
_DOWN = "#4d4d4d"
_NATIVE_FILL = "#fbf3dc"
_VIRTUAL_FILL = "#e3eef9"
_DECISION = "#d62728"
_EVICTING = "#ff7f0e"
_WEB_OK = "#8fd18f"
_WEB_SLA = "#f08080"
_DATANODE = "#d0d0d0"


def _vm_width(vm) -> float:
    if vm.is_worker:
        return max(vm.map_slots, vm.reduce_slots, 1) * _CELL + 2 * _VM_PAD
    return 1.6 * _CELL  # a DataNode-only or interactive VM: a small labelled box


def _host_width(h) -> float:
    return _HOST_LABEL_W + sum(_vm_width(v) + _VM_PAD for v in h.vms) + _VM_PAD


_HOST_H = 2 * _CELL + 3 * _VM_PAD  # two slot rows inside a VM box, plus margins
_HOST_GAP = 0.35
_RACK_PAD = 0.6
_RACK_TITLE = 1.4


class _Layout:
    """Positions of racks, hosts and VMs (static for an episode: computed once)."""

    def __init__(self, topo):
        self.racks = []  # (rack, x, y, w, h)
        self.hosts = []  # (host, x, y, w)
        host_w = max((_host_width(h) for h in topo.hosts), default=4.0)
        blocks = []
        for rack in topo.racks:
            n = len(rack.hosts)
            cols = max(1, math.ceil(n / _HOSTS_PER_COLUMN))
            rows = max(1, math.ceil(n / cols))
            w = cols * host_w + (cols - 1) * _RACK_PAD + 2 * _RACK_PAD
            h = rows * (_HOST_H + _HOST_GAP) - _HOST_GAP + 2 * _RACK_PAD + _RACK_TITLE
            blocks.append((rack, cols, rows, w, h))
        # racks side by side, wrapped into rows so the drawing keeps the frame's aspect
        widest = max((b[3] for b in blocks), default=1.0)
        tallest = max((b[4] for b in blocks), default=1.0)
        # the drawing area (axes) is 0.73 x 0.86 of the frame: pick the racks per row that
        # lets the cells be largest
        area_w, area_h = 0.73 * FRAME_PX[0], 0.86 * FRAME_PX[1]
        per_row, best = 1, 0.0
        for k in range(1, len(blocks) + 1):
            rows_k = math.ceil(len(blocks) / k)
            scale = min(area_w / (k * (widest + 1.0)), area_h / (rows_k * (tallest + 1.0)))
            if scale > best:
                per_row, best = k, scale
        gap = 1.0
        for i, (rack, _cols, rows, _w, _h) in enumerate(blocks):
            x0 = (i % per_row) * (widest + gap)
            y0 = (i // per_row) * (tallest + gap)
            self.racks.append((rack, x0, y0, widest, tallest))
            for j, host in enumerate(rack.hosts):
                c, r = divmod(j, rows)
                hx = x0 + _RACK_PAD + c * (host_w + _RACK_PAD)
                hy = y0 + _RACK_TITLE + _RACK_PAD + r * (_HOST_H + _HOST_GAP)
                self.hosts.append((host, hx, hy, host_w))
        n_rows = math.ceil(len(blocks) / per_row) if blocks else 1
        self.width = min(per_row, max(len(blocks), 1)) * (widest + gap) - gap
        self.height = n_rows * (tallest + gap) - gap
        self.n_cells = sum(v.map_slots + v.reduce_slots for v in topo.vms)


def _job_colour(position: int):
    """Colour of the job at this queue position (the same position as its letter), so
    that a frame's colours are as distinct as its letters."""
    import matplotlib

    if position < 10:
        return matplotlib.colormaps["tab10"](position)
    return matplotlib.colormaps["tab20"](2 * ((position - 10) % 10) + 1)  # lighter shades


def render_rgb(env) -> np.ndarray:
    """The cluster as an image (uint8, FRAME_PX[1] x FRAME_PX[0] x 3): racks boxed and
    named, each host a box with its VMs, map slots as squares (top row) and reduce slots
    as circles (bottom row), filled with the colour of the job running there (white:
    free), the requesting VM outlined in red, and a legend of the colours and jobs."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    view = env.view
    fig = Figure(figsize=(FRAME_PX[0] / _DPI, FRAME_PX[1] / _DPI), dpi=_DPI)
    if view is None:
        fig.text(0.5, 0.5, "(call reset() first)", ha="center", va="center")
        return _to_array(fig)
    layout = env._render_layout if env._render_layout_view is view else None
    if layout is None:  # the topology is static for an episode: lay it out once
        layout = env._render_layout = _Layout(view.topology)
        env._render_layout_view = view
    ax = fig.add_axes((0.01, 0.01, 0.73, 0.86))
    ax.set_xlim(-0.5, layout.width + 0.5)
    ax.set_ylim(layout.height + 0.5, -0.5)  # y grows downwards, like the text view
    ax.set_aspect("equal", adjustable="box", anchor="NW")
    ax.axis("off")
    scene = _Scene(
        small=layout.n_cells <= 800,  # letters and host names only where they stay legible
        font=7 if layout.n_cells <= 300 else 5,
        order={j.id: i for i, j in enumerate(view.jobs)},
    )
    for rack, x, y, w, h in layout.racks:
        scene.box(Rectangle((x, y), w, h), "none", "#333333")
        scene.texts.append((x + 0.4, y + 0.9, rack.name, {"fontsize": 9, "weight": "bold"}))
    for host, hx, hy, hw in layout.hosts:
        _draw_host(scene, view, host, hx, hy, hw, env._vm)
    _add_scene(ax, scene)
    _title(fig, view, env)
    _legends(fig, view)
    return _to_array(fig)


@dataclass
class _Scene:
    """What one frame draws, collected first and added as two collections (fast)."""

    small: bool  # room for letters and names
    font: int
    order: dict[int, int]  # job id -> queue position (its letter and colour)
    boxes: list = field(default_factory=list)
    box_fc: list = field(default_factory=list)
    box_ec: list = field(default_factory=list)
    cells: list = field(default_factory=list)
    cell_fc: list = field(default_factory=list)
    texts: list = field(default_factory=list)  # (x, y, text, kwargs)
    decision_box: tuple[float, float, float, float] | None = None

    def box(self, patch, fc, ec) -> None:
        self.boxes.append(patch)
        self.box_fc.append(fc)
        self.box_ec.append(ec)


def _draw_host(scene: _Scene, view, host, hx: float, hy: float, hw: float, decision) -> None:
    """A host's box and name, then its VMs side by side."""
    from matplotlib.patches import Rectangle

    fill = _VIRTUAL_FILL if host.virtualized else _NATIVE_FILL
    fc = fill if host.alive else _DOWN
    scene.box(Rectangle((hx, hy), hw, _HOST_H), fc, _EVICTING if host.evicting else "#777777")
    if scene.small:
        kw = {"fontsize": scene.font, "va": "center"}
        scene.texts.append((hx + 0.2, hy + _HOST_H / 2, host.name, kw))
    vx = hx + _HOST_LABEL_W
    for vm in host.vms:
        vw = _vm_width(vm)
        vy = hy + _VM_PAD
        if vm.is_worker:
            _draw_worker(scene, host, vm, vx, vy, vw)
        else:
            _draw_other_vm(scene, view, host, vm, vx, vy, vw)
        if vm is decision:
            scene.decision_box = (vx - 0.12, vy - 0.12, vw + 0.24, 2 * _CELL + 0.49)
        vx += vw + _VM_PAD


def _draw_worker(scene: _Scene, host, vm, vx: float, vy: float, vw: float) -> None:
    """A worker VM: its map slots (squares, top row) and reduce slots (circles, below),
    each filled with its job's colour and, where there is room, lettered."""
    from matplotlib.patches import Circle, Rectangle

    box_fc = "#ffffff" if host.alive and vm.alive else _DOWN
    scene.box(Rectangle((vx, vy), vw, 2 * _CELL + _VM_PAD), box_fc, "#555555")
    maps = [a for a in vm.running if a.task.kind == MAP]
    reds = [a for a in vm.running if a.task.kind != "map"]
    for row, (n_slots, busy) in enumerate(((vm.map_slots, maps), (vm.reduce_slots, reds))):
        cy = vy + _VM_PAD / 2 + row * (_CELL + _VM_PAD / 2)
        for k in range(n_slots):
            cx = vx + _VM_PAD + k * _CELL
            job = busy[k].task.job.id if k < len(busy) else None
            fc = _job_colour(scene.order.get(job, 25)) if job is not None else _FREE
            if row == 0:
                scene.cells.append(Rectangle((cx + 0.08, cy + 0.08), 0.84, 0.84))
            else:
                scene.cells.append(Circle((cx + 0.5, cy + 0.5), 0.43))
            scene.cell_fc.append(fc)
            if scene.small and job is not None:
                _letter(scene, cx, cy, job, fc, upper=row == 0)


def _letter(scene: _Scene, cx: float, cy: float, job: int, fc, upper: bool) -> None:
    """The job's queue letter in its slot (A: a map, a: a reduce), in ink that reads on
    the slot's colour."""
    i = scene.order.get(job)
    mark = "?" if i is None else LETTERS[i % 26]
    r, g, b = fc[:3]
    ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.55 else "black"
    kw = {"fontsize": scene.font - 1, "ha": "center", "va": "center", "color": ink}
    kw["weight"] = "bold"
    scene.texts.append((cx + 0.5, cy + 0.52, mark if upper else mark.lower(), kw))


def _draw_other_vm(scene: _Scene, view, host, vm, vx: float, vy: float, vw: float) -> None:
    """An interactive VM (green within its SLA, red past it) or a DataNode-only one."""
    from matplotlib.patches import Rectangle

    app = view.interactive_app(vm)
    if app is not None:
        ok = app.response_s() <= app.spec.sla_s
        fc, label = (_WEB_OK if ok else _WEB_SLA), "web"
    else:
        fc, label = _DATANODE, "dn"
    scene.box(Rectangle((vx, vy), vw, 2 * _CELL + _VM_PAD), fc if host.alive else _DOWN, "#555555")
    if scene.small:
        kw = {"fontsize": scene.font - 1, "ha": "center", "va": "center"}
        scene.texts.append((vx + vw / 2, vy + _CELL + _VM_PAD / 2, label, kw))


def _add_scene(ax, scene: _Scene) -> None:
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    lw = 0.6 if scene.small else 0.3
    ax.add_collection(
        PatchCollection(
            scene.boxes, facecolors=scene.box_fc, edgecolors=scene.box_ec, linewidths=lw, zorder=1
        )
    )
    if scene.decision_box is not None:  # on top of everything, thick: the eye finds it first
        x, y, w, h = scene.decision_box
        ax.add_patch(
            Rectangle((x, y), w, h, fill=False, edgecolor=_DECISION, linewidth=2.0, zorder=4)
        )
    ax.add_collection(
        PatchCollection(
            scene.cells, facecolors=scene.cell_fc, edgecolors="#555555", linewidths=lw, zorder=2
        )
    )
    for x, y, t, kw in scene.texts:
        ax.text(x, y, t, zorder=3, **kw)


def _title(fig, view, env) -> None:
    """What, when, who asks."""
    sc = view.scenario
    decision = env._vm
    who = "episode over" if decision is None else f"decision: {env._kind} slot of {decision.name}"
    fig.suptitle(
        f"{sc.name} (seed {view.seed})   t = {view.now:,.0f} s   jobs done "
        f"{view.n_completed} of {len(view.all_jobs)}"
        f"   running {view.n_running}   pending maps {view.n_pending_maps}"
        f"   ready reduces {view.n_ready_reduces}\n{who}",
        x=0.01,
        ha="left",
        fontsize=11,
    )


def _legends(fig, view) -> None:
    """Slot shapes, host kinds and markers; then the job colours."""
    leg = fig.legend(
        handles=_cluster_handles(view),
        loc="upper left",
        bbox_to_anchor=(0.755, 0.90),
        fontsize=8,
        title="cluster",
        title_fontsize=9,
        frameon=False,
    )
    leg._legend_box.align = "left"
    fig.legend(
        handles=_job_handles(view),
        loc="upper left",
        bbox_to_anchor=(0.755, 0.47),
        fontsize=8,
        title="active jobs (arrival order): done maps, reduces",
        title_fontsize=9,
        frameon=False,
    )


def _cluster_handles(view) -> list:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    def slot(marker: str, fc: str, label: str):
        return Line2D([], [], marker=marker, ls="", mfc=fc, mec="#555555", ms=9, label=label)

    handles = [
        slot("s", _FREE, "map slot, free"),
        slot("o", _FREE, "reduce slot, free"),
        slot("s", "#9e9e9e", "busy: job colour (A = map,\n  a = reduce of queue job A)"),
        Patch(fc=_NATIVE_FILL, ec="#777777", label="native host"),
        Patch(fc=_VIRTUAL_FILL, ec="#777777", label="virtualized host (VMs)"),
        Patch(fc=_DOWN, ec="#777777", label="host down (failed / evicted)"),
        Patch(fc="none", ec=_EVICTING, lw=2, label="spot host, eviction notice"),
        Patch(fc="none", ec=_DECISION, lw=2, label="VM asking for a task"),
    ]
    kinds = {view.interactive_app(v) is not None for v in view.topology.vms if not v.is_worker}
    if True in kinds:
        handles += [
            Patch(fc=_WEB_OK, ec="#555555", label="interactive VM, within SLA"),
            Patch(fc=_WEB_SLA, ec="#555555", label="interactive VM, SLA violated"),
        ]
    if False in kinds:
        handles.append(Patch(fc=_DATANODE, ec="#555555", label="DataNode-only VM"))
    return handles


def _job_handles(view) -> list:
    from matplotlib.patches import Patch

    jobs = view.jobs[:14]
    handles = [
        Patch(
            fc=_job_colour(i),
            ec="#555555",
            label=f"{LETTERS[i % 26]} {j.name[:18]}  {j.maps_done}/{len(j.maps)}m "
            f"{j.reduces_done}/{len(j.reduces)}r",
        )
        for i, j in enumerate(jobs)
    ]
    more = len(view.jobs) - len(jobs)
    if more > 0:
        handles.append(Patch(fc="none", ec="none", label=f"... and {more} more"))
    if not handles:
        handles.append(Patch(fc="none", ec="none", label="(no active job)"))
    return handles


def _to_array(fig) -> np.ndarray:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    assert img.shape == (FRAME_PX[1], FRAME_PX[0], 3), img.shape
    return img


def main(argv: list[str] | None = None) -> None:
    """Save one rgb_array frame as a PNG (the README's picture):
    ``python -m mrgym.envs.render --config ila72 --steps 2000 --out docs/render_frame.png``."""
    import argparse

    import gymnasium as gym
    import matplotlib.image

    from mrgym import registry

    p = argparse.ArgumentParser(prog="python -m mrgym.envs.render", description=main.__doc__)
    p.add_argument("--config", default="ila72", help="scenario name or YAML path")
    p.add_argument("--steps", type=int, default=2000, help="decisions before the frame")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policy", default="fair", help="baseline that makes the decisions")
    p.add_argument("--out", default="docs/render_frame.png")
    p.add_argument("--ansi", action="store_true", help="also print the text view")
    a = p.parse_args(argv)
    # the baseline decides as under mrgym.EnvPolicy (its hooks in the env, the closest
    # legal action to each decision), without importing the policy layer
    env = gym.make("MRCluster-v1", config=a.config, render_mode="rgb_array").unwrapped
    scheduler = registry.make(a.policy)
    env.set_hooks(scheduler)
    obs, info = env.reset(seed=a.seed)
    for _ in range(a.steps):
        action, _ = env.closest_action(scheduler.decide(env.decision_context()))
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            break
    frame = env.render()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    matplotlib.image.imsave(a.out, frame)
    if a.ansi:
        print(render_ansi(env))
    print(f"wrote {a.out} ({frame.shape[1]}x{frame.shape[0]}) at t={info['sim_time']:.0f} s")


if __name__ == "__main__":
    main()
