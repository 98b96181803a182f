"""One control step's sensor snapshot (world frame: Y up, X initial forward, Z right)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Sensors:
    """Produced by the sim stage each control step.

    body_*: per body (index = the ControlModel's body indices): frame origin, rotation body->world,
    origin velocity, world angular velocity. foot_pos / foot_grf: (2, 3), index 0 = right, 1 = left;
    foot_pos = mean of the foot's contact points, foot_grf = ground reaction force on the foot.
    muscle_force: tendon force per muscle, N. pair_r: eq 9 moment arm per (muscle, joint) pair (see
    `jacobian.moment_arm_vectors`); joint_pos: joint centres.
    """

    t: float
    body_pos: np.ndarray
    body_R: np.ndarray
    body_vel: np.ndarray
    body_omega: np.ndarray
    com_pos: np.ndarray
    com_vel: np.ndarray
    foot_pos: np.ndarray
    foot_grf: np.ndarray
    muscle_force: np.ndarray
    pair_r: np.ndarray
    joint_pos: np.ndarray
    foot_contact_vel: np.ndarray | None = None

    def check(self, control_model) -> None:
        """Shape check against a ControlModel (ValueError); meant for tests / first step, not every step."""
        cm = control_model
        nb = np.shape(self.body_pos)[0]
        expected = {
            "body_pos": (nb, 3),
            "body_R": (nb, 3, 3),
            "body_vel": (nb, 3),
            "body_omega": (nb, 3),
            "com_pos": (3,),
            "com_vel": (3,),
            "foot_pos": (2, 3),
            "foot_grf": (2, 3),
            "muscle_force": (cm.n_muscles,),
            "pair_r": (cm.n_pairs, 3),
            "joint_pos": (len(cm.joints), 3),
        }
        for name, shape in expected.items():
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"Sensors.{name}: shape {np.shape(getattr(self, name))}, expected {shape}")
        bodies = [cm.trunk_body, *cm.upper_body, *cm.lower_body, *cm.foot_body]
        if cm.head_body is not None:
            bodies.append(cm.head_body)
        if max(bodies) >= nb:
            raise ValueError(f"Sensors: {nb} bodies, but the ControlModel uses body index {max(bodies)}")
