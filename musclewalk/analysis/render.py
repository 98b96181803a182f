"""Picture of a creature model in its default pose, like Figure 8 of Geijtenbeek et al. (2013).

:func:`render_model` poses any OpenSim model with OpenSim itself and draws two orthographic views
side by side, at the same scale:

* **side view** - X (forward) to the right, Y up, seen from the creature's right (+Z) side;
  elements on the far (left, -Z) side are drawn fainter and underneath;
* **front view** - looking along -X at the creature's front, Y up, so the creature's right (+Z)
  appears on the viewer's *left*, as in a mirror / anatomical front view (the Z axis runs
  right-to-left; the plot is labelled R and L).

Drawn: body shapes (attached Brick/Sphere/Cylinder/Ellipsoid geometry, as faint silhouettes),
segments (thick grey lines from each body's joint centre to its child joint centres and, for leaf
bodies, to the centre of mass), centres of mass, joints (circles), contact spheres (circles of
their radius), muscle paths (polylines with dots at the active path points: right side red,
left blue, midline purple) and - when the model's metadata sidecar ``MODEL.meta.json`` is present
or passed - the allowed attachment regions of the muscle points (semi-transparent line,
rectangle or box in the body's frame, mapped to the world in the default pose).
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..model.meta import load_meta, meta_path
from ..model.metadata import ModelMeta
from .gait import model_joints

SIDE_COLORS = {"r": "#d62728", "l": "#1f5fbf", "m": "#8e44ad"}
SIDE_NAMES = {"r": "right", "l": "left", "m": "midline"}
SEGMENT_COLOR = "#6b6b6b"
SHAPE_COLOR = "#d9cbb0"
CONTACT_FACE, CONTACT_EDGE = "#f7c66b", "#b07508"
GROUND_FILL = "#efeae1"
FIGSIZE = (12.0, 7.0)
DPI = 120
MIN_VIEW_WIDTH = 3.3  # inches
FAR_TOLERANCE = 0.01  # m: elements with z below -this are "far" in the side view
SIDE_TOLERANCE = 0.005  # m: |mean z| below this counts as midline when guessing a side


# ---------------------------------------------------------------------------------------------
# scene extraction (OpenSim)


@dataclass
class _Scene:
    name: str
    mass: float
    n_bodies: int
    n_dofs: int
    n_muscles: int
    segments: list = field(default_factory=list)  # (a, b) world points
    com_links: list = field(default_factory=list)  # thin dashed (a, b) for non-leaf bodies
    coms: list = field(default_factory=list)  # world points
    joints: list = field(default_factory=list)  # world points
    muscles: list = field(default_factory=list)  # (name, side, Nx3)
    contacts: list = field(default_factory=list)  # (centre, radius)
    shapes: list = field(default_factory=list)  # (Nx3 sample points, colour, opacity)
    regions: list = field(default_factory=list)  # (Nx3 corner points, side)


def _vec(v) -> np.ndarray:
    try:
        return np.asarray(v.to_numpy(), dtype=float).reshape(3)
    except Exception:
        return np.array([float(v.get(i)) for i in range(3)])


def _rot(R) -> np.ndarray:
    for conv in (
        lambda r: [[r.get(i, j) for j in range(3)] for i in range(3)],
        lambda r: [[r.asMat33().get(i, j) for j in range(3)] for i in range(3)],
        lambda r: r.asMat33().to_numpy(),
    ):
        try:
            return np.asarray(conv(R), dtype=float).reshape(3, 3)
        except Exception:
            continue
    raise TypeError("cannot convert SimTK rotation to numpy")


def _transform(frame, state) -> tuple[np.ndarray, np.ndarray]:
    T = frame.getTransformInGround(state)
    return _rot(T.R()), _vec(T.p())


def side_from_name(name: str) -> str | None:
    if re.search(r"(_r|_R|_right)$", name) or re.match(r"(r_|R_|right_)", name):
        return "r"
    if re.search(r"(_l|_L|_left)$", name) or re.match(r"(l_|L_|left_)", name):
        return "l"
    return None


def _side_from_points(pts: np.ndarray) -> str:
    z = float(np.mean(pts[:, 2])) if len(pts) else 0.0
    return "r" if z > SIDE_TOLERANCE else "l" if z < -SIDE_TOLERANCE else "m"


def _norm_side(side) -> str | None:
    if side in ("r", "R", "right"):
        return "r"
    if side in ("l", "L", "left"):
        return "l"
    if side in (None, "", "m", "c", "mid", "midline", "center", "centre"):
        return "m"
    return None  # unknown: guessed from the name or the geometry


_UNIT_SPHERE = None


def _unit_sphere(n: int = 160) -> np.ndarray:
    global _UNIT_SPHERE
    if _UNIT_SPHERE is None:
        k = np.arange(n) + 0.5
        phi = np.arccos(1 - 2 * k / n)
        theta = np.pi * (1 + 5**0.5) * k
        _UNIT_SPHERE = np.stack(
            [np.cos(theta) * np.sin(phi), np.cos(phi), np.sin(theta) * np.sin(phi)], axis=1
        )
    return _UNIT_SPHERE


def _geometry_samples(osim, geom) -> np.ndarray | None:
    """Points on the surface of an analytic geometry in its own frame (None: not drawn)."""
    try:
        scale = _vec(geom.get_scale_factors())
    except Exception:
        scale = np.ones(3)
    if (b := osim.Brick.safeDownCast(geom)) is not None:
        h = _vec(b.get_half_lengths())
        pts = np.array(list(itertools.product(*[(-a, a) for a in h])))
    elif (s := osim.Sphere.safeDownCast(geom)) is not None:
        pts = _unit_sphere() * float(s.get_radius())
    elif (e := osim.Ellipsoid.safeDownCast(geom)) is not None:
        pts = _unit_sphere() * _vec(e.get_radii())
    elif (c := osim.Cylinder.safeDownCast(geom)) is not None:  # axis along the frame's Y
        r, h = float(c.get_radius()), float(c.get_half_height())
        t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
        ring = np.stack([r * np.cos(t), np.zeros_like(t), r * np.sin(t)], axis=1)
        pts = np.vstack([ring + [0, -h, 0], ring + [0, h, 0]])
    else:
        return None
    return pts * scale


def _load_meta(osim_path: Path, meta: ModelMeta | None) -> ModelMeta | None:
    if meta is not None:
        return meta
    side = meta_path(osim_path)
    if not side.is_file():
        return None
    try:
        return load_meta(side)
    except (OSError, ValueError) as exc:
        warnings.warn(f"ignoring unreadable model metadata {side}: {exc}", stacklevel=2)
        return None


def _load_model(osim, path: Path):
    prev = osim.Logger.getLevel()
    osim.Logger.setLevelString("error")  # e.g. missing .vtp meshes: irrelevant for this picture
    try:
        model = osim.Model(str(path))
        state = model.initSystem()
        model.realizePosition(state)
    except Exception as exc:  # OpenSim raises RuntimeError with a long SimTK message
        msg = str(exc).strip().splitlines()
        detail = next((m.strip() for m in msg[1:] if m.strip()), msg[0] if msg else "")
        raise ValueError(f"cannot read OpenSim model {path}: {detail}") from exc
    finally:
        osim.Logger.setLevel(prev)
    return model, state


def _extract(path: Path, meta: ModelMeta | None) -> _Scene:
    import opensim as osim

    osim.Logger.setLevelString("warn")
    osim.Logger.removeFileSink()
    model, state = _load_model(osim, path)
    name = (
        (meta.creature if meta is not None else None)
        or re.sub(r"\.osim$", "", model.getName() or "")
        or path.stem
    )
    coords = model.getCoordinateSet()
    n_dofs = sum(1 for i in range(coords.getSize()) if not coords.get(i).getDefaultLocked())
    muscles = _muscles(osim, model)
    scene = _Scene(
        name=name,
        mass=float(model.getTotalMass(state)),
        n_bodies=model.getNumBodies(),
        n_dofs=n_dofs,
        n_muscles=len(muscles),
    )
    transforms = _add_skeleton(scene, model, state)
    _add_shapes(scene, osim, model, state)
    _add_contacts(scene, osim, model, state)
    _add_muscles(scene, muscles, state, meta, transforms)
    return scene


def _muscles(osim, model) -> list:
    """The model's muscles as PathActuators (a Muscle is one): its Millard muscles, or the
    PathActuators of a model with ideal muscles (F = u F_max), in force-set order."""
    forces = model.getForceSet()
    found = (osim.PathActuator.safeDownCast(forces.get(i)) for i in range(forces.getSize()))
    return [a for a in found if a is not None]


def _add_skeleton(scene: _Scene, model, state) -> dict:
    """Joint centres, bone segments (joint to child joints, or to the centre of mass of a body
    without children) and centres of mass; returns each body's (R, p) in ground."""
    ground = model.getGround().getName()
    bodies = model.getBodySet()
    transforms = {}
    for i in range(bodies.getSize()):
        b = bodies.get(i)
        transforms[b.getName()] = _transform(b, state)
    centre = {n: T[1] for n, T in transforms.items()}  # joint centre of each body
    children: dict[str, list] = {n: [] for n in transforms}
    for j, parent_frame, child_frame in model_joints(model):
        parent, child = parent_frame.getName(), child_frame.getName()
        pos = _vec(j.getChildFrame().getPositionInGround(state))
        if child in centre:
            centre[child] = pos
        if parent != ground:
            scene.joints.append(pos)
            if parent in children:
                children[parent].append(pos)
    for i in range(bodies.getSize()):
        b = bodies.get(i)
        bname = b.getName()
        R, p = transforms[bname]
        com = R @ _vec(b.getMassCenter()) + p
        scene.coms.append(com)
        start = centre[bname]
        segs = [(start, c) for c in children[bname]]
        if not segs and np.linalg.norm(com - start) > 1e-3:
            segs = [(start, com)]
        elif segs and min(_point_segment_distance(com, a, c) for a, c in segs) > 0.02:
            scene.com_links.append((start, com))
        scene.segments += segs
    return transforms


def _add_shapes(scene: _Scene, osim, model, state) -> None:
    """The visible geometry attached to every frame, sampled as points in ground."""
    for frame in model.getFrameList():
        try:
            prop = frame.getPropertyByName("attached_geometry")
            n_geom = prop.size()
        except Exception:
            continue
        for k in range(n_geom):
            geom = frame.get_attached_geometry(k)
            pts = _geometry_samples(osim, geom)
            if pts is None:
                continue
            try:
                app = geom.get_Appearance()
                if not app.get_visible():
                    continue
                colour = tuple(np.clip(_vec(app.get_color()), 0, 1))
                opacity = float(app.get_opacity())
            except Exception:
                colour, opacity = SHAPE_COLOR, 1.0
            R, p = _transform(geom.getFrame(), state)
            scene.shapes.append((pts @ R.T + p, colour, opacity))


def _add_contacts(scene: _Scene, osim, model, state) -> None:
    """Contact spheres: centre in ground and radius."""
    cgs = model.getContactGeometrySet()
    for i in range(cgs.getSize()):
        sphere = osim.ContactSphere.safeDownCast(cgs.get(i))
        if sphere is None:
            continue
        R, p = _transform(sphere.getFrame(), state)
        scene.contacts.append((R @ _vec(sphere.get_location()) + p, float(sphere.getRadius())))


def _add_muscles(scene: _Scene, muscles: list, state, meta: ModelMeta | None, transforms: dict) -> None:
    """Muscle paths (the active path points in the default state: conditional and moving points,
    wrapping tangent points) with their side, and the allowed attachment regions the metadata
    declares for their points."""
    meta_muscles = {m.name: m for m in meta.muscles} if meta is not None else {}
    for m in muscles:
        current = m.getGeometryPath().getCurrentPath(state)
        pts = []
        for k in range(current.getSize()):
            pp = current.get(k)
            try:
                pts.append(_vec(pp.getLocationInGround(state)))
            except Exception:
                pts.append(
                    _vec(pp.getParentFrame().findStationLocationInGround(state, pp.getLocation(state)))
                )
        pts = np.array(pts).reshape(-1, 3)
        mm = meta_muscles.get(m.getName())
        side = _norm_side(mm.side) if mm is not None else None
        side = side or side_from_name(m.getName()) or _side_from_points(pts)
        scene.muscles.append((m.getName(), side, pts))
        for point in mm.points if mm is not None else ():
            region = _region_corners(point, transforms)
            if region is not None:
                scene.regions.append((region, side))


def _region_corners(point, transforms: dict):
    """Corners (in ground) of a path point's allowed region (fixed axes keep the point's own
    coordinate), or None without a region."""
    ranges = point.ranges
    if not ranges or point.body not in transforms:
        return None
    loc = np.asarray(point.location, dtype=float)
    axes = []
    for a, ax in enumerate("xyz"):
        r = ranges.get(ax)
        axes.append((float(r[0]), float(r[1])) if r is not None else (loc[a],))
    corners = np.array(list(itertools.product(*axes)))
    R, p = transforms[point.body]
    return corners @ R.T + p


def _point_segment_distance(x, a, b) -> float:
    d = b - a
    t = float(np.clip(np.dot(x - a, d) / max(np.dot(d, d), 1e-12), 0, 1))
    return float(np.linalg.norm(x - (a + t * d)))


# ---------------------------------------------------------------------------------------------
# drawing


def _hull(points: np.ndarray) -> np.ndarray:
    """2-D convex hull (Andrew's monotone chain), counter-clockwise, no repeated end point."""
    pts = sorted(set(map(tuple, np.round(points, 9))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def _area(poly: np.ndarray) -> float:
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


class _View:
    """An orthographic view: `proj` maps world Nx3 -> Nx2, `depth` is larger when nearer."""

    def __init__(self, key: str):
        self.key = key
        if key == "side":  # screen right = +X, up = +Y, viewer on the +Z (right) side
            self.proj = lambda P: np.asarray(P, float).reshape(-1, 3)[:, [0, 1]]
            self.depth = lambda P: float(np.mean(np.asarray(P, float).reshape(-1, 3)[:, 2]))
        else:  # screen right = -Z, up = +Y, viewer in front (+X) looking along -X
            self.proj = lambda P: np.asarray(P, float).reshape(-1, 3)[:, [2, 1]]
            self.depth = lambda P: 0.0

    def far(self, P) -> bool:
        return self.depth(P) < -FAR_TOLERANCE


def _bounds(scene: _Scene, view: _View) -> tuple[np.ndarray, np.ndarray]:
    pts = [np.zeros((1, 3))]
    pts += [np.array(s) for s in scene.segments] + [np.array(scene.coms).reshape(-1, 3)]
    pts += [m[2] for m in scene.muscles] + [r[0] for r in scene.regions]
    pts += [s[0] for s in scene.shapes]
    for c, r in scene.contacts:
        pts.append(c + r * np.array([[1, 1, 1], [-1, -1, -1]]))
    P = view.proj(np.vstack([p.reshape(-1, 3) for p in pts]))
    lo, hi = P.min(axis=0), P.max(axis=0)
    lo[1] = min(lo[1], 0.0)
    return lo, hi


def _draw_view(ax, scene: _Scene, view: _View):
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Circle, Polygon

    def z(layer, P):  # far elements go underneath everything near
        return layer + (0 if view.far(P) else 10)

    for pts, colour, opacity in scene.shapes:
        hull = _hull(view.proj(pts))
        if len(hull) >= 3:
            far = view.far(pts)
            edge = tuple(0.75 * np.asarray(to_rgb(colour)))
            ax.add_patch(
                Polygon(
                    hull,
                    closed=True,
                    facecolor=colour,
                    edgecolor=edge,
                    alpha=(0.3 if far else 0.45) * max(opacity, 0.3),
                    lw=0.8,
                    zorder=z(1, pts),
                )
            )
    for corners, side in scene.regions:
        P = view.proj(corners)
        colour = SIDE_COLORS[side]
        alpha = 0.16 if view.far(corners) else 0.28
        hull = _hull(P)
        span = np.ptp(P, axis=0)
        if len(hull) >= 3 and _area(hull) > 1e-7:
            ax.add_patch(
                Polygon(
                    hull,
                    closed=True,
                    facecolor=colour,
                    edgecolor=colour,
                    alpha=alpha,
                    lw=1.0,
                    zorder=z(2, corners),
                )
            )
        elif np.max(span) > 1e-4:  # a line segment: the two farthest projected corners
            d = np.linalg.norm(P[:, None] - P[None], axis=-1)
            a, b = np.unravel_index(np.argmax(d), d.shape)
            ax.plot(
                *P[[a, b]].T,
                color=colour,
                alpha=alpha + 0.1,
                lw=5,
                solid_capstyle="round",
                zorder=z(2, corners),
            )
        else:  # seen end-on: a short segment collapses to a point
            ax.plot(*P[0], "o", ms=6, color=colour, alpha=alpha + 0.1, mec="none", zorder=z(2, corners))
    for a, b in scene.segments:
        P = view.proj([a, b])
        far = view.far([a, b])
        ax.plot(
            *P.T,
            color=SEGMENT_COLOR,
            lw=6,
            alpha=0.45 if far else 0.85,
            solid_capstyle="round",
            zorder=z(3, [a, b]),
        )
    for a, b in scene.com_links:
        ax.plot(
            *view.proj([a, b]).T, color=SEGMENT_COLOR, lw=1.2, ls=(0, (3, 2)), alpha=0.7, zorder=z(3, [a, b])
        )
    for c in scene.coms:
        P = view.proj(c)[0]
        ax.plot(*P, marker="o", ms=7, mfc="white", mec="#333333", mew=1.0, zorder=z(3.5, c))
        ax.plot(*P, marker="+", ms=7, color="#333333", mew=1.0, zorder=z(3.6, c))
    for _name, side, pts in scene.muscles:
        if len(pts) == 0:
            continue
        P = view.proj(pts)
        far = view.far(pts)
        ax.plot(
            *P.T,
            color=SIDE_COLORS[side],
            lw=1.7,
            alpha=0.45 if far else 0.95,
            marker="o",
            ms=3.2,
            zorder=z(4, pts),
        )
    for c in scene.joints:
        ax.plot(
            *view.proj(c)[0],
            marker="o",
            ms=8,
            mfc="white",
            mec="#222222",
            mew=1.4,
            alpha=0.75 if view.far(c) else 1.0,
            zorder=z(5, c),
        )
    for c, r in scene.contacts:
        far = view.far(c)
        ax.add_patch(
            Circle(
                view.proj(c)[0],
                r,
                facecolor=CONTACT_FACE,
                edgecolor=CONTACT_EDGE,
                lw=1.0,
                alpha=0.55 if far else 0.85,
                zorder=z(6, c),
            )
        )


def _legend_handles(scene: _Scene):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    h = [Line2D([], [], color=SEGMENT_COLOR, lw=6, alpha=0.85, solid_capstyle="round", label="segment")]
    if scene.shapes:
        h.append(Patch(facecolor=SHAPE_COLOR, edgecolor=SHAPE_COLOR, alpha=0.6, label="body shape"))
    h.append(Line2D([], [], ls="", marker="o", ms=8, mfc="white", mec="#222222", mew=1.4, label="joint"))
    h.append(Line2D([], [], ls="", marker="+", ms=7, color="#333333", mew=1.0, label="centre of mass"))
    if scene.contacts:
        h.append(
            Line2D(
                [], [], ls="", marker="o", ms=9, mfc=CONTACT_FACE, mec=CONTACT_EDGE, label="contact sphere"
            )
        )
    sides = [s for s in ("r", "l", "m") if any(m[1] == s for m in scene.muscles)]
    for s in sides:
        h.append(
            Line2D([], [], color=SIDE_COLORS[s], lw=1.7, marker="o", ms=3.2, label=f"{SIDE_NAMES[s]} muscle")
        )
    if scene.regions:
        rs = [s for s in ("r", "l", "m") if any(r[1] == s for r in scene.regions)]
        h.append(
            Patch(
                facecolor=SIDE_COLORS[rs[0]],
                alpha=0.3,
                edgecolor=SIDE_COLORS[rs[0]],
                label="attachment region",
            )
        )
    return h


def _figure(scene: _Scene):
    from matplotlib.figure import Figure

    views = [_View("side"), _View("front")]
    bounds = [_bounds(scene, v) for v in views]
    pad = 0.06 * max(max(np.max(hi - lo) for lo, hi in bounds), 0.05)
    bounds = [(lo - pad, hi + pad) for lo, hi in bounds]
    widths = [hi[0] - lo[0] for lo, hi in bounds]
    height = max(hi[1] - lo[1] for lo, hi in bounds)
    ylo = min(lo[1] for lo, _ in bounds)
    ymid = ylo + height / 2

    fw, fh = FIGSIZE
    left, right, bottom, top, gap = 0.8, 2.0, 0.7, 1.05, 0.9  # inches; legend on the right
    avail_w, avail_h = fw - left - right - gap, fh - bottom - top
    scale = max(sum(widths) / avail_w, height / avail_h)  # metres per inch
    while sum(max(w / scale, MIN_VIEW_WIDTH) for w in widths) > avail_w:
        scale *= 1.02  # keep each view wide enough for its title and labels
    box_w = [max(w / scale, MIN_VIEW_WIDTH) for w in widths]
    spare = avail_w - sum(box_w)
    box_w = [w + spare / 2 for w in box_w]
    box_h = height / scale
    y0 = bottom + (avail_h - box_h) / 2

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    x0 = left
    axes = []
    for v, (lo, hi), bw in zip(views, bounds, box_w):
        ax = fig.add_axes([x0 / fw, y0 / fh, bw / fw, box_h / fh])
        x0 += bw + gap
        cx, half = (lo[0] + hi[0]) / 2, bw * scale / 2
        ax.set_ylim(ymid - box_h * scale / 2, ymid + box_h * scale / 2)
        if v.key == "side":
            ax.set_xlim(cx - half, cx + half)
        else:  # screen right = -Z: reversed Z axis
            ax.set_xlim(cx + half, cx - half)
        ax.set_aspect("equal", adjustable="box")
        ax.grid(True, color="#dddddd", lw=0.6, zorder=0)
        ax.set_axisbelow(True)
        ax.axhspan(ax.get_ylim()[0], 0, color=GROUND_FILL, zorder=0.5, lw=0)
        ax.axhline(0, color="#6d5f4b", lw=1.6, zorder=0.6)
        _draw_view(ax, scene, v)
        ax.tick_params(labelsize=8)
        for s in ax.spines.values():
            s.set_color("#999999")
        axes.append(ax)

    side, front = axes
    side.set_title(
        "Side view, seen from the creature's right (+Z)\nX forward →, Y up; far (left) side drawn faint",
        fontsize=10,
    )
    side.set_xlabel("X (m), forward →", fontsize=9)
    side.set_ylabel("Y (m), up", fontsize=9)
    front.set_title(
        "Front view, looking along −X (mirror view)\ncreature's right (+Z) on the viewer's left", fontsize=10
    )
    front.set_xlabel("Z (m), reversed: ← right (+Z) | left (−Z) →", fontsize=9)
    front.set_ylabel("Y (m), up", fontsize=9)
    for x, label, colour, ha in (
        (0.03, "R", SIDE_COLORS["r"], "left"),
        (0.97, "L", SIDE_COLORS["l"], "right"),
    ):
        front.text(
            x,
            0.97,
            label,
            transform=front.transAxes,
            ha=ha,
            va="top",
            fontsize=13,
            fontweight="bold",
            color=colour,
            zorder=30,
        )

    fig.suptitle(
        f"{scene.name}  —  {scene.mass:.1f} kg, {scene.n_bodies} bodies, "
        f"{scene.n_dofs} DOFs, {scene.n_muscles} muscles   (default pose)",
        fontsize=13,
        fontweight="bold",
        y=1 - 0.25 / fh,
        va="top",
    )
    handles = _legend_handles(scene)
    fig.legend(
        handles=handles,
        loc="center left",
        fontsize=9,
        frameon=False,
        bbox_to_anchor=((fw - right + 0.15) / fw, (y0 + box_h / 2) / fh),
        handlelength=2.2,
        labelspacing=1.1,
        borderaxespad=0,
    )
    return fig


# ---------------------------------------------------------------------------------------------


def render_model(osim_path, out_png, meta: ModelMeta | None = None) -> Path:
    """Draw the model at `osim_path` (side and front view, default pose) into `out_png`.

    `meta`: the model's metadata; by default ``MODEL.meta.json`` next to ``MODEL.osim``
    is used when present (creature name, muscle sides and allowed attachment regions). Any
    .osim works without it. The PNG is written atomically. Returns the output path.
    Raises FileNotFoundError / ValueError naming the file for a missing or unreadable model.
    """
    path = Path(osim_path)
    if not path.exists():
        raise FileNotFoundError(f"OpenSim model not found: {path}")
    if not path.is_file():
        raise ValueError(f"OpenSim model is not a file: {path}")
    scene = _extract(path, _load_meta(path, meta))

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = _figure(scene)
    FigureCanvasAgg(fig)
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=DPI, facecolor="white")
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return out
