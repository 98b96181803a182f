"""Rotation helpers for the controller (pure numpy, batched where it matters).

World frame (OpenSim): Y up, X the initial forward direction, Z to the creature's right.
Every orientation is decomposed in the *facing* frame as

    R = R_y(yaw) @ R_z(pitch) @ R_x(roll)

(transversal, then sagittal, then coronal, the order of §4.2), each a right-hand rotation:

- yaw about +Y: yaw = 0 faces +X, positive yaw turns the creature to its LEFT;
- pitch about the facing frame's +Z (lateral, pointing right): positive pitch lifts the front of a
  body and moves the bottom of a hanging segment forward (OpenSim's hip_flexion / ankle_angle sign);
- roll about the facing frame's +X (forward): positive roll tips the top of a body to the right.

The feature angles of the controller (trunk lean, hip flexion, ...) are named semantic angles that map
onto this decomposition in `targets.py`.
"""

from __future__ import annotations

import math

import numpy as np

_NEAR_PI = math.pi - 1e-4


def rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def facing_rotations(yaw, pitch, roll) -> np.ndarray:
    """R_y(yaw) @ R_z(pitch) @ R_x(roll) for arrays of angles; returns shape (n, 3, 3)."""
    yaw, pitch, roll = np.broadcast_arrays(
        np.atleast_1d(np.asarray(yaw, float)),
        np.atleast_1d(np.asarray(pitch, float)),
        np.atleast_1d(np.asarray(roll, float)),
    )
    (cy, ca, cb), (sy, sa, sb) = (
        np.cos((yaw.ravel(), pitch.ravel(), roll.ravel())),
        np.sin((yaw.ravel(), pitch.ravel(), roll.ravel())),
    )
    sa_cb = sa * cb
    sa_sb = sa * sb
    out = np.empty((cy.size, 3, 3))
    out[:, 0, 0] = cy * ca
    out[:, 0, 1] = sy * sb - cy * sa_cb
    out[:, 0, 2] = cy * sa_sb + sy * cb
    out[:, 1, 0] = sa
    out[:, 1, 1] = ca * cb
    out[:, 1, 2] = -ca * sb
    out[:, 2, 0] = -sy * ca
    out[:, 2, 1] = sy * sa_cb + cy * sb
    out[:, 2, 2] = cy * cb - sy * sa_sb
    return out


def few_facing_rotations(yaws, pitches, rolls) -> np.ndarray:
    """`facing_rotations` for a handful of plain floats (faster than numpy below ~20 rotations)."""
    cos, sin = math.cos, math.sin
    out = []
    for yaw, pitch, roll in zip(yaws, pitches, rolls):
        cy, sy, ca, sa, cb, sb = cos(yaw), sin(yaw), cos(pitch), sin(pitch), cos(roll), sin(roll)
        sa_cb, sa_sb = sa * cb, sa * sb
        out.append(
            (
                (cy * ca, sy * sb - cy * sa_cb, cy * sa_sb + sy * cb),
                (sa, ca * cb, -ca * sb),
                (-sy * ca, sy * sa_cb + cy * sb, cy * cb - sy * sa_sb),
            )
        )
    return np.array(out)


def yaw_pitch_roll(R: np.ndarray) -> tuple:
    """Inverse of `facing_rotations` (arrays of shape (..., 3, 3)); pitch in [-pi/2, pi/2]."""
    R = np.asarray(R, float)
    yaw = np.arctan2(-R[..., 2, 0], R[..., 0, 0])
    pitch = np.arcsin(np.clip(R[..., 1, 0], -1.0, 1.0))
    roll = np.arctan2(-R[..., 1, 2], R[..., 1, 1])
    return yaw, pitch, roll


def heading_of(R: np.ndarray) -> float:
    """Yaw of a body whose X axis is its forward direction (its X axis projected on the ground).

    The trunk heading psi of the controller's facing frame and of the termination rules; the
    scalar form of `yaw_pitch_roll`'s yaw."""
    return math.atan2(-R[2, 0], R[0, 0])


def wrap_angle(angle: float) -> float:
    """Wrap to (-pi, pi]."""
    return angle - 2.0 * math.pi * math.floor((angle + math.pi) / (2.0 * math.pi))


_LOG_ROWS_A = (slice(None), (2, 0, 1), (1, 2, 0))
_LOG_ROWS_B = (slice(None), (1, 2, 0), (2, 0, 1))


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Rotation vectors (axis * angle, angle in [0, pi]) of rotation matrices of shape (n, 3, 3)."""
    R = np.asarray(R, float)
    w = R[_LOG_ROWS_A] - R[_LOG_ROWS_B]  # 2 sin(angle) axis
    w_norm = np.sqrt(np.einsum("ij,ij->i", w, w))
    angle = np.arctan2(0.5 * w_norm, 0.5 * (R.trace(axis1=1, axis2=2) - 1.0))
    out = w * (angle / np.maximum(w_norm, 1e-300))[:, None]
    if angle.max() > _NEAR_PI:
        for i in np.flatnonzero(angle > _NEAR_PI):
            # The antisymmetric part vanishes near pi: take the axis from the symmetric part,
            # (R + R^T)/2 = cos(angle) I + (1 - cos(angle)) axis axis^T.
            c = math.cos(angle[i])
            outer = (0.5 * (R[i] + R[i].T) - c * np.eye(3)) / (1.0 - c)
            k = int(np.argmax(np.diag(outer)))
            axis = outer[:, k] / math.sqrt(max(outer[k, k], 1e-300))
            if axis @ w[i] < 0.0:
                axis = -axis
            out[i] = axis * angle[i]
    return out
