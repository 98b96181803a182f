"""The model metadata (``MODEL.meta.json``) as typed, frozen objects: one dataclass per JSON object
whose fields are that object's keys, so that every consumer names what it reads.

``ModelMeta.from_dict`` checks the version and every key (a missing or unknown key, or an object
where a list belongs: one ValueError naming the file and the key); ``to_dict`` gives back the same
JSON data, key order included, so that a model's file is written byte for byte as before (lists
are tuples here and lists again in ``to_dict``; values keep their JSON types, an int stays an
int). Nested objects are written in field order, the order ``meta.build_meta`` has always written
(``physics`` in models/physics.yaml's order); the top level keeps the order of the file it was
read from. Optional keys that a file may lack (written before they existed) are None here and
absent from ``to_dict``.
Units: lengths in m, angles in rad, masses in kg, forces in N; frames as in models/README.md
(X forward, Y up, Z to the creature's right; a body frame's origin at the joint to its parent).
Building, writing and reading the file: ``musclewalk.model.meta``.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, Mapping, Optional

from ..constants import FIXED_STEP_RANGE

META_VERSION = 1  # the file's "musclewalk_meta"; another value is refused
VERSION_KEY = "musclewalk_meta"
# models/physics.yaml ``muscles``: Millard2012EquilibriumMuscle (the default), or the ideal force
# generators of the "no biomechanical constraints" ablation (Geijtenbeek et al. 2013 §6.3, thesis §7.5.3)
MILLARD_MUSCLES, IDEAL_MUSCLES = "millard", "ideal"
MUSCLE_MODELS = (MILLARD_MUSCLES, IDEAL_MUSCLES)
# how the "full"-rule muscle properties are optimized (models/physics.yaml muscle_properties):
# independent (the paper's): F_max, l_opt and l_slack each within its bounds; working_range:
# F_max, l_opt and the fibre's normalized length standing, l_slack derived from the path
INDEPENDENT_PROPERTIES, WORKING_RANGE_PROPERTIES = "independent", "working_range"
MUSCLE_PROPERTY_MODES = (INDEPENDENT_PROPERTIES, WORKING_RANGE_PROPERTIES)


def _optional():
    """A key that older files lack: None here, absent from ``to_dict`` (a None of a field
    declared without this is written as null)."""
    return field(default=None, metadata={"absent_if_none": True})


def _at(where: str, key: str) -> str:
    """The path of ``key`` inside ``where`` ("FILE:" for the file's top-level object)."""
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def _keys(d, cls, where: str, internal: tuple[str, ...] = ()) -> dict:
    """``d`` (a JSON object) as keyword arguments of ``cls``: ValueError naming ``where`` and the
    key for a non-object, a missing required key or an unknown key. ``internal``: fields that
    are no key of the object."""
    if not isinstance(d, Mapping):
        raise ValueError(f"{where}: expected an object, got {type(d).__name__}")
    known = [f for f in fields(cls) if not f.name.startswith("_") and f.name not in internal]
    names = {f.name for f in known}
    unknown = [k for k in d if k not in names]
    if unknown:
        raise ValueError(f"{_at(where, unknown[0])}: unknown key (known: {', '.join(sorted(names))})")
    for f in known:
        if f.name not in d and f.default is MISSING and f.default_factory is MISSING:
            raise ValueError(f"{_at(where, f.name)}: missing")
    return dict(d)


def _items(cls, values, where: str) -> tuple:
    """A JSON list of objects as a tuple of ``cls``."""
    if not isinstance(values, list | tuple):
        raise ValueError(f"{where}: expected a list, got {type(values).__name__}")
    return tuple(cls.from_dict(v, f"{where}[{i}]") for i, v in enumerate(values))


def _plain(value):
    """JSON data of a field value: nested records as objects, tuples as lists (copies: the
    result shares no mutable part with the record)."""
    if is_dataclass(value):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Record:
    """to_dict of a record: its fields in declaration order (the file's key order)."""

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            if value is None and f.metadata.get("absent_if_none"):
                continue
            out[f.name] = _plain(value)
        return out


# ------------------------------------------------------------------------------------ structure
@dataclass(frozen=True)
class Body(_Record):
    name: str
    role: str  # root | upper | lower | foot | toe | spine | head | arm | neck | tail
    side: Optional[str]  # "r" | "l" | None (midline)
    parent: Optional[str]  # parent body (None: the root)
    mass: float  # kg
    tilt: float  # world sagittal angle in the base pose, rad

    @classmethod
    def from_dict(cls, d, where: str = "body") -> "Body":
        return cls(**_keys(d, cls, where))


@dataclass(frozen=True)
class Joint(_Record):
    name: str
    kind: str  # root | hip | knee | ankle | toe | spine | neck | head_chain | ...
    side: Optional[str]
    parent: str
    child: str
    location: tuple[float, ...]  # joint centre in the parent frame (x, y, z)
    coordinates: tuple[str, ...]  # its coordinates' names

    @classmethod
    def from_dict(cls, d, where: str = "joint") -> "Joint":
        kw = _keys(d, cls, where)
        kw["location"] = tuple(kw["location"])
        kw["coordinates"] = tuple(kw["coordinates"])
        return cls(**kw)


@dataclass(frozen=True)
class Contact(_Record):
    """A contact sphere against the ground."""

    name: str
    body: str
    foot: Optional[str]  # "r" | "l": the foot whose ground force it carries
    radius: float
    location: tuple[float, ...]  # centre in the body frame

    @classmethod
    def from_dict(cls, d, where: str = "contact") -> "Contact":
        kw = _keys(d, cls, where)
        kw["location"] = tuple(kw["location"])
        return cls(**kw)


@dataclass(frozen=True)
class BodyPose(_Record):
    """A body frame in the ground frame in the base pose (every coordinate zero)."""

    R: tuple[float, ...]  # rotation matrix, 9 values row by row
    p: tuple[float, ...]  # origin

    @classmethod
    def from_dict(cls, d, where: str = "base_pose") -> "BodyPose":
        kw = _keys(d, cls, where)
        return cls(R=tuple(kw["R"]), p=tuple(kw["p"]))


@dataclass(frozen=True)
class LegBodies(_Record):
    """The bodies of one leg that the controller and the termination rules use."""

    upper: str
    lower: str
    foot: str
    toe: str

    @classmethod
    def from_dict(cls, d, where: str = "legs") -> "LegBodies":
        return cls(**_keys(d, cls, where))


# the mass M of the head gains' units (M g per leg length, M g L per rad, ...): "body", the whole
# body's (the humanoids: their spine muscles carry the upper body, about half of it); "head_chain",
# the bodies the head-chain joints carry (a neck of a few kilograms on a creature of 100)
HEAD_GAIN_MASSES = ("body", "head_chain")


@dataclass(frozen=True)
class Features(_Record):
    """The bodies the controller uses (templates' ``features``)."""

    legs: dict[str, LegBodies]  # side ("r", "l") -> its bodies; empty without legs
    trunk: str
    head: str  # the trunk itself when the creature has no head body
    head_offset: tuple[float, ...]  # the head point in the head body's frame
    arms: Optional[dict[str, tuple[str, ...]]] = _optional()  # side -> arm bodies, shoulder first
    head_gain_mass: Optional[str] = _optional()  # the mass unit of the head gains (eq 22):
    # HEAD_GAIN_MASSES; None (absent): the whole body's, as every model built before it

    @classmethod
    def from_dict(cls, d, where: str = "features") -> "Features":
        kw = _keys(d, cls, where)
        if not isinstance(kw["legs"], Mapping):
            raise ValueError(f"{where}.legs: expected an object")
        kw["legs"] = {side: LegBodies.from_dict(v, f"{where}.legs.{side}") for side, v in kw["legs"].items()}
        kw["head_offset"] = tuple(kw["head_offset"])
        if kw.get("head_gain_mass") is not None and kw["head_gain_mass"] not in HEAD_GAIN_MASSES:
            raise ValueError(
                f"{where}.head_gain_mass: expected one of {', '.join(HEAD_GAIN_MASSES)}, "
                f"got {kw['head_gain_mass']!r}"
            )
        if kw.get("arms") is not None:
            kw["arms"] = {side: tuple(v) for side, v in kw["arms"].items()}
        return cls(**kw)


# ------------------------------------------------------------------------------------ physics
def exponential_shape_problem(value) -> str | None:
    """None for [d0 m, d1 N, d2 1/m] of an ExponentialContactForce's elastic normal force
    d1 exp(-d2 (y - d0)) within the accepted ranges, else what is wrong."""
    ok = (
        isinstance(value, (list, tuple))
        and len(value) == 3
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and 0.0 < value[0] <= 0.05
        and 0.0 < value[1] <= 1e3
        and 50.0 <= value[2] <= 1e4
    )
    return (
        None if ok else "expected [d0, d1, d2] with 0 < d0 <= 0.05 m, 0 < d1 <= 1000 N, 50 <= d2 <= 10000 1/m"
    )


@dataclass(frozen=True)
class ContactPhysics(_Record):
    """models/physics.yaml ``contact`` (models/README.md)."""

    model: str  # "exponential" | "smooth_sphere"
    friction_elasticity: float  # N/m: spring holding a sticking point to its friction anchor
    friction_viscosity: float  # N s/m: its damper
    settle_velocity: float  # m/s below which a sliding point sticks again
    static_friction: float
    kinetic_friction: float
    ground_clearance: float  # m: lowest contact point's height at the start
    exponential_shape: Optional[tuple] = _optional()  # (d0 m, d1 N, d2 1/m); None (absent):
    # OpenSim's defaults, so that every model built without it keeps its file byte for byte

    @classmethod
    def from_dict(cls, d, where: str = "physics.contact") -> "ContactPhysics":
        kw = _keys(d, cls, where)
        shape = kw.get("exponential_shape")
        if shape is not None:
            problem = exponential_shape_problem(shape)
            if problem:
                raise ValueError(f"{where}.exponential_shape: {problem}, got {shape!r}")
            kw["exponential_shape"] = tuple(shape)
        return cls(**kw)


@dataclass(frozen=True)
class IntegratorPhysics(_Record):
    method: str  # a key of musclewalk.sim.engine.INTEGRATORS
    accuracy: float  # of the error-controlled steps (unused with fixed_step)
    fixed_step: Optional[float] = _optional()  # s; None (absent): error-controlled steps

    @classmethod
    def from_dict(cls, d, where: str = "physics.integrator") -> "IntegratorPhysics":
        kw = _keys(d, cls, where)
        h = kw.get("fixed_step")
        if h is not None and (
            isinstance(h, bool)
            or not isinstance(h, (int, float))
            or not FIXED_STEP_RANGE[0] <= h <= FIXED_STEP_RANGE[1]
        ):
            lo, hi = FIXED_STEP_RANGE
            raise ValueError(f"{where}.fixed_step: expected a step in [{lo:g}, {hi:g}] s, got {h!r}")
        return cls(**kw)


@dataclass(frozen=True)
class Physics(_Record):
    """The simulation physics the model was built with (models/physics.yaml + the creature's
    overrides)."""

    contact: ContactPhysics
    rigid_tendon_below_slack_ratio: float  # tendon slack / optimal fibre length below which
    # a muscle got a rigid tendon
    integrator: IntegratorPhysics
    muscles: Optional[str] = _optional()  # a MUSCLE_MODELS value; None (absent): Millard, so
    # that every model built with the default muscles keeps its file byte for byte
    muscle_properties: Optional[str] = _optional()  # a MUSCLE_PROPERTY_MODES value; None
    # (absent): independent, the paper's
    standing_fiber_length: Optional[tuple] = _optional()  # [lower, upper] of working_range

    @classmethod
    def from_dict(cls, d, where: str = "physics") -> "Physics":
        kw = _keys(d, cls, where)
        kw["contact"] = ContactPhysics.from_dict(kw["contact"], f"{where}.contact")
        kw["integrator"] = IntegratorPhysics.from_dict(kw["integrator"], f"{where}.integrator")
        if kw.get("muscles") not in (None, *MUSCLE_MODELS):
            raise ValueError(
                f"{where}.muscles: expected one of {', '.join(MUSCLE_MODELS)}, got {kw['muscles']!r}"
            )
        if kw.get("muscle_properties") not in (None, *MUSCLE_PROPERTY_MODES):
            raise ValueError(
                f"{where}.muscle_properties: expected one of {', '.join(MUSCLE_PROPERTY_MODES)}, "
                f"got {kw['muscle_properties']!r}"
            )
        return cls(**kw)

    @property
    def muscle_model(self) -> str:
        return self.muscles or MILLARD_MUSCLES


# ------------------------------------------------------------------------------------ muscles
@dataclass(frozen=True)
class Span(_Record):
    """A joint that a muscle spans: the path segment crossing it (points ``segment`` and
    ``segment + 1``) and which of the two lies on the joint's child side."""

    joint: str
    segment: int
    child_point: int

    @classmethod
    def from_dict(cls, d, where: str = "spans") -> "Span":
        return cls(**_keys(d, cls, where))


@dataclass(frozen=True)
class PathPoint(_Record):
    name: str
    body: str
    location: tuple[float, ...]  # in the body frame
    ranges: dict[str, tuple[float, float]]  # free components: axis ("x", "y", "z") -> (lo, hi)

    @classmethod
    def from_dict(cls, d, where: str = "points") -> "PathPoint":
        kw = _keys(d, cls, where)
        kw["location"] = tuple(kw["location"])
        kw["ranges"] = {axis: tuple(r) for axis, r in kw["ranges"].items()}
        return cls(**kw)


@dataclass(frozen=True, kw_only=True)
class Muscle(_Record):
    """A muscle, in the order of the model's actuators (the controller's order): a Millard muscle,
    or with ideal muscles (``ModelMeta.muscle_model``) a PathActuator on the same path whose force
    is u F_max. An ideal muscle keeps the template's fibre and tendon lengths (the metabolic
    model's muscle masses, the Millard build) but has neither; its delay is 0."""

    name: str
    unique: str  # shared name of mirrored (and chain-repeated) muscles
    side: Optional[str]
    roles: tuple[str, ...]  # hip, hip_flexor, knee_extensor, head_chain, ... (sorted)
    delay: float  # s: neural delay (paper §4.4)
    spans: tuple[Span, ...]
    function: dict[str, int]  # generic coordinate name -> expected moment-arm sign
    property_rule: str  # "full": Fmax, l_opt, l_slack free; "lopt_only": l_slack derived
    property_group: str  # muscles sharing their property parameters
    source: str  # where the template took the muscle from
    max_isometric_force: float  # N
    optimal_fiber_length: float
    tendon_slack_length: float
    pennation: float  # rad, at optimal fibre length
    rigid_tendon: Optional[bool] = _optional()  # ignore_tendon_compliance (None: an older
    # file, or ideal muscles: no tendon)
    points: tuple[PathPoint, ...]  # the path, origin first

    @classmethod
    def from_dict(cls, d, where: str = "muscle") -> "Muscle":
        kw = _keys(d, cls, where)
        kw["roles"] = tuple(kw["roles"])
        kw["spans"] = _items(Span, kw["spans"], f"{where}.spans")
        kw["points"] = _items(PathPoint, kw["points"], f"{where}.points")
        return cls(**kw)


# ------------------------------------------------------------------------ free parameters
@dataclass(frozen=True)
class RoutingTarget(_Record):
    """One attachment component a routing entry moves: value = sign * (lo + u (hi - lo)) for
    the normalized parameter u."""

    muscle: str
    point: str  # PathPoint name
    axis: str  # "x" | "y" | "z"
    lo: float  # m, in the point's body frame (sign applied)
    hi: float
    sign: float  # -1 for the z component of a mirrored (left) muscle

    @classmethod
    def from_dict(cls, d, where: str = "targets") -> "RoutingTarget":
        return cls(**_keys(d, cls, where))


@dataclass(frozen=True)
class RoutingEntry(_Record):
    """A free attachment component of a unique muscle, shared by its mirrored and repeated
    muscles (``MUSCLE.P<k>.<axis>``)."""

    name: str
    targets: tuple[RoutingTarget, ...]

    @classmethod
    def from_dict(cls, d, where: str = "routing") -> "RoutingEntry":
        kw = _keys(d, cls, where)
        kw["targets"] = _items(RoutingTarget, kw["targets"], f"{where}.targets")
        return cls(**kw)


@dataclass(frozen=True)
class PropertyEntry(_Record):
    """A free muscle property of a property group (``GROUP.<kind>``)."""

    name: str
    kind: str  # max_isometric_force | optimal_fiber_length | tendon_slack_length |
    # standing_fiber_length (physics.muscle_properties working_range: l_slack derived from it)
    rule: str  # the group's property rule
    targets: tuple[str, ...]  # muscles
    initial: float  # the template's value (N or m)
    lo: float  # range of the value
    hi: float

    @classmethod
    def from_dict(cls, d, where: str = "properties") -> "PropertyEntry":
        kw = _keys(d, cls, where)
        kw["targets"] = tuple(kw["targets"])
        return cls(**kw)


@dataclass(frozen=True)
class PassiveEntry(_Record):
    """A free passive gain of a spring group (``GROUP.stiffness`` / ``GROUP.damping``)."""

    name: str
    kind: str  # stiffness (N m/rad) | damping (N m s/rad)
    targets: tuple[str, ...]  # SpringGeneralizedForce names
    initial: float  # of the first target
    lo: float
    hi: float
    # per target, the factor its gain is of the entry's value (the first's is 1): the neck springs
    # scaled with their joints' muscles (neck_tail.yaml, neck_stiffening); None: every target
    # takes the value itself
    profile: Optional[tuple[float, ...]] = _optional()

    @classmethod
    def from_dict(cls, d, where: str = "passive") -> "PassiveEntry":
        kw = _keys(d, cls, where)
        kw["targets"] = tuple(kw["targets"])
        if kw.get("profile") is not None:
            kw["profile"] = tuple(float(v) for v in kw["profile"])
            if len(kw["profile"]) != len(kw["targets"]):
                raise ValueError(f"{where}.profile: expected one factor per target ({len(kw['targets'])})")
            if kw["profile"][0] != 1.0 or not all(math.isfinite(v) and v > 0 for v in kw["profile"]):
                raise ValueError(
                    f"{where}.profile: expected positive factors, the first 1 (the entry's value)"
                )
        return cls(**kw)

    def factor(self, index: int) -> float | None:
        """The factor of target ``index`` (None: the value as it is)."""
        return None if self.profile is None else self.profile[index]


# ------------------------------------------------------------------------------------ the model
@dataclass(frozen=True, kw_only=True)
class ModelMeta(_Record):
    """A built model's metadata: what the controller, simulator, optimizer and renderer need
    to know beyond the .osim."""

    creature: str
    source: str  # the creature file it was built from
    templates: dict[str, str]  # part -> template name
    parameters: dict[str, float]  # resolved template parameters ("legs.upper": 0.4)
    total_mass: float  # kg
    root: str  # root body
    root_height: float  # root origin above the ground in the base pose
    leg_length: float  # hip height in the base pose (root height without legs)
    features: Features
    expected: dict[str, int]  # the templates' documented counts: bodies, dofs, muscles
    base_pose: dict[str, BodyPose]  # body name -> its frame in the base pose
    bodies: tuple[Body, ...]  # root first, in the model's order
    joints: tuple[Joint, ...]
    contacts: tuple[Contact, ...]
    physics: Optional[Physics] = _optional()  # None: built before physics.yaml existed
    # (smooth spheres, SemiExplicitEuler2 at 1e-3)
    muscles: tuple[Muscle, ...]
    routing: tuple[RoutingEntry, ...]  # the free parameters of an optimization
    properties: tuple[PropertyEntry, ...]
    passive: tuple[PassiveEntry, ...]
    passive_scale: Optional[dict[str, float]] = _optional()  # continuation stage: gain ->
    # factor its passive entries carry
    optimized_from: Optional[str] = _optional()  # the .osim an optimization wrote this from
    version: int = META_VERSION  # the file's "musclewalk_meta"
    # the file's key order when read (an older file's optional keys keep their place); keys
    # added since, and every key of a built model, follow in field order
    _key_order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source) -> "ModelMeta":
        """The metadata of the JSON data ``d`` read from the file ``source`` (named by every
        error)."""
        if not isinstance(d, Mapping):
            raise ValueError(f"{source}: expected a JSON object, got {type(d).__name__}")
        if d.get(VERSION_KEY) != META_VERSION:
            raise ValueError(f"{source}: {VERSION_KEY}: unsupported version {d.get(VERSION_KEY)!r}")
        kw = _keys({k: v for k, v in d.items() if k != VERSION_KEY}, cls, f"{source}:", internal=("version",))
        if kw.get("physics") is not None:
            kw["physics"] = Physics.from_dict(kw["physics"], f"{source}: physics")
        kw["features"] = Features.from_dict(kw["features"], f"{source}: features")
        if not isinstance(kw["base_pose"], Mapping):
            raise ValueError(f"{source}: base_pose: expected an object")
        kw["base_pose"] = {
            b: BodyPose.from_dict(v, f"{source}: base_pose.{b}") for b, v in kw["base_pose"].items()
        }
        for name, item in (
            ("bodies", Body),
            ("joints", Joint),
            ("contacts", Contact),
            ("muscles", Muscle),
            ("routing", RoutingEntry),
            ("properties", PropertyEntry),
            ("passive", PassiveEntry),
        ):
            kw[name] = _items(item, kw[name], f"{source}: {name}")
        return cls(**kw, version=META_VERSION, _key_order=tuple(d))

    def to_dict(self) -> dict:
        """The JSON data of the file (``meta.meta_bytes`` writes it)."""
        data = super().to_dict()
        data = {VERSION_KEY: data.pop("version"), **data}
        first = {k: data[k] for k in self._key_order if k in data}
        return {**first, **{k: v for k, v in data.items() if k not in first}}

    def muscle(self, name: str) -> Muscle:
        return next(m for m in self.muscles if m.name == name)

    @property
    def muscle_model(self) -> str:
        """``millard`` or ``ideal`` (models/physics.yaml ``muscles``); Millard for models built
        before the key existed."""
        return self.physics.muscle_model if self.physics is not None else MILLARD_MUSCLES
