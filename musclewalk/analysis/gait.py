"""A walking trial as a gait lab sees it: segment kinematics, clinical joint angles, gait events and
cycles, spatiotemporal parameters. The same path for a simulation folder (`musclewalk simulate`)
and for a lab's trial given as OpenSim files (model, IK .mot, GRF .mot + ExternalLoads .xml).

Clinical angles (Plug-in Gait conventions) come from the orientations of the segments, not from
the model's coordinates: the relative rotation of child to parent segment, taken from the
model's default pose (all coordinates 0, upright) and decomposed as Cardan angles about the
segment's lateral (Z), then anterior (X), then vertical (Y) axis (OpenSim frames: X forward, Y up,
Z right). Foot progression is the angle of the foot's long axis (its X) to the walking direction: a
foot that points outward in the default pose (a model with a tibial torsion) keeps that toe-out.
So a model whose knee coordinate is negative in flexion and one whose knee coordinate
is positive give the same knee flexion, and no coordinate name is needed. The segments are found
from the model's structure: the root body (the pelvis) and, per leg, the chain of three bodies
below it (thigh, shank, foot), the side from which side of the root the chain lies on."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from ..constants import GRAVITY
from ..io_checks import read_json_object
from ..sim.engine import rotations_from_xyz
from ..sim.outputs import read_storage
from .reference import PERCENT

SIDES = ("r", "l")
CONTACT_ON = 0.05  # x body weight: a foot lands when its vertical GRF rises above this
CONTACT_OFF = 0.02  # x body weight: ... and lifts when it falls below this (hysteresis)


class GaitError(ValueError):
    """A trial that cannot be analysed; the message names the file or says what is missing."""


@dataclass
class Trial:
    name: str
    time: np.ndarray  # (n,) s, kinematics
    angles: dict  # (side, variable) -> (n,) degrees, clinical convention
    grf_time: np.ndarray  # (m,) s
    vgrf: dict  # side -> (m,) vertical GRF, N
    cop: dict  # side -> (m, 3) centre of pressure, m
    root_position: np.ndarray  # (n, 3) pelvis origin, m
    body_mass: float  # kg
    source: dict = field(default_factory=dict)
    activation_time: np.ndarray | None = None  # (k,) s
    activations: dict = field(default_factory=dict)  # muscle name -> (k,) activation
    # (side, variable) -> (n,) on time: joint moments and powers (analysis.kinetics), per kg
    kinetics: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------- segments
def model_joints(model) -> list[tuple]:
    """(joint, parent body frame, child body frame) of each joint of an OpenSim Model, in the
    joint set's order: the tree every reading of a model's structure walks."""
    joints = model.getJointSet()
    out = []
    for i in range(joints.getSize()):
        j = joints.get(i)
        out.append((j, j.getParentFrame().findBaseFrame(), j.getChildFrame().findBaseFrame()))
    return out


def leg_segments(model) -> dict:
    """{'root': body, 'r'/'l': (thigh, shank, foot)} from the model's tree (OpenSim Model)."""
    osim_bodies = model.getBodySet()
    parent_of, children = {}, {}
    root = None
    for _, parent_frame, child_frame in model_joints(model):
        parent, child = parent_frame.getName(), child_frame.getName()
        parent_of[child] = parent
        children.setdefault(parent, []).append(child)
        if parent == "ground":
            root = child
    if root is None:
        raise GaitError("the model has no body jointed to ground")
    state = model.initSystem()
    legs = {}
    for first in children.get(root, []):
        chain = [first]
        while len(chain) < 3 and len(children.get(chain[-1], [])) >= 1:
            # the chain goes down: the lowest child in the default pose
            kids = children[chain[-1]]
            chain.append(min(kids, key=lambda b: osim_bodies.get(b).getPositionInGround(state)[1]))
        if len(chain) < 3:
            continue
        positions = [osim_bodies.get(b).getPositionInGround(state) for b in chain]
        root_y = osim_bodies.get(root).getPositionInGround(state)[1]
        if not positions[-1][1] < positions[0][1] < root_y + 0.05:
            continue  # not a leg (an arm or the spine goes up or sideways)
        z = positions[0][2] - osim_bodies.get(root).getPositionInGround(state)[2]
        side = "r" if z > 0 else "l"
        legs[side] = tuple(chain)
        below, todo = [], [first]
        while todo:
            body = todo.pop()
            below.append(body)
            todo += children.get(body, [])
        legs[f"{side}_bodies"] = tuple(below)  # every body of the leg (GRF may act on any)
    if not {"r", "l"} <= set(legs):
        raise GaitError(f"the model's legs were not found below its root body {root!r} (found: {legs})")
    return {"root": root, **legs}


def _rotations(model, segments, rows: CoordinateRows):
    """Body orientations (n, 3, 3) per segment name, their default-pose orientations, and the
    root body's positions, for each row of coordinate values."""
    state = model.initSystem()
    bodies = [model.getBodySet().get(b) for b in segments]

    def orientations():
        model.realizePosition(state)
        xyz = np.array(
            [b.getTransformInGround(state).R().convertRotationToBodyFixedXYZ().to_numpy() for b in bodies]
        )
        return rotations_from_xyz(xyz)

    default = dict(zip(segments, orientations()))
    out = np.empty((len(rows.values), len(bodies), 3, 3))
    root = np.empty((len(rows.values), 3))
    for k in range(len(rows.values)):
        rows.pose(state, k)
        out[k] = orientations()
        root[k] = bodies[0].getPositionInGround(state).to_numpy()
    return {b: out[:, i] for i, b in enumerate(segments)}, default, root


def clinical_angles(R: dict, R0: dict, seg: dict, heading: float = 0.0) -> dict:
    """(side, variable) -> degrees from segment orientations R (n, 3, 3) and their default-pose
    orientations R0."""

    def relative(parent, child):
        # the joint's rotation from its neutral, in the joint's own frame (a twisted ankle's
        # dorsiflexion about its own axis)
        neutral = R0[parent].T @ R0[child]
        rel = neutral.T @ np.einsum("nji,njk->nik", R[parent], R[child])
        return np.degrees(Rotation.from_matrix(rel).as_euler("ZXY"))  # intrinsic Z, X, Y

    c, s = np.cos(heading), np.sin(heading)
    H = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # the walking direction
    pelvis = np.einsum("ij,njk->nik", H.T, R[seg["root"]]) @ R0[seg["root"]].T
    p = np.degrees(Rotation.from_matrix(pelvis).as_euler("ZXY"))
    out = {}
    for side in SIDES:
        mirror = 1.0 if side == "r" else -1.0
        thigh, shank, foot = seg[side]
        hip, knee, ankle = relative(seg["root"], thigh), relative(thigh, shank), relative(shank, foot)
        # the foot's long axis (its X) from the walking direction: the neutral pose's pitch and roll
        # taken out, its yaw (a tibial torsion's toe-out) kept
        neutral_yaw = Rotation.from_matrix(R0[foot]).as_euler("YZX")[0]
        level = Rotation.from_euler("Y", -neutral_yaw).as_matrix() @ R0[foot]
        foot_in_heading = np.einsum("ij,njk->nik", H.T, R[foot]) @ level.T
        progression = np.degrees(Rotation.from_matrix(foot_in_heading).as_euler("YZX"))[:, 0]
        out.update(
            {
                (side, "pelvis_tilt"): -p[:, 0],
                (side, "pelvis_obliquity"): -mirror * p[:, 1],
                (side, "pelvis_rotation"): mirror * p[:, 2],
                (side, "hip_flexion"): hip[:, 0],
                (side, "hip_adduction"): mirror * hip[:, 1],
                (side, "hip_rotation"): mirror * hip[:, 2],
                (side, "knee_flexion"): -knee[:, 0],
                (side, "ankle_dorsiflexion"): ankle[:, 0],
                (side, "foot_progression"): mirror * progression,
            }
        )
    return out


# ---------------------------------------------------------------------------------- loading
def _model(path):
    from ..opensim_env import import_opensim

    osim = import_opensim()
    path = Path(path)
    if not path.is_file():
        raise GaitError(f"{path}: model file not found")
    try:
        return osim.Model(str(path))
    except Exception as exc:
        raise GaitError(f"{path}: OpenSim cannot read the model: {exc}") from None


def _storage(path, what):
    path = Path(path)
    if not path.is_file():
        raise GaitError(f"{path}: {what} not found")
    try:
        return read_storage(path)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise GaitError(f"{path}: not an OpenSim storage file ({exc})") from None


@dataclass
class CoordinateRows:
    """A coordinate table read against a model: its rows in model units (rad, m) in the order of
    the model's coordinate set (coordinates the table lacks are left out, so they keep their
    values in a state), and the speeds when asked for."""

    coordinates: list  # OpenSim Coordinate handles
    values: np.ndarray  # (n, k)
    speeds: np.ndarray | None = None  # (n, k), rad/s and m/s

    def pose(self, state, row: int) -> None:
        """Put ``state`` in row ``row``'s pose (and motion, when the speeds were read); the
        caller realizes the stage it needs."""
        for c, v in zip(self.coordinates, self.values[row]):
            c.setValue(state, float(v), False)
        if self.speeds is not None:
            for c, v in zip(self.coordinates, self.speeds[row]):
                c.setSpeedValue(state, float(v))


def coordinate_rows(model, table, in_degrees: bool, source, speeds: bool = False) -> CoordinateRows:
    """The coordinates of a table (columns named by the coordinate, as kinematics and IK files
    are, or ``<path>/value`` and ``<path>/speed``, as a states file is) for ``model``;
    ``in_degrees``: its rotational values are in degrees."""
    coords = model.getCoordinateSet()
    handles, columns, speed_columns = [], [], []
    for i in range(coords.getSize()):
        c = coords.get(i)
        path = c.getAbsolutePathString()
        for label in (c.getName(), path + "/value"):
            if label in table.columns:
                values = table[label].to_numpy(float)
                if in_degrees and c.getMotionType() == 1:
                    values = np.radians(values)
                handles.append(c)
                columns.append(values)
                if speeds:
                    if path + "/speed" not in table.columns:
                        raise GaitError(f"{source}: no column {path}/speed")
                    speed_columns.append(table[path + "/speed"].to_numpy(float))
                break
    if not handles:
        raise GaitError(f"{source}: no column names a coordinate of the model")
    return CoordinateRows(
        handles, np.column_stack(columns), np.column_stack(speed_columns) if speeds else None
    )


def from_simulation(run_dir, kinetics: bool = True) -> Trial:
    """A `musclewalk simulate` folder (summary.json, states.sto, grf.mot; with ``kinetics``, joint
    moments and powers by inverse dynamics of its kinematics.mot and grf_loads.xml)."""
    run_dir = Path(run_dir)
    summary_path = run_dir / "summary.json"
    if not summary_path.exists():
        raise GaitError(f"{run_dir}: not a simulation folder (no summary.json)")
    summary = read_json_object(summary_path, GaitError, "summary")
    model_path = summary.get("model")
    if not isinstance(model_path, str):
        raise GaitError(f"{summary_path}: model: missing (the simulated model's path)")
    model = _model(model_path)
    segments = leg_segments(model)
    states = _storage(run_dir / "states.sto", "states file")
    rows = coordinate_rows(model, states, False, run_dir / "states.sto")
    grf = _storage(run_dir / "grf.mot", "GRF file")
    from ..model.meta import load_meta

    meta = load_meta(model_path)
    trial = _trial(
        run_dir.name,
        model,
        segments,
        rows,
        states["time"].to_numpy(float),
        grf,
        {"r": "ground_force_r_", "l": "ground_force_l_"},
        float(meta.total_mass),
        {"kind": "simulation", "folder": str(run_dir), "model": str(model_path)},
    )
    if kinetics:
        from .kinetics import add_kinetics

        add_kinetics(trial, model, run_dir / "kinematics.mot", run_dir / "grf_loads.xml", segments)
    muscles_path = run_dir / "muscles.csv"
    if muscles_path.is_file():
        import pandas as pd

        table = pd.read_csv(muscles_path)
        trial.activation_time = table["time"].to_numpy(float)
        trial.activations = {
            m.name: table[f"{m.name}.activation"].to_numpy(float)
            for m in meta.muscles
            if f"{m.name}.activation" in table
        }
    return trial


# the usual low-pass filter of a lab trial's coordinates before inverse dynamics (OpenSim's own
# example of this trial, subject01_Setup_InverseDynamics.xml, uses 6 Hz)
LAB_LOWPASS_HZ = 6.0


def from_opensim_trial(
    model_path, ik_path, grf_path, loads_path, body_mass=None, kinetics: bool = True
) -> Trial:
    """A lab trial: model, IK .mot, GRF .mot and the ExternalLoads .xml that says which columns
    are which foot's (with ``kinetics``, joint moments and powers by inverse dynamics of the IK
    file, filtered at LAB_LOWPASS_HZ, under those loads)."""
    from lxml import etree

    model = _model(model_path)
    ik = _storage(ik_path, "IK file")
    rows = coordinate_rows(model, ik, bool(ik.attrs.get("degrees")), ik_path)
    grf = _storage(grf_path, "GRF file")
    loads_path = Path(loads_path)
    if not loads_path.is_file():
        raise GaitError(
            f"{loads_path}: ExternalLoads file not found (it says which GRF columns belong to which foot)"
        )
    try:
        forces = etree.parse(str(loads_path)).findall(".//ExternalForce")
    except etree.XMLSyntaxError as exc:
        raise GaitError(f"{loads_path}: not valid XML ({exc})") from None
    seg = leg_segments(model)
    foot_side = {b: side for side in SIDES for b in seg[f"{side}_bodies"]}
    prefixes = {}
    for f in forces:
        body = (f.findtext("applied_to_body") or "").strip()
        ident = (f.findtext("force_identifier") or "").strip()
        if body in foot_side and ident:
            prefixes[foot_side[body]] = ident[:-1] if ident.endswith("v") else ident
    if set(prefixes) != set(SIDES):
        raise GaitError(f"{loads_path}: no ExternalForce applied to each foot (found: {prefixes})")
    if body_mass is None:
        body_mass = sum(model.getBodySet().get(i).getMass() for i in range(model.getBodySet().getSize()))
    trial = _trial(
        Path(ik_path).stem,
        model,
        seg,
        rows,
        ik["time"].to_numpy(float),
        grf,
        prefixes,
        float(body_mass),
        {
            "kind": "opensim trial",
            "model": str(model_path),
            "ik": str(ik_path),
            "grf": str(grf_path),
            "external_loads": str(loads_path),
        },
    )
    if kinetics:
        from .kinetics import add_kinetics

        add_kinetics(trial, model, ik_path, loads_path, seg, LAB_LOWPASS_HZ)
    return trial


def _trial(name, model, seg, rows, time, grf, prefixes, mass, source) -> Trial:
    bodies = [seg["root"], *seg["r"], *seg["l"]]
    R, R0, root = _rotations(model, bodies, rows)
    vgrf, cop = {}, {}
    for side, prefix in prefixes.items():
        try:
            vgrf[side] = grf[f"{prefix}vy"].to_numpy(float)
            cop[side] = grf[[f"{prefix}p{a}" for a in "xyz"]].to_numpy(float)
        except KeyError as exc:
            raise GaitError(f"GRF file: column {exc} missing") from None
    # the walking direction: from the pelvis' horizontal displacement over the trial
    d = root[-1] - root[0]
    heading = float(np.arctan2(-d[2], d[0])) if np.hypot(d[0], d[2]) > 0.05 else 0.0
    return Trial(
        name,
        time,
        clinical_angles(R, R0, seg, heading),
        grf["time"].to_numpy(float),
        vgrf,
        cop,
        root,
        mass,
        {**source, "segments": seg, "heading_rad": heading},
    )


# ---------------------------------------------------------------------------------- events
def foot_events(t, vgrf, body_mass) -> tuple[np.ndarray, np.ndarray]:
    """(foot strikes, foot offs) in s from a foot's vertical GRF, with hysteresis: contact
    begins above CONTACT_ON and ends below CONTACT_OFF body weights; the first sample's state is
    no event."""
    weight = body_mass * GRAVITY
    on, off = CONTACT_ON * weight, CONTACT_OFF * weight
    strikes, offs = [], []
    contact = bool(vgrf[0] > on)
    for tk, f in zip(t[1:], vgrf[1:]):
        if not contact and f > on:
            contact = True
            strikes.append(float(tk))
        elif contact and f < off:
            contact = False
            offs.append(float(tk))
    return np.array(strikes), np.array(offs)


@dataclass
class Cycle:
    side: str
    start: float  # foot strike, s
    end: float  # next foot strike of the same foot, s
    foot_off: float  # s
    opposite_off: float | None
    opposite_strike: float | None

    @property
    def duration(self) -> float:
        return self.end - self.start

    def percent(self, t) -> float:
        return 100.0 * (t - self.start) / self.duration


def gait_cycles(trial: Trial, skip: float = 0.0, tolerance: float = 0.2) -> list[Cycle]:
    """Complete cycles of both feet starting after ``skip`` s; a cycle whose duration is more
    than ``tolerance`` away from the median (a stumble, a double step) is dropped."""
    events = {s: foot_events(trial.grf_time, trial.vgrf[s], trial.body_mass) for s in SIDES}
    cycles = []
    for side in SIDES:
        other = "l" if side == "r" else "r"
        strikes, offs = events[side]
        o_strikes, o_offs = events[other]
        for a, b in zip(strikes[:-1], strikes[1:]):
            if a < skip or b > trial.time[-1] + 1e-9:
                continue
            off = offs[(offs > a) & (offs < b)]
            if len(off) != 1:
                continue  # not one stance and one swing
            oo = o_offs[(o_offs > a) & (o_offs < b)]
            os_ = o_strikes[(o_strikes > a) & (o_strikes < b)]
            cycles.append(
                Cycle(
                    side,
                    float(a),
                    float(b),
                    float(off[0]),
                    float(oo[0]) if len(oo) else None,
                    float(os_[0]) if len(os_) else None,
                )
            )
    if cycles:
        median = float(np.median([c.duration for c in cycles]))
        cycles = [c for c in cycles if abs(c.duration - median) <= tolerance * median]
    return cycles


def normalized(trial: Trial, cycles: list[Cycle], side: str, variable: str) -> np.ndarray:
    """(cycles, 51) of a variable (an angle or a kinetic variable) over each of the side's cycles,
    0-100 % in 2 % steps."""
    values = (
        trial.angles[(side, variable)]
        if (side, variable) in trial.angles
        else trial.kinetics[(side, variable)]
    )
    rows = [
        np.interp(c.start + PERCENT / 100.0 * c.duration, trial.time, values)
        for c in cycles
        if c.side == side
    ]
    return np.array(rows).reshape(-1, len(PERCENT))


def normalized_vgrf(trial: Trial, cycles: list[Cycle], side: str) -> np.ndarray:
    rows = [
        np.interp(c.start + PERCENT / 100.0 * c.duration, trial.grf_time, trial.vgrf[side])
        for c in cycles
        if c.side == side
    ]
    return np.array(rows).reshape(-1, len(PERCENT)) / (trial.body_mass * GRAVITY)


def impact_peaks(trial: Trial, cycles: list[Cycle], side: str, end_percent: float) -> np.ndarray:
    """(cycles,) the largest vertical GRF of the raw signal (body weights) from each of the side's
    foot strikes to ``end_percent`` of its cycle: a heel-strike transient lasts a few samples, which
    the cycle's 2 % points (normalized_vgrf) miss or catch by chance."""
    weight = trial.body_mass * GRAVITY
    out = []
    for c in cycles:
        if c.side != side:
            continue
        inside = (trial.grf_time >= c.start) & (trial.grf_time <= c.start + end_percent / 100.0 * c.duration)
        out.append(trial.vgrf[side][inside].max() / weight if inside.any() else np.nan)
    return np.array(out, float)


def normalized_activation(
    trial: Trial, cycles: list[Cycle], muscle: str, side: str, points: int = 101
) -> np.ndarray:
    """(cycles, points) activation of a muscle over each of the side's cycles."""
    grid = np.linspace(0.0, 1.0, points)
    rows = [
        np.interp(c.start + grid * c.duration, trial.activation_time, trial.activations[muscle])
        for c in cycles
        if c.side == side
    ]
    return np.array(rows).reshape(-1, points)


def spatiotemporal(trial: Trial, cycles: list[Cycle]) -> dict:
    """Means over the cycles: speed, cadence, stride length, stance, swing and double support %,
    step width, and the right/left symmetry of stance %."""
    if not cycles:
        return {}
    stride_time = np.array([c.duration for c in cycles])
    length = []
    for c in cycles:
        a = np.array([np.interp(c.start, trial.time, trial.root_position[:, k]) for k in (0, 2)])
        b = np.array([np.interp(c.end, trial.time, trial.root_position[:, k]) for k in (0, 2)])
        length.append(float(np.linalg.norm(b - a)))
    length = np.array(length)
    stance = np.array([c.percent(c.foot_off) for c in cycles])
    double = [
        c.percent(c.opposite_off) + (c.percent(c.foot_off) - c.percent(c.opposite_strike))
        for c in cycles
        if c.opposite_off is not None and c.opposite_strike is not None
    ]
    widths = []
    for c in cycles:
        if c.opposite_strike is None:
            continue
        other = "l" if c.side == "r" else "r"
        p = trial.cop[c.side][np.searchsorted(trial.grf_time, c.start + 0.05 * c.duration)]
        q = trial.cop[other][np.searchsorted(trial.grf_time, c.opposite_strike + 0.05 * c.duration)]
        widths.append(abs(p[2] - q[2]))
    by_side = {s: [v for v, c in zip(stance, cycles) if c.side == s] for s in SIDES}
    return {
        "cycles": {s: len(by_side[s]) for s in SIDES},
        "speed_m_per_s": float(np.mean(length / stride_time)),
        "cadence_steps_per_min": float(np.mean(120.0 / stride_time)),
        "stride_time_s": float(np.mean(stride_time)),
        "stride_length_m": float(np.mean(length)),
        "stance_percent": float(np.mean(stance)),
        "swing_percent": float(100.0 - np.mean(stance)),
        "double_support_percent": float(np.mean(double)) if double else None,
        "step_width_m": float(np.mean(widths)) if widths else None,
        "stance_symmetry_r_minus_l_percent": float(np.mean(by_side["r"]) - np.mean(by_side["l"]))
        if by_side["r"] and by_side["l"]
        else None,
    }
