"""Synthetic humanoid-like creature for the controller tests (no simulator).

Base pose, world frame (Y up, X forward, Z right), all body frames aligned with the world:

    trunk (0, 1.0, 0) -- lumbar (0, 1.05, 0) -- torso -- neck (0, 1.5, 0) -- head
    trunk -- hip_s (0, 0.9, ±0.1) -- upper_s -- knee_s (0, 0.5, ±0.1) -- lower_s
          -- ankle_s (0, 0.08, ±0.1) -- foot_s            (right: +0.1, left: -0.1)

Per side: hip_flexor, hip_extensor, hip_abductor, hamstrings (hip+knee), vasti (knee extensor),
gastrocnemius (knee+ankle, ankle extensor), soleus (ankle extensor), tibialis_anterior (ankle);
midline: neck_flexor, neck_extensor (lumbar + neck, head_chain).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from musclewalk.control import (
    ControlModel,
    JointInfo,
    MuscleInfo,
    Sensors,
    crossing_segment,
    moment_arm_vectors,
)
from musclewalk.model.kinematics import bodies_beyond

BODIES = ["trunk", "torso", "head", "upper_r", "lower_r", "foot_r", "upper_l", "lower_l", "foot_l"]
BODY_PARENT = [None, 0, 1, 0, 3, 4, 0, 6, 7]
BODY_LINKS = [(parent, body) for body, parent in enumerate(BODY_PARENT) if parent is not None]
HIP_HALF_WIDTH = 0.1
LEG_LENGTH = 0.9
MASS = 70.0
DT = 0.001


def _side_z(side: str) -> float:
    return HIP_HALF_WIDTH if side == "r" else -HIP_HALF_WIDTH


BODY_ORIGIN = np.array(
    [[0, 1.0, 0], [0, 1.05, 0], [0, 1.5, 0]] + [[0, y, _side_z(s)] for s in "rl" for y in (0.9, 0.5, 0.08)],
    float,
)

# (name, kind, side, child body)
JOINTS = [
    ("hip_r", "hip", "r", 3),
    ("knee_r", "knee", "r", 4),
    ("ankle_r", "ankle", "r", 5),
    ("hip_l", "hip", "l", 6),
    ("knee_l", "knee", "l", 7),
    ("ankle_l", "ankle", "l", 8),
    ("lumbar", "head_chain", None, 1),
    ("neck", "head_chain", None, 2),
]

# right-side leg muscles: (unique, roles, delay, [(body, world point with right-side z)])
LEG_MUSCLES = [
    ("hip_flexor", {"hip", "hip_flexor"}, 0.005, [("trunk", (0.08, 1.0, 0.1)), ("upper", (0.05, 0.7, 0.1))]),
    (
        "hip_extensor",
        {"hip", "hip_extensor"},
        0.005,
        [("trunk", (-0.1, 1.0, 0.1)), ("upper", (-0.05, 0.7, 0.1))],
    ),
    (
        "hip_abductor",
        {"hip", "hip_abductor"},
        0.005,
        [("trunk", (0.0, 1.05, 0.2)), ("upper", (0.0, 0.75, 0.16))],
    ),
    (
        "hamstrings",
        {"hip", "hip_extensor", "knee", "knee_flexor"},
        0.010,
        [("trunk", (-0.08, 0.92, 0.1)), ("lower", (-0.04, 0.4, 0.1))],
    ),
    ("vasti", {"knee", "knee_extensor"}, 0.010, [("upper", (0.05, 0.65, 0.1)), ("lower", (0.05, 0.4, 0.1))]),
    (
        "gastrocnemius",
        {"knee", "ankle", "ankle_extensor"},
        0.020,
        [("upper", (-0.04, 0.55, 0.1)), ("foot", (-0.06, 0.06, 0.1))],
    ),
    (
        "soleus",
        {"ankle", "ankle_extensor"},
        0.020,
        [("lower", (-0.04, 0.3, 0.1)), ("foot", (-0.06, 0.06, 0.1))],
    ),
    (
        "tibialis_anterior",
        {"ankle", "ankle_flexor"},
        0.020,
        [("lower", (0.04, 0.3, 0.1)), ("foot", (0.08, 0.05, 0.1))],
    ),
]
HEAD_MUSCLES = [
    (
        "neck_flexor",
        {"head_chain"},
        0.005,
        [("trunk", (0.06, 1.0, 0.0)), ("torso", (0.06, 1.3, 0.0)), ("head", (0.04, 1.55, 0.0))],
    ),
    (
        "neck_extensor",
        {"head_chain"},
        0.005,
        [("trunk", (-0.06, 1.0, 0.0)), ("torso", (-0.06, 1.3, 0.0)), ("head", (-0.04, 1.55, 0.0))],
    ),
]


@dataclass
class Creature:
    model: ControlModel
    points: np.ndarray  # (n_points, 3) base-pose world path points
    pair_points: np.ndarray  # (n_pairs, 2) [child-side, parent-side] indices into points
    joint_pos: np.ndarray  # (n_joints, 3)
    muscle_index: dict  # muscle name -> index

    def index(self, name: str) -> int:
        return self.muscle_index[name]

    def pair_r(self) -> np.ndarray:
        return moment_arm_vectors(self.points, self.pair_points, self.joint_pos, self.model.pair_joint)


ARM_MUSCLES = [("arm_flexor", {"arm"}, 0.005), ("arm_extensor", {"arm"}, 0.005)]


def build_creature(copies: int = 1, dt: float = DT, fmax: float = 1000.0, arms: bool = False) -> Creature:
    """``copies`` duplicates every muscle (distinct unique names); ``arms`` adds two constant-only arm
    muscles per side (spanning no modelled joint)."""
    body_index = {name: i for i, name in enumerate(BODIES)}
    child_sets = [set(bodies_beyond(BODY_LINKS, child)) for *_, child in JOINTS]
    joint_pos = np.array([BODY_ORIGIN[child] for *_, child in JOINTS])
    muscles, points, pair_m, pair_j, pair_pts = [], [], [], [], []

    def add(name, unique, side, roles, delay, path):
        m = len(muscles)
        muscles.append(
            MuscleInfo(name=name, side=side, fmax=fmax, delay=delay, unique=unique, roles=frozenset(roles))
        )
        first = len(points)
        bodies = []
        for body, xyz in path:
            bname = body if body in ("trunk", "torso", "head") else f"{body}_{side}"
            bodies.append(body_index[bname])
            x, y, z = xyz
            points.append((x, y, z if side != "l" else -z))
        for j, child_side in enumerate(child_sets):
            try:
                c, p = crossing_segment(bodies, child_side)
            except ValueError:
                continue
            pair_m.append(m)
            pair_j.append(j)
            pair_pts.append((first + c, first + p))

    for copy in range(copies):
        suffix = "" if copy == 0 else f"_{copy}"
        for side in "rl":
            for unique, roles, delay, path in LEG_MUSCLES:
                add(f"{unique}{suffix}_{side}", unique + suffix, side, roles, delay, path)
        for unique, roles, delay, path in HEAD_MUSCLES:
            add(unique + suffix, unique + suffix, None, roles, delay, path)
    if arms:
        for side in "rl":
            for unique, roles, delay in ARM_MUSCLES:
                add(f"{unique}_{side}", unique, side, roles, delay, [])

    model = ControlModel(
        muscles=muscles,
        joints=[JointInfo(name, kind, side) for name, kind, side, _ in JOINTS],
        pair_muscle=pair_m,
        pair_joint=pair_j,
        trunk_body=0,
        head_body=2,
        upper_body=(3, 6),
        lower_body=(4, 7),
        foot_body=(5, 8),
        total_mass=MASS,
        leg_length=LEG_LENGTH,
        dt=dt,
        head_offset=BODY_ORIGIN[2] - BODY_ORIGIN[0],
        body_names=list(BODIES),
    )
    return Creature(
        model,
        np.array(points, float),
        np.array(pair_pts),
        joint_pos,
        {m.name: i for i, m in enumerate(muscles)},
    )


def base_sensors(creature: Creature, t: float = 0.0, contact=(True, False), **overrides) -> Sensors:
    """Base pose, at rest, COM above the hips; feet under the hips; right foot loaded."""
    nb = len(BODIES)
    foot_pos = np.array([[0.0, 0.0, HIP_HALF_WIDTH], [0.0, 0.0, -HIP_HALF_WIDTH]])
    grf = np.zeros((2, 3))
    grf[:, 1] = [MASS * 9.81 if c else 0.0 for c in contact]
    values = dict(
        t=t,
        body_pos=BODY_ORIGIN.copy(),
        body_R=np.repeat(np.eye(3)[None], nb, axis=0),
        body_vel=np.zeros((nb, 3)),
        body_omega=np.zeros((nb, 3)),
        com_pos=np.array([0.0, 0.95, 0.0]),
        com_vel=np.zeros(3),
        foot_pos=foot_pos,
        foot_grf=grf,
        muscle_force=np.zeros(creature.model.n_muscles),
        pair_r=creature.pair_r(),
        joint_pos=creature.joint_pos.copy(),
    )
    values.update(overrides)
    return Sensors(**values)


def zero_constants(model: ControlModel) -> dict:
    """Parameters with every constant excitation 0 (feedback effects visible alone)."""
    return {f"const.{phase}.{u}": 0.0 for u in model.unique_names() for phase in ("stance", "swing")}
