"""Base-pose forward kinematics in numpy (all coordinates zero), no OpenSim needed."""

from __future__ import annotations

import numpy as np


def rotation_xyz(angles) -> np.ndarray:
    """Rotation matrix of OpenSim's body-fixed X-Y-Z orientation angles (rad)."""
    ax, ay, az = angles
    cx, sx, cy, sy, cz, sz = np.cos(ax), np.sin(ax), np.cos(ay), np.sin(ay), np.cos(az), np.sin(az)
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rx @ ry @ rz


def base_pose_transforms(root: str, root_height: float, joints) -> dict[str, tuple]:
    """Body name -> (R, p) in the world for the base pose.

    ``joints``: iterable of (parent, child, location_in_parent, orientation_xyz); the child frame
    coincides with the joint frame (child offsets are identity in generated models).
    """
    out = {root: (np.eye(3), np.array([0.0, root_height, 0.0]))}
    pending = list(joints)
    while pending:
        progressed = False
        for item in list(pending):
            parent, child, loc, ori = item
            if parent in out:
                rp, pp = out[parent]
                out[child] = (rp @ rotation_xyz(ori), pp + rp @ np.asarray(loc, float))
                pending.remove(item)
                progressed = True
        if not progressed:
            raise ValueError(f"bodies not connected to the root: {[j[1] for j in pending]}")
    return out


def world_point(transforms, body: str, local) -> np.ndarray:
    r, p = transforms[body]
    return p + r @ np.asarray(local, float)


def path_length(transforms, points) -> float:
    """Length of a polyline path (eq. 8) given [(body, local_location), ...]."""
    world = np.array([world_point(transforms, b, loc) for b, loc in points])
    return float(np.sum(np.linalg.norm(np.diff(world, axis=0), axis=1)))


def bodies_beyond(joints, body):
    """``body`` and every body attached beyond it, given the model's (parent, child) pairs of body
    names (or of any other keys, e.g. indices)."""
    out = [body]
    for name in out:
        out += [child for parent, child in joints if parent == name and child not in out]
    return out
