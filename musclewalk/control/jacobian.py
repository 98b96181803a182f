"""Moment arms (eq 9) and muscle-based Jacobian-transpose feature control (§4.3, eq 14-19).

Moment-arm convention (shared with the sim stage): for a (muscle, joint k) pair, c is the path
segment crossing k, with ŝ_c its unit direction pointing from its point on the kinematic-CHILD side of
k toward its point on the PARENT side, and

    r_k = (p_c - j_k) x ŝ_c                                                   (9)

so F_M r_k is the torque the muscle applies to the child-side body about j_k (and -F_M r_k to the
parent side).

Feature control: a featured body b gets a PD force F̃_b (eq 14) and torque T̃_b (eq 15). For each
joint k of the chain from b to the root assumed stable, a rotation α_k about r_k moves b, giving the
desired joint torque (eq 16-17). When b is on the parent side of k (the trunk over a stance hip) the
muscle's torque on b is -r_k, so the chain sign σ_k = -1 replaces r_k by -r_k:

    τ̃_k = σ_k [ (r̂_k x (P_b - j_k)) . F̃_b + r̂_k . T̃_b ]                       (17)
    F̃_M = Σ_k τ̃_k / (m ||r_k||)      (k over chain joints, m = all joints M spans)   (18)
    ã_M = F̃_M / F_max                                                         (19)

Pairs with ||r_k|| below ``min_moment_arm`` contribute nothing (their direction is meaningless).

Eq 18 asks every muscle crossing k for the whole of τ̃_k on its own, so the weakest synergists
(small F_max ||r_k||) saturate first. Beyond the paper, `equal_activation_factors` blends in a
distribution by capacity: with weight β, each pair's share is multiplied by
F_max ||r_k|| / mean over the muscles crossing k of F_max ||r_k||, so at β = 1 every muscle crossing k
is asked for the same activation per unit of τ̃_k along its own direction,
ã = σ_k (r̂_k . moment) / (m mean_k(F_max ||r||)); at β = 0 it is eq 18 (and for muscles of equal
capacity the two coincide).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .rotations import rotation_log

DEFAULT_MIN_MOMENT_ARM = 1e-3  # m


def moment_arm_vectors(
    points_world: np.ndarray, pair_points: np.ndarray, joint_pos: np.ndarray, pair_joint: np.ndarray
) -> np.ndarray:
    """Eq 9 for every pair.

    points_world: (n_points, 3) world positions of all path points (all muscles, flattened).
    pair_points: (n_pairs, 2) indices into points_world of the crossing segment's
        [child-side point, parent-side point] (see `crossing_segment`).
    joint_pos: (n_joints, 3) joint centres; pair_joint: (n_pairs,) joint index per pair.
    Returns r (n_pairs, 3): torque on the child-side body per newton of tension.
    """
    points_world = np.asarray(points_world, float)
    pair_points = np.asarray(pair_points, dtype=np.intp)
    child = points_world[pair_points[:, 0]]
    direction = points_world[pair_points[:, 1]] - child
    length = np.sqrt(np.einsum("ij,ij->i", direction, direction))
    unit = direction / np.where(length > 0.0, length, 1.0)[:, None]
    arm = child - np.asarray(joint_pos, float)[np.asarray(pair_joint, dtype=np.intp)]
    return cross3(arm, unit)


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (n, 3) arrays (np.cross has high overhead for small n)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def crossing_segment(path_bodies: Sequence[int], child_side_bodies: set) -> tuple:
    """Local indices (child-side point, parent-side point) of the first path segment that crosses
    the joint whose child subtree is ``child_side_bodies``; ValueError when no segment crosses it."""
    for i in range(len(path_bodies) - 1):
        a = path_bodies[i] in child_side_bodies
        b = path_bodies[i + 1] in child_side_bodies
        if a != b:
            return (i, i + 1) if a else (i + 1, i)
    raise ValueError("muscle path does not cross the joint")


def pd_force(kp: float, kv: float, target_pos, pos, target_vel, vel) -> np.ndarray:
    """Eq 14."""
    return kp * (np.asarray(target_pos) - pos) + kv * (np.asarray(target_vel) - vel)


def pd_torque(kq: float, kw: float, target_R: np.ndarray, R: np.ndarray, target_omega, omega) -> np.ndarray:
    """Eq 15: kq * log(Q̃ Qᵀ) (world rotation vector from current to target) + kw (ω̃ - ω)."""
    error = rotation_log((np.asarray(target_R) @ np.asarray(R).T)[None])[0]
    return kq * error + kw * (np.asarray(target_omega) - omega)


def add_force_moments(moment: np.ndarray, pairs: np.ndarray, lever: np.ndarray, force) -> None:
    """Eq 17's force part for a body's chain: adds (P_b - j_k) x F̃_b (``lever`` x ``force``, rows
    (len(pairs), 3)) to ``moment[pairs]`` in place; one 3 x 3 product, cheaper than np.cross for
    the few pairs of one chain."""
    fx, fy, fz = force
    moment[pairs] += lever @ np.array(((0.0, -fz, fy), (fz, 0.0, -fx), (-fy, fx, 0.0)))


def feature_muscle_forces(
    pair_moment: np.ndarray,
    pair_r: np.ndarray,
    pair_weight: np.ndarray,
    pair_muscle: np.ndarray,
    n_muscles: int,
    min_moment_arm: float = DEFAULT_MIN_MOMENT_ARM,
    pair_factor: np.ndarray | None = None,
) -> np.ndarray:
    """Eq 17-18: Σ_k σ_k (r_k . moment_k) / (m ||r_k||^2) per muscle.

    pair_moment: (n_pairs, 3), T̃_b + (P_b - j_k) x F̃_b per pair (eq 17; `add_force_moments`);
    pair_weight: (n_pairs,) σ_k / m for pairs in the chain of an active feature (m = number of
    joints the pair's muscle spans), 0 otherwise. Divide by F_max for eq 19 (or fold 1/F_max into
    pair_weight). pair_factor: (n_pairs,) multiplies each
    pair's share (`equal_activation_factors`), None for eq 18 itself.
    """
    r = pair_r
    r2 = np.einsum("ij,ij->i", r, r)
    projected = np.einsum("ij,ij->i", r, pair_moment)
    valid = r2 > min_moment_arm * min_moment_arm
    scale = pair_weight * valid / np.maximum(r2, min_moment_arm * min_moment_arm)
    if pair_factor is not None:
        scale = scale * pair_factor
    return np.bincount(pair_muscle, weights=projected * scale, minlength=n_muscles)


def equal_activation_factors(
    pair_r: np.ndarray,
    pair_fmax: np.ndarray,
    pair_joint: np.ndarray,
    n_joints: int,
    weight: float,
    min_moment_arm: float = DEFAULT_MIN_MOMENT_ARM,
) -> np.ndarray:
    """Per pair, (1 - weight) + weight F_max ||r_k|| / mean_k(F_max ||r||), the mean over the pairs
    of joint k with a valid moment arm (module docstring)."""
    r_norm = np.sqrt(np.einsum("ij,ij->i", pair_r, pair_r))
    valid = r_norm > min_moment_arm
    capacity = pair_fmax * r_norm * valid
    total = np.bincount(pair_joint, weights=capacity, minlength=n_joints)
    count = np.bincount(pair_joint, weights=valid.astype(float), minlength=n_joints)
    mean = total / np.maximum(count, 1.0)
    share = capacity / np.where(mean > 0.0, mean, 1.0)[pair_joint]
    return (1.0 - weight) + weight * share
