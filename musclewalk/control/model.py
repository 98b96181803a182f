"""Static description of a creature as the controller sees it (built once per model by the sim stage).

Side order everywhere: index 0 = right ('r'), index 1 = left ('l').

Sign conventions of the base-pose angles (see `targets.py` for the full list):

- ``trunk_pitch0``: forward lean of the trunk body frame, rad (positive = leans forward);
- ``upper_leg_pitch0``: hip flexion of the upper-leg frame relative to the facing frame
  (positive = knee ahead of the hip);
- ``knee0``: flexion of the lower-leg frame relative to the upper-leg frame (positive = flexed);
- ``ankle0``: pitch of the foot frame relative to the ground plane (positive = toes up);
- ``head_pitch0``: forward pitch of the head frame (positive = nose down);
- ``head_offset``: head-frame origin minus trunk-frame origin, in trunk coordinates, m;
- ``ankle_twist``: (right, left) yaw of the foot frame relative to the lower-leg frame about the
  vertical, rad (+ turns the toes to the left; a tibial torsion turns the right foot by - and the
  left by +; 0 for the paper's creatures).

`base_pose_features` computes all of them from the base-pose body transforms.

Structural assumptions (checked where possible):

- the trunk is the parent body of both hip joints (the hip muscles connect trunk and upper leg);
- along the trunk->head chain each ``head_chain`` joint has the head on its child side;
- the trunk body's X axis is its forward direction (heading = X axis projected on the ground).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..constants import CONTROL_NORMALIZATION_GRAVITY
from .delays import delay_steps_from_seconds
from .targets import base_pose_features  # re-exported for the sim stage

LEG_SIDES = ("r", "l")
SIDE_INDEX = {"r": 0, "l": 1, None: 2}
JOINT_KINDS = ("hip", "knee", "ankle", "toe", "head_chain", "other")
LEG_JOINT_KINDS = ("hip", "knee", "ankle", "toe")

ROLES = frozenset(
    {
        "hip",
        "hip_flexor",
        "hip_extensor",
        "knee",
        "knee_extensor",
        "ankle",
        "ankle_extensor",
        "head_chain",
        "arm",
        "tail",
        # informative only: accepted, not used by any rule
        "hip_abductor",
        "hip_adductor",
        "knee_flexor",
        "ankle_flexor",
        "toe",
    }
)
LEG_ROLES = frozenset(
    {
        "hip",
        "hip_flexor",
        "hip_extensor",
        "knee",
        "knee_extensor",
        "ankle",
        "ankle_extensor",
        "hip_abductor",
        "hip_adductor",
        "knee_flexor",
        "ankle_flexor",
        "toe",
    }
)
# role -> joint kind the muscle must span on its own side
_ROLE_JOINT = {"hip": "hip", "knee": "knee", "ankle": "ankle", "head_chain": "head_chain"}

__all__ = [
    "MuscleInfo",
    "JointInfo",
    "ControlModel",
    "base_pose_features",
    "LEG_SIDES",
    "SIDE_INDEX",
    "JOINT_KINDS",
    "ROLES",
]


@dataclass(frozen=True)
class MuscleInfo:
    """One muscle. ``delay`` in s (0.020 foot-attached, 0.010 lower leg, 0.005 otherwise);
    ``unique`` = name without side suffix (mirrored muscles share control parameters)."""

    name: str
    side: str | None
    fmax: float
    delay: float
    unique: str
    roles: frozenset = frozenset()

    def __post_init__(self):
        object.__setattr__(self, "roles", frozenset(self.roles))
        if self.side not in SIDE_INDEX:
            raise ValueError(f"muscle {self.name!r}: side must be 'r', 'l' or None, got {self.side!r}")
        if not (math.isfinite(self.fmax) and self.fmax > 0.0):
            raise ValueError(f"muscle {self.name!r}: fmax must be positive, got {self.fmax!r}")
        if not (math.isfinite(self.delay) and self.delay >= 0.0):
            raise ValueError(f"muscle {self.name!r}: delay must be >= 0, got {self.delay!r}")
        unknown = self.roles - ROLES
        if unknown:
            raise ValueError(f"muscle {self.name!r}: unknown roles {sorted(unknown)}")
        if self.side is None and self.roles & LEG_ROLES:
            raise ValueError(
                f"muscle {self.name!r}: leg roles {sorted(self.roles & LEG_ROLES)} need side 'r' or 'l'"
            )


@dataclass(frozen=True)
class JointInfo:
    name: str
    kind: str
    side: str | None = None

    def __post_init__(self):
        if self.kind not in JOINT_KINDS:
            raise ValueError(f"joint {self.name!r}: kind must be one of {JOINT_KINDS}, got {self.kind!r}")
        if self.side not in SIDE_INDEX:
            raise ValueError(f"joint {self.name!r}: side must be 'r', 'l' or None, got {self.side!r}")
        if self.kind in LEG_JOINT_KINDS and self.side is None:
            raise ValueError(f"joint {self.name!r}: a {self.kind} joint needs side 'r' or 'l'")


def _pair2(value, what: str) -> tuple:
    if len(value) != 2:
        raise ValueError(f"{what}: expected (right, left), got {value!r}")
    return tuple(value)


@dataclass
class ControlModel:
    """Everything the controller needs to know about a creature; indices refer to the sensor arrays.

    ``pair_muscle[p]`` / ``pair_joint[p]``: one entry per (muscle, spanned joint). Body indices
    (``trunk_body``, ``head_body``, ``upper_body`` = (right, left), ...) index ``Sensors.body_*``.
    ``leg_length`` = hip height in the base pose (m); ``dt`` = control interval (s), every muscle delay
    must be an integer multiple of it.
    """

    muscles: list
    joints: list
    pair_muscle: np.ndarray
    pair_joint: np.ndarray
    trunk_body: int
    upper_body: tuple
    lower_body: tuple
    foot_body: tuple
    total_mass: float
    leg_length: float
    dt: float
    head_body: int | None = None
    gravity: float = CONTROL_NORMALIZATION_GRAVITY
    trunk_pitch0: float = 0.0
    upper_leg_pitch0: float = 0.0
    knee0: float = 0.0
    ankle0: float = 0.0
    head_pitch0: float = 0.0
    head_offset: np.ndarray = field(default_factory=lambda: np.zeros(3))
    ankle_twist: tuple = (0.0, 0.0)
    head_gain_mass: float | None = None  # kg, the M of the head gains' units; None: total_mass
    body_names: list | None = None
    n_spanned: np.ndarray | None = None

    def __post_init__(self):
        self.muscles = list(self.muscles)
        self.joints = list(self.joints)
        nm, nj = len(self.muscles), len(self.joints)
        if nm == 0:
            raise ValueError("ControlModel: no muscles")
        self.pair_muscle = np.asarray(self.pair_muscle, dtype=np.intp).reshape(-1)
        self.pair_joint = np.asarray(self.pair_joint, dtype=np.intp).reshape(-1)
        if self.pair_muscle.shape != self.pair_joint.shape:
            raise ValueError("ControlModel: pair_muscle and pair_joint differ in length")
        if self.pair_muscle.size and (self.pair_muscle.min() < 0 or self.pair_muscle.max() >= nm):
            raise ValueError("ControlModel: pair_muscle index out of range")
        if self.pair_joint.size and (self.pair_joint.min() < 0 or self.pair_joint.max() >= nj):
            raise ValueError("ControlModel: pair_joint index out of range")
        keys = set(zip(self.pair_muscle.tolist(), self.pair_joint.tolist()))
        if len(keys) != self.pair_muscle.size:
            raise ValueError("ControlModel: duplicate (muscle, joint) pairs")
        names = [m.name for m in self.muscles]
        if len(set(names)) != nm:
            raise ValueError("ControlModel: duplicate muscle names")

        spanned = np.bincount(self.pair_muscle, minlength=nm)
        if self.n_spanned is not None and not np.array_equal(np.asarray(self.n_spanned), spanned):
            raise ValueError("ControlModel: n_spanned disagrees with the pairs")
        self.n_spanned = spanned

        self.upper_body = _pair2(self.upper_body, "upper_body")
        self.lower_body = _pair2(self.lower_body, "lower_body")
        self.foot_body = _pair2(self.foot_body, "foot_body")
        self.head_offset = np.asarray(self.head_offset, float).reshape(3)
        self.ankle_twist = tuple(float(a) for a in self.ankle_twist)
        if len(self.ankle_twist) != 2:
            raise ValueError("ControlModel: ankle_twist needs (right, left)")
        for name in ("total_mass", "leg_length", "dt", "gravity", "head_gain_mass"):
            value = getattr(self, name)
            if name == "head_gain_mass" and value is None:
                continue
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"ControlModel: {name} must be positive, got {value!r}")

        # one hip, knee and ankle per side
        self.leg_joint = {}
        for j, info in enumerate(self.joints):
            if info.kind in ("hip", "knee", "ankle"):
                key = (info.kind, info.side)
                if key in self.leg_joint:
                    raise ValueError(f"ControlModel: two {info.kind} joints on side {info.side!r}")
                self.leg_joint[key] = j
        for kind in ("hip", "knee", "ankle"):
            for side in LEG_SIDES:
                if (kind, side) not in self.leg_joint:
                    raise ValueError(f"ControlModel: missing {kind} joint on side {side!r}")
        self.head_chain_joints = [j for j, info in enumerate(self.joints) if info.kind == "head_chain"]

        spans = [set() for _ in range(nm)]
        for m, j in zip(self.pair_muscle.tolist(), self.pair_joint.tolist()):
            spans[m].add((self.joints[j].kind, self.joints[j].side))
        for m, info in enumerate(self.muscles):
            for role, kind in _ROLE_JOINT.items():
                if role not in info.roles:
                    continue
                ok = any(k == kind and (kind == "head_chain" or s == info.side) for k, s in spans[m])
                if not ok:
                    raise ValueError(
                        f"muscle {info.name!r} has role {role!r} but spans no {kind} joint on its side"
                    )

        by_unique: dict = {}
        for info in self.muscles:
            by_unique.setdefault(info.unique, set()).add(info.roles)
        for unique, role_sets in by_unique.items():
            if len(role_sets) > 1:
                raise ValueError(f"muscles sharing unique name {unique!r} have different roles")

        self.delay_steps = delay_steps_from_seconds([m.delay for m in self.muscles], self.dt, names=names)

    # convenience -------------------------------------------------------------------------------
    @property
    def n_muscles(self) -> int:
        return len(self.muscles)

    @property
    def n_pairs(self) -> int:
        return int(self.pair_muscle.size)

    @property
    def has_head(self) -> bool:
        return (
            self.head_body is not None
            and bool(self.head_chain_joints)
            and any("head_chain" in m.roles for m in self.muscles)
        )

    def unique_names(self) -> list:
        """Unique muscle names in order of first appearance."""
        seen: dict = {}
        for m in self.muscles:
            seen.setdefault(m.unique, None)
        return list(seen)

    def unique_roles(self, unique: str) -> frozenset:
        for m in self.muscles:
            if m.unique == unique:
                return m.roles
        raise KeyError(unique)

    # dict / JSON -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ControlModel":
        """Build from plain data (e.g. JSON). Layout::

        {"muscles": [{"name", "side", "fmax", "delay", "unique", "roles": [...]}, ...],
         "joints":  [{"name", "kind", "side"}, ...],
         "pairs":   [[muscle, joint], ...]          # indices or names
         "bodies":  {"trunk": b, "head": b|null, "upper": [r, l], "lower": [r, l], "foot": [r, l]},
         "body_names": [...],                        # needed when bodies are given by name
         "total_mass", "leg_length", "dt", "gravity"?, "trunk_pitch0"?, "upper_leg_pitch0"?,
         "knee0"?, "ankle0"?, "head_pitch0"?, "head_offset"?: [x, y, z], "ankle_twist"?: [r, l],
         "head_gain_mass"?}
        """
        muscles = [
            MuscleInfo(
                name=m["name"],
                side=m.get("side"),
                fmax=float(m["fmax"]),
                delay=float(m["delay"]),
                unique=m.get("unique", m["name"]),
                roles=frozenset(m.get("roles", ())),
            )
            for m in d["muscles"]
        ]
        joints = [JointInfo(name=j["name"], kind=j["kind"], side=j.get("side")) for j in d["joints"]]
        muscle_index = {m.name: i for i, m in enumerate(muscles)}
        joint_index = {j.name: i for i, j in enumerate(joints)}
        body_names = d.get("body_names")
        body_index = {n: i for i, n in enumerate(body_names)} if body_names else {}

        def resolve(value, table, what):
            if value is None:
                return None
            if isinstance(value, str):
                if value not in table:
                    raise ValueError(f"from_dict: unknown {what} {value!r}")
                return table[value]
            return int(value)

        pairs = [
            (resolve(m, muscle_index, "muscle"), resolve(j, joint_index, "joint")) for m, j in d["pairs"]
        ]
        bodies = d["bodies"]
        kwargs = {
            k: d[k]
            for k in (
                "gravity",
                "trunk_pitch0",
                "upper_leg_pitch0",
                "knee0",
                "ankle0",
                "head_pitch0",
                "head_offset",
                "ankle_twist",
                "head_gain_mass",
            )
            if k in d
        }
        return cls(
            muscles=muscles,
            joints=joints,
            pair_muscle=[p[0] for p in pairs],
            pair_joint=[p[1] for p in pairs],
            trunk_body=resolve(bodies["trunk"], body_index, "body"),
            head_body=resolve(bodies.get("head"), body_index, "body"),
            upper_body=tuple(resolve(b, body_index, "body") for b in bodies["upper"]),
            lower_body=tuple(resolve(b, body_index, "body") for b in bodies["lower"]),
            foot_body=tuple(resolve(b, body_index, "body") for b in bodies["foot"]),
            total_mass=float(d["total_mass"]),
            leg_length=float(d["leg_length"]),
            dt=float(d["dt"]),
            body_names=list(body_names) if body_names else None,
            **kwargs,
        )

    def to_dict(self) -> dict:
        """Inverse of `from_dict` (indices, JSON-serialisable)."""
        out = {
            "muscles": [
                {
                    "name": m.name,
                    "side": m.side,
                    "fmax": m.fmax,
                    "delay": m.delay,
                    "unique": m.unique,
                    "roles": sorted(m.roles),
                }
                for m in self.muscles
            ],
            "joints": [{"name": j.name, "kind": j.kind, "side": j.side} for j in self.joints],
            "pairs": [[int(m), int(j)] for m, j in zip(self.pair_muscle, self.pair_joint)],
            "bodies": {
                "trunk": self.trunk_body,
                "head": self.head_body,
                "upper": list(self.upper_body),
                "lower": list(self.lower_body),
                "foot": list(self.foot_body),
            },
            "body_names": list(self.body_names) if self.body_names else None,
            "total_mass": self.total_mass,
            "leg_length": self.leg_length,
            "dt": self.dt,
            "gravity": self.gravity,
            "trunk_pitch0": self.trunk_pitch0,
            "upper_leg_pitch0": self.upper_leg_pitch0,
            "knee0": self.knee0,
            "ankle0": self.ankle0,
            "head_pitch0": self.head_pitch0,
            "head_offset": self.head_offset.tolist(),
            "ankle_twist": list(self.ankle_twist),
        }
        if self.head_gain_mass is not None:
            out["head_gain_mass"] = self.head_gain_mass
        return out
