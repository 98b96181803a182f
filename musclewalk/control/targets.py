"""Target features (§4.2, eq 10-13) and the semantic feature angles.

All targets live in a world-aligned facing frame: Y up, forward = the trunk's X axis projected on the
ground (heading psi, rotation about +Y; psi = 0 faces +X, positive psi = turned to the LEFT). Every
body orientation is written R = R_y(yaw) R_z(pitch) R_x(roll) (see `rotations.py`); the feature angles
map onto (pitch, roll) as follows, chosen so that each positive angle has the obvious meaning:

=====================  =====================================  ==========================
feature angle          positive means                         pitch, roll
=====================  =====================================  ==========================
trunk lean theta       trunk leans forward                    pitch = -theta
trunk side lean phi    trunk leans LEFT (into a +psi turn)    roll  = -phi
head pitch             head pitched forward (nose down)       pitch = -theta
hip flexion theta_hip  upper leg swung forward                pitch = +theta_hip
hip abduction phi_hip  upper leg moved outward (away from     right leg: roll = -phi_hip,
                       the midline)                           left leg:  roll = +phi_hip
knee flexion           lower leg rotated backward relative    R_lower = R_upper R_z(-theta_knee)
                       to the upper leg
foot pitch             toes up relative to the ground         pitch = +theta_ankle
=====================  =====================================  ==========================

Distances and speeds entering the target laws are made dimensionless so one default parameter set
suits creatures of any size: distances by ``leg_length`` L, speeds by sqrt(g L) (Froude scaling).

Balance quantities for the upper-leg targets (eq 12-13), for the swing leg s with stance foot o:

- d_S = (COM - foot_o) . forward / L           (COM ahead of the stance foot -> positive)
- d_C = (COM - foot_o) . outward_s / L         (outward_s = the facing frame's right axis for the
  right leg, its left axis for the left leg)
- v_S = v_COM . forward, v_C = v_COM . outward_s, both / sqrt(g L); the target speed likewise.

With these signs eq 12-13 stabilise (SIMBICON / Raibert foot placement) for kp > 0 and kd < 0:
a COM ahead of / outside the stance foot, or a COM faster than the target / moving outward, moves the
swing foot forward / outward.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np

from .rotations import rot_y, rot_z, wrap_angle, yaw_pitch_roll


def trunk_target_angles(
    theta0: float,
    k_speed: float,
    k_heading: float,
    target_speed: float,
    com_forward_speed: float,
    target_heading: float,
    trunk_heading: float,
) -> tuple:
    """Eq 10-11 (speeds already in Froude units). Returns (lean forward theta, side lean left phi)."""
    theta = theta0 + k_speed * (target_speed - com_forward_speed)
    phi = k_heading * wrap_angle(target_heading - trunk_heading)
    return theta, phi


def upper_leg_target_angles(
    theta0: float,
    kp_sagittal: float,
    kd_sagittal: float,
    phi0: float,
    kp_coronal: float,
    kd_coronal: float,
    d_sagittal: float,
    d_coronal: float,
    target_speed: float,
    v_sagittal: float,
    v_coronal: float,
) -> tuple:
    """Eq 12-13 (dimensionless inputs, see module doc). Returns (hip flexion, hip abduction)."""
    theta = theta0 + kp_sagittal * d_sagittal + kd_sagittal * (target_speed - v_sagittal)
    phi = phi0 + kp_coronal * d_coronal - kd_coronal * v_coronal
    return theta, phi


def lower_leg_target(R_upper: np.ndarray, knee_flexion: float) -> np.ndarray:
    """Target lower-leg orientation: a fixed sagittal angle relative to the current upper leg."""
    return R_upper @ rot_z(-knee_flexion)


# measured feature angles (inverse maps) ----------------------------------------------------------


def trunk_angles(R: np.ndarray) -> tuple:
    """(heading psi, lean forward theta, side lean left phi) of a trunk rotation matrix."""
    yaw, pitch, roll = yaw_pitch_roll(R)
    return float(yaw), -float(pitch), -float(roll)


def upper_leg_angles(R: np.ndarray, side: int) -> tuple:
    """(hip flexion, hip abduction) of an upper-leg rotation matrix; side 0 = right, 1 = left."""
    _, pitch, roll = yaw_pitch_roll(R)
    return float(pitch), (-float(roll) if side == 0 else float(roll))


def knee_flexion(R_upper: np.ndarray, R_lower: np.ndarray) -> float:
    """Sagittal flexion of the lower leg relative to the upper leg (about the upper leg's Z axis)."""
    rel = R_upper.T @ R_lower
    return -math.atan2(rel[1, 0], rel[0, 0])


def ankle_dorsiflexion(R_lower: np.ndarray, R_foot: np.ndarray, twist: float = 0.0) -> float:
    """Sagittal rotation of the foot relative to the lower leg (about the ankle frame's Z axis, the
    lower leg's turned by the ankle's ``twist`` about the vertical, `ControlModel.ankle_twist`;
    positive = toes up); in the base pose ``ankle0 - (upper_leg_pitch0 - knee0)``."""
    rel = R_lower.T @ R_foot
    if twist != 0.0:
        rel = _untwist(twist) @ rel
    return math.atan2(rel[1, 0], rel[0, 0])


@functools.lru_cache(maxsize=8)
def _untwist(twist: float) -> np.ndarray:
    """rot_y(-twist), built once per ankle twist (the per-control-step path reads it)."""
    untwist = rot_y(-twist)
    untwist.flags.writeable = False
    return untwist


def foot_pitch(R: np.ndarray) -> float:
    """Pitch of the foot frame relative to the ground plane (positive = toes up)."""
    return float(yaw_pitch_roll(R)[1])


def swing_foot_pitch_targets(
    ankle_theta: float, follow_shank: float, lower_leg_pitch: Sequence[float], lower_leg_pitch0: float
) -> tuple:
    """(right, left) foot pitch targets: the paper's ``ankle_theta`` relative to the ground (§4.2)
    plus ``follow_shank`` times each lower leg's pitch change from the base pose (beyond the paper;
    1 keeps the ankle at its base-pose angle plus ankle_theta - ankle0)."""
    return tuple(ankle_theta + follow_shank * (p - lower_leg_pitch0) for p in lower_leg_pitch)


def base_pose_features(
    body_pos: np.ndarray,
    body_R: np.ndarray,
    trunk: int,
    head: int | None,
    upper: Sequence[int],
    lower: Sequence[int],
    foot: Sequence[int],
) -> dict:
    """Base-pose angles for `ControlModel` (trunk_pitch0, upper_leg_pitch0, knee0, ankle0,
    head_pitch0, head_offset, ankle_twist) from base-pose body transforms; leg values are the mean of
    both sides, except ankle_twist (right, left)."""
    body_pos = np.asarray(body_pos, float)
    body_R = np.asarray(body_R, float)
    _, trunk_lean, _ = trunk_angles(body_R[trunk])
    flexion = [upper_leg_angles(body_R[upper[s]], s)[0] for s in (0, 1)]
    knee = [knee_flexion(body_R[upper[s]], body_R[lower[s]]) for s in (0, 1)]
    ankle = [foot_pitch(body_R[foot[s]]) for s in (0, 1)]
    twist = [float(yaw_pitch_roll(body_R[lower[s]].T @ body_R[foot[s]])[0]) + 0.0 for s in (0, 1)]
    out = {
        "trunk_pitch0": trunk_lean,
        "upper_leg_pitch0": float(np.mean(flexion)),
        "knee0": float(np.mean(knee)),
        "ankle0": float(np.mean(ankle)),
        "head_pitch0": 0.0,
        "head_offset": [0.0, 0.0, 0.0],
        "ankle_twist": twist,
    }
    if head is not None:
        out["head_pitch0"] = trunk_angles(body_R[head])[1]
        out["head_offset"] = (body_R[trunk].T @ (body_pos[head] - body_pos[trunk])).tolist()
    return out
