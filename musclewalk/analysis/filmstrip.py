"""Side-view filmstrip of a simulation folder: the skeleton every `every` seconds, drawn where it
was (so the strip reads left to right as the creature moves), right side red, left side blue,
the rest grey, the centre of mass as dots coloured by time. Meant for a first look at a gait:
where the feet land, how the knees bend, when and how a run falls.

Positions come from kinematics.mot and the model the run used (post-processing, not simulation).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..opensim_env import import_opensim
from ..sim.outputs import read_storage
from .gait import coordinate_rows, model_joints
from .render import side_from_name
from .summary import read_run_summary


def skeleton_frames(sim_dir, every: float = 0.1, window: tuple | None = None) -> dict:
    """{"time": (n,), "segments": (n, k, 2, 3) segment end points in ground, "side": k labels
    ('r', 'l', ''), "com": (n, 3)}; segments join each body's origin to its children's origins
    and each contact sphere to its body."""
    osim = import_opensim()
    sim_dir = Path(sim_dir)
    summary = read_run_summary(sim_dir)
    model = osim.Model(str(summary["model"]))
    state = model.initSystem()
    kin = read_storage(sim_dir / "kinematics.mot")
    rows = coordinate_rows(model, kin, bool(kin.attrs["degrees"]), sim_dir / "kinematics.mot")
    ground = model.getGround()
    edges = []  # (frame A, station A, frame B, station B, side)
    for _, parent, child in model_joints(model):
        if parent.getName() == ground.getName():
            continue
        side = side_from_name(child.getName()) or ""
        edges.append((parent, osim.Vec3(0, 0, 0), child, osim.Vec3(0, 0, 0), side))
    forces = model.getContactGeometrySet()
    for i in range(forces.getSize()):
        sphere = osim.ContactSphere.safeDownCast(forces.get(i))
        if sphere is None:
            continue
        frame = sphere.getFrame().findBaseFrame()
        station = sphere.getFrame().findStationLocationInAnotherFrame(state, sphere.get_location(), frame)
        side = side_from_name(frame.getName()) or ""
        edges.append((frame, osim.Vec3(0, 0, 0), frame, station, side))
    start, end = window if window is not None else (0.0, kin["time"].iloc[-1])
    picks = np.unique(
        np.searchsorted(
            kin["time"].to_numpy(), np.arange(start, min(end, kin["time"].iloc[-1]) + 1e-9, every)
        )
    )
    picks = picks[picks < len(kin)]
    if len(picks) == 0:
        raise ValueError(
            f"--window {start:g},{end:g}: no frame of {sim_dir} in it (the run lasts "
            f"{kin['time'].iloc[-1]:.2f} s)"
        )
    times, segments, com = [], [], []
    for row in picks:
        rows.pose(state, row)
        model.realizePosition(state)
        seg = []
        for a, pa, b, pb, _ in edges:
            seg.append(
                [
                    a.findStationLocationInGround(state, pa).to_numpy(),
                    b.findStationLocationInGround(state, pb).to_numpy(),
                ]
            )
        times.append(float(kin["time"].iloc[row]))
        segments.append(seg)
        com.append(model.calcMassCenterPosition(state).to_numpy())
    return {
        "time": np.array(times),
        "segments": np.array(segments),
        "side": [e[4] for e in edges],
        "com": np.array(com),
    }


def render_filmstrip(sim_dir, out_png, every: float = 0.1, window: tuple | None = None) -> Path:
    from ..model.osim import write_atomic

    out_png = Path(out_png)
    write_atomic(out_png, filmstrip_png(sim_dir, every, window))
    return out_png


def filmstrip_png(sim_dir, every: float = 0.1, window: tuple | None = None) -> bytes:
    """The filmstrip as PNG bytes (the caller decides where and together with what it is
    written)."""
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    frames = skeleton_frames(sim_dir, every, window)
    seg = frames["segments"]
    colors = {"r": "tab:red", "l": "tab:blue", "": "0.35"}
    xs = seg[..., 0].ravel()
    ys = seg[..., 1].ravel()
    width = max(4.0, min(40.0, 1.5 + 3.0 * (xs.max() - xs.min())))
    height = max(2.5, 3.0 * (ys.max() - min(0.0, ys.min())) + 0.8)
    fig, ax = plt.subplots(figsize=(width, height))
    n = len(frames["time"])
    for k in range(n):
        alpha = 0.35 + 0.65 * (k + 1) / n
        for (a, b), side in zip(seg[k], frames["side"]):
            ax.plot([a[0], b[0]], [a[1], b[1]], color=colors[side], lw=1.2, alpha=alpha)
    com = frames["com"]
    sc = ax.scatter(com[:, 0], com[:, 1], c=frames["time"], cmap="viridis", s=10, zorder=3)
    fig.colorbar(sc, ax=ax, label="time, s", fraction=0.03, pad=0.01)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_aspect("equal")
    ax.set_xlabel("forward (ground X), m")
    ax.set_ylabel("up, m")
    summary = read_run_summary(sim_dir)
    end = (
        f"terminated by {summary['termination_reason']} at {summary['simulated_time']:.2f} s"
        if summary["terminated"]
        else f"ran {summary['simulated_time']:.2f} s"
    )
    shown = "" if window is None else f"{frames['time'][0]:.1f}-{frames['time'][-1]:.1f} s shown, "
    ax.set_title(f"{summary['creature']}: every {every:g} s, {shown}{end}", fontsize=9)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
