"""Concrete, fully evaluated description of a creature (output of the template expander).

Conventions (OpenSim world): Y up, X forward, Z to the creature's right. Every body frame has
its origin at the joint that connects it to its parent. In the base pose all coordinates are
zero; a body's sagittal ``tilt`` and its joint's ``twist`` about the parent's vertical axis are
built into its joint's parent frame orientation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

AXES = "xyz"


@dataclass
class Shape:
    kind: str  # capsule | box | sphere | ellipsoid
    center: np.ndarray  # in body frame
    radius: float = 0.0  # capsule, sphere
    length: float = 0.0  # capsule: cylinder length
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))  # capsule axis
    size: np.ndarray = field(default_factory=lambda: np.zeros(3))  # box edges / ellipsoid radii

    def volume(self) -> float:
        if self.kind == "capsule":
            return np.pi * self.radius**2 * self.length + 4.0 / 3.0 * np.pi * self.radius**3
        if self.kind == "box":
            return float(np.prod(self.size))
        if self.kind == "sphere":
            return 4.0 / 3.0 * np.pi * self.radius**3
        if self.kind == "ellipsoid":
            return 4.0 / 3.0 * np.pi * float(np.prod(self.size))
        raise ValueError(self.kind)

    def inertia_about_center(self, mass: float) -> np.ndarray:
        """3x3 inertia about the shape centre, body axes (capsule treated as a solid cylinder
        of the same mass whose length includes the end caps)."""
        if self.kind == "capsule":
            r, length = self.radius, self.length + 2 * self.radius
            axial = 0.5 * mass * r**2
            transverse = mass * (3 * r**2 + length**2) / 12.0
            a = self.axis / np.linalg.norm(self.axis)
            return transverse * np.eye(3) + (axial - transverse) * np.outer(a, a)
        if self.kind == "box":
            sx, sy, sz = self.size
            return np.diag([mass * (sy**2 + sz**2), mass * (sx**2 + sz**2), mass * (sx**2 + sy**2)]) / 12.0
        if self.kind == "sphere":
            return np.eye(3) * 0.4 * mass * self.radius**2
        if self.kind == "ellipsoid":
            a, b, c = self.size
            return np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * mass / 5.0
        raise ValueError(self.kind)


@dataclass
class CoordinateSpec:
    name: str
    axis: np.ndarray  # rotation axis in the joint frame
    range_deg: tuple[float, float]
    generic: str  # name without side suffix, e.g. "hip_flexion"


@dataclass
class JointSpec:
    name: str
    # root | hip | knee | ankle | toe | spine | neck | head_chain | shoulder | elbow | tail
    kind: str
    parent: str
    child: str
    location: np.ndarray  # joint centre in parent frame
    orientation: np.ndarray  # XYZ body-fixed angles (rad) of the joint frame in parent
    coordinates: list[CoordinateSpec]
    side: Optional[str] = None


@dataclass
class BodySpec:
    name: str
    role: str  # root | upper | lower | foot | toe | spine | head | arm | neck | tail
    parent: Optional[str]
    shapes: list[Shape]
    side: Optional[str] = None
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    tilt: float = 0.0  # world sagittal angle in the base pose (rad)
    min_inertia: float = 0.0  # floor on the principal moments of inertia (kg m^2)


@dataclass
class PathPointSpec:
    name: str
    body: str
    location: np.ndarray
    ranges: dict[str, tuple[float, float]]  # free components: axis letter -> (min, max)


@dataclass
class MuscleSpec:
    name: str
    unique: str  # shared name of mirrored muscles
    side: Optional[str]
    points: list[PathPointSpec]
    max_isometric_force: float
    optimal_fiber_length: float
    tendon_slack_length: float
    pennation: float
    property_rule: str  # "full": Fmax, l_opt, l_slack free; "lopt_only": l_slack derived
    property_group: str
    function: dict[str, int]  # generic coordinate name -> expected moment-arm sign
    extra_roles: list[str] = field(default_factory=list)
    source: str = ""
    mirror_of: Optional[str] = None  # right-side twin for left muscles
    rigid_tendon: bool = False  # Millard ignore_tendon_compliance (models/physics.yaml)


@dataclass
class ContactSpec:
    name: str
    body: str
    location: np.ndarray
    radius: float
    foot: Optional[str] = None  # 'r' | 'l'


@dataclass
class SpringSpec:
    """Linear spring-damper on a coordinate; gains optionally exposed as passive parameters."""

    name: str
    coordinate: str
    stiffness: float
    damping: float
    parameter: Optional[str] = None  # shared parameter name (mirrored springs share it)


@dataclass
class LimitSpec:
    name: str
    coordinate: str
    lower_deg: float
    upper_deg: float
    stiffness: float  # N·m/deg beyond the limit (OpenSim CoordinateLimitForce)
    damping: float


@dataclass
class CreatureSpec:
    name: str
    source: str
    bodies: list[BodySpec]
    joints: list[JointSpec]
    muscles: list[MuscleSpec]
    contacts: list[ContactSpec]
    springs: list[SpringSpec]
    limits: list[LimitSpec]
    features: dict  # trunk, head, head_offset, legs: {side: {upper, lower, foot, toe}}
    expected: dict  # expected counts: bodies, dofs, muscles
    parameters: dict  # resolved part parameters, e.g. {"legs.upper": 0.4}
    templates: dict  # part -> template name
    physics: dict = field(default_factory=dict)  # models/physics.yaml + the creature's overrides
    root_height: float = 1.0  # root origin height above ground in the base pose

    @property
    def total_mass(self) -> float:
        return float(sum(b.mass for b in self.bodies))

    def body(self, name: str) -> BodySpec:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def dof_count(self) -> int:
        return sum(len(j.coordinates) for j in self.joints)
