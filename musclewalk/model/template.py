"""Creature templates (YAML data) -> fully evaluated :class:`CreatureSpec`.

A *creature* file (``models/creatures/*.yaml``) names a template for each body part and its
dimensions. A *template* file (``models/templates/*.yaml``) describes bodies, joints, muscles
with attachment regions, contacts and passive elements with expressions over its parameters.
The file format is documented in ``models/README.md``. Templates combine by sharing the root
body. Entries with ``mirror: true`` are written for the right side and mirrored (z -> -z) to
the left.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import yaml

from .. import yaml_io
from ..constants import FIXED_STEP_RANGE, GRAVITY
from .expr import ExpressionError, evaluate, format_name
from .kinematics import base_pose_transforms, bodies_beyond, path_length, world_point
from .metadata import HEAD_GAIN_MASSES, MUSCLE_MODELS, MUSCLE_PROPERTY_MODES, exponential_shape_problem
from .spec import (
    AXES,
    BodySpec,
    ContactSpec,
    CoordinateSpec,
    CreatureSpec,
    JointSpec,
    LimitSpec,
    MuscleSpec,
    PathPointSpec,
    Shape,
    SpringSpec,
)

SIDES = ("r", "l")
DEFAULT_DENSITY = 1000.0  # kg/m^3, uniform for all segments (documented rule)
REFERENCE_MASS = 75.16  # kg, body mass behind the reference muscle forces


def _number_in(low: float, high: float):
    def check(value):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= float(value) <= high
        return None if ok else f"expected a number in [{low:g}, {high:g}]"

    return check


def _absent_or(check):
    """``check`` for a key that may be left out (None)."""
    return lambda value: None if value is None else check(value)


def _increasing_pair_in(low: float, high: float):
    def check(value):
        ok = (
            isinstance(value, (list, tuple))
            and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            and low <= float(value[0]) < float(value[1]) <= high
        )
        return None if ok else f"expected [lower, upper] with {low:g} <= lower < upper <= {high:g}"

    return check


def _one_of(*choices):
    return lambda value: None if value in choices else f"expected one of {', '.join(choices)}"


PHYSICS_SCHEMA = {
    "contact": {
        "model": _one_of("exponential", "smooth_sphere"),
        "friction_elasticity": _number_in(1e3, 1e7),
        "friction_viscosity": _number_in(0.0, 1e5),
        "settle_velocity": _number_in(1e-4, 10.0),
        "static_friction": _number_in(0.0, 5.0),
        "kinetic_friction": _number_in(0.0, 5.0),
        "ground_clearance": _number_in(0.0, 0.02),
        "exponential_shape": _absent_or(exponential_shape_problem),  # absent: OpenSim's defaults
    },
    "rigid_tendon_below_slack_ratio": _number_in(0.0, 100.0),
    "integrator": {
        "method": _one_of("semi_explicit_euler2", "runge_kutta_merson", "runge_kutta2", "runge_kutta3"),
        "accuracy": _number_in(1e-8, 0.1),
        "fixed_step": _absent_or(_number_in(*FIXED_STEP_RANGE)),
    },
    "muscles": _one_of(*MUSCLE_MODELS),
    "muscle_properties": _one_of(*MUSCLE_PROPERTY_MODES),
    # below 0: slack muscles allowed (a continuation from a walker that has them)
    "standing_fiber_length": _increasing_pair_in(-1.0, 1.7),
}


# The keys a template file may use at each level (models/README.md, "Template file"); anything else
# is a typo that would otherwise be ignored (a capsule's `centre:` for `center:`).
_SHAPE_KEYS = {"kind", "radius", "length", "axis", "center", "size"}
_COORDINATE_KEYS = {"name", "axis", "range", "include"}
_JOINT_KEYS = {"name", "kind", "at", "twist", "coordinates"}
_BODY_KEYS = {"name", "mirror", "parent", "role", "tilt", "min_inertia", "shapes", "joint"}
_PROPERTY_KEYS = {
    "rule",
    "group",
    "source",
    "max_isometric_force",
    "optimal_fiber_length",
    "tendon_slack_length",
    "pennation",
    "base_fiber_length",
    "scale_to_path",
}
_MUSCLE_KEYS = {"name", "mirror", "unique", "function", "roles", "properties", "points"}
_TEMPLATE_KEYS = {
    "template": None,
    "part": None,
    "description": None,
    "parameters": None,
    "signed": None,
    "integers": None,
    "ranges": None,
    "derived": None,
    "root_height": None,
    "root_shapes": [_SHAPE_KEYS],
    "bodies": [
        {
            **dict.fromkeys(_BODY_KEYS),
            "shapes": [_SHAPE_KEYS],
            "joint": {**dict.fromkeys(_JOINT_KEYS), "coordinates": [_COORDINATE_KEYS]},
        }
    ],
    "chains": [
        {
            **dict.fromkeys(
                {"name", "count", "parent", "role", "joint_kind", "first_at", "direction", "anterior"}
                | {"tilt", "tilt_step"}
            ),
            "segment": {"length", "radius"},
            "coordinates": [_COORDINATE_KEYS],
            "end": {
                **dict.fromkeys(_BODY_KEYS - {"parent", "mirror"}),
                "shapes": [_SHAPE_KEYS],
                "joint": {**dict.fromkeys(_JOINT_KEYS - {"at"}), "coordinates": [_COORDINATE_KEYS]},
            },
            "muscles": [
                {
                    **dict.fromkeys(_MUSCLE_KEYS),
                    "properties": _PROPERTY_KEYS,
                    "points": [
                        {
                            **dict.fromkeys({"body", "along", "anterior", "lateral"}),
                            "free": {"along", "anterior", "lateral"},
                        }
                    ],
                }
            ],
        }
    ],
    "muscles": [
        {
            **dict.fromkeys(_MUSCLE_KEYS),
            "properties": _PROPERTY_KEYS,
            "points": [{**dict.fromkeys({"body", "at", "x", "y", "z"}), "rotate": {"about", "z"}}],
        }
    ],
    "contacts": [{"name", "body", "at", "radius", "mirror"}],
    "springs": [{"coordinate", "pattern", "stiffness", "damping", "parameter", "mirror"}],
    "limits": [{"coordinate", "pattern", "range", "stiffness", "damping", "mirror"}],
    "features": {
        **dict.fromkeys({"trunk", "head", "head_offset", "head_gain_mass", "arms"}),
        "legs": {"upper", "lower", "foot", "toe"},
    },
    "expect": {"bodies", "dofs", "muscles"},
}


def check_template_keys(path, data, schema=None, key: str = "") -> None:
    """CreatureError naming the first key of a template file that ``schema`` (by default the
    whole file's, ``_TEMPLATE_KEYS``) does not allow: a mapping's keys, checked level by level;
    a one-element list applies its element to each entry of the list."""
    schema = _TEMPLATE_KEYS if schema is None else schema
    if isinstance(schema, list):
        if isinstance(data, list):
            for i, entry in enumerate(data):
                name = f"({entry['name']})" if isinstance(entry, dict) and "name" in entry else ""
                check_template_keys(path, entry, schema[0], f"{key}[{i}]{name}")
        return
    if not isinstance(data, dict):
        return
    allowed = schema if isinstance(schema, (set, frozenset)) else set(schema)
    for k, value in data.items():
        where = f"{key}.{k}" if key else str(k)
        if k not in allowed:
            raise CreatureError(path, where, f"unknown key (allowed: {', '.join(sorted(allowed))})")
        inner = schema.get(k) if isinstance(schema, dict) else None
        if inner is not None:
            check_template_keys(path, value, inner, where)


class CreatureError(ValueError):
    """Bad creature or template input; the message names the file and the key."""

    def __init__(self, path, key: str, message: str):
        self.path, self.key = str(path), key
        super().__init__(f"{path}: {key}: {message}" if key else f"{path}: {message}")


def models_dir() -> Path:
    """Folder with ``creatures/`` and ``templates/`` (env MUSCLEWALK_MODELS overrides)."""
    env = os.environ.get("MUSCLEWALK_MODELS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "models"


def list_creatures(root: Path | None = None) -> dict[str, Path]:
    """Preset name -> creature file."""
    folder = (root or models_dir()) / "creatures"
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml_io.safe_load(path.read_text()) or {}
        except yaml.YAMLError:
            data = {}
        out[str(data.get("name", path.stem))] = path
    return out


def resolve_creature(name_or_path: str) -> Path:
    """A preset name (case-insensitive) or a path to a creature YAML file."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        if not candidate.is_file():
            raise CreatureError(candidate, "", "creature file not found")
        return candidate
    presets = list_creatures()
    for name, path in presets.items():
        if name.lower() == name_or_path.lower() or path.stem.lower() == name_or_path.lower():
            return path
    raise CreatureError(
        models_dir() / "creatures", "", f"unknown creature '{name_or_path}' (known: {', '.join(presets)})"
    )


def _load_yaml(path: Path) -> dict:
    try:
        data = yaml_io.safe_load(path.read_text())
    except FileNotFoundError:
        raise CreatureError(path, "", "file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "syntax"
        raise CreatureError(path, where, f"malformed YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise CreatureError(path, "", "expected a mapping at the top level")
    return data


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out = {}
    for item in items or ():
        if "=" not in item:
            raise CreatureError("--set", item, "expected KEY=VALUE, e.g. legs.upper=0.45")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def load_creature(name_or_path: str, overrides: dict[str, Any] | None = None) -> CreatureSpec:
    """Load a creature preset (or file), apply ``--set`` overrides and expand its templates."""
    path = resolve_creature(name_or_path)
    return _Expander(path, _load_yaml(path), overrides or {}).run()


# --------------------------------------------------------------------------------------------
def _mirror_point(p: np.ndarray) -> np.ndarray:
    return np.array([p[0], p[1], -p[2]])


def _mirror_axis(a: np.ndarray) -> np.ndarray:
    """Rotation axes are pseudo-vectors: mirroring z flips the x and y components, so that a
    positive coordinate value means the same anatomical motion on both sides."""
    return np.array([-a[0], -a[1], a[2]])


def tendon_is_rigid(slack: float, optimal_fiber_length: float, ratio: float) -> bool:
    """The physics' rigid-tendon rule: a tendon slack length at or below ``ratio`` optimal fibre
    lengths. "At" within rounding: the neck-tail template derives its slack lengths as exactly
    half the fibre's, and a strict comparison at 0.5 made half of those muscles rigid and half
    compliant by the last bit of the path length."""
    return slack <= ratio * optimal_fiber_length * (1.0 + 1e-9)


def _mirror_range(r: tuple[float, float], axis: str) -> tuple[float, float]:
    return (-r[1], -r[0]) if axis == "z" else r


def _parameter_ranges(
    path: Path, data: dict, params: dict, signed: set, integers: set
) -> dict[str, tuple[float, float]]:
    """A template's ``ranges``: the plausible [min, max] of every parameter (data, documented in
    models/README.md). Checked here as a template: one per parameter, well-formed, consistent
    with ``signed`` and ``integers``, the default inside."""
    raw = data.get("ranges")
    if not isinstance(raw, dict):
        raise CreatureError(
            path, "ranges", "expected a mapping of every parameter to its plausible [min, max]"
        )
    for k in raw:
        if k not in params:
            raise CreatureError(
                path, f"ranges.{k}", f"not a parameter of the template (parameters: {', '.join(params)})"
            )
    out = {}
    for k, default in params.items():
        key = f"ranges.{k}"
        bounds = raw.get(k)
        if bounds is None:
            raise CreatureError(path, key, "missing: every parameter needs a plausible [min, max]")
        if (
            not isinstance(bounds, (list, tuple))
            or len(bounds) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
        ):
            raise CreatureError(path, key, f"expected [min, max] (two numbers), got {bounds!r}")
        lo, hi = float(bounds[0]), float(bounds[1])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise CreatureError(path, key, f"inverted or empty range [{lo:g}, {hi:g}]")
        if k in integers:
            if lo < 0 or not lo.is_integer() or not hi.is_integer():
                raise CreatureError(
                    path, key, f"an integer parameter needs integer bounds >= 0, got [{lo:g}, {hi:g}]"
                )
        elif k not in signed and lo <= 0:
            raise CreatureError(path, key, f"a dimension needs a positive minimum, got [{lo:g}, {hi:g}]")
        if isinstance(default, (int, float)) and not isinstance(default, bool) and not lo <= default <= hi:
            raise CreatureError(
                path,
                f"parameters.{k}",
                f"default {default:g} lies outside its plausible range [{lo:g}, {hi:g}]",
            )
        out[k] = (lo, hi)
    return out


class _Part:
    def __init__(self, part: str, template_name: str, path: Path, data: dict, variables: dict):
        self.part, self.template_name, self.path, self.data, self.vars = (
            part,
            template_name,
            path,
            data,
            variables,
        )


class _Expander:
    def __init__(self, path: Path, data: dict, overrides: dict[str, Any]):
        self.path, self.data, self.overrides = path, data, dict(overrides)
        self._used_overrides: set[str] = set()
        self.bodies: dict[str, BodySpec] = {}
        self.joints: list[JointSpec] = []
        self.mirrored_bodies: set[str] = set()
        self.muscles: list[MuscleSpec] = []
        self.contacts: list[ContactSpec] = []
        self.springs: list[SpringSpec] = []
        self.limits: list[LimitSpec] = []
        self.features: dict = {"legs": {}}
        self._pending_chains: list = []
        # chain coordinate -> its joint's muscles' negative stiffness at full activation (N m/rad)
        self._chain_buckling: dict[str, float] = {}
        self.expected = {"bodies": 0, "dofs": 0, "muscles": 0}

    # ---------------------------------------------------------------- helpers
    def err(self, key: str, msg: str, path=None) -> CreatureError:
        return CreatureError(path or self.path, key, msg)

    def num(self, part: _Part, value, key: str, extra: dict | None = None) -> float:
        variables = dict(part.vars)
        if extra:
            variables.update(extra)
        try:
            return evaluate(value, variables)
        except ExpressionError as exc:
            raise self.err(key, str(exc), part.path) from None

    def vec(self, part: _Part, value, key: str, extra=None) -> np.ndarray:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            raise self.err(key, f"expected a list of 3 values, got {value!r}", part.path)
        return np.array([self.num(part, v, f"{key}[{i}]", extra) for i, v in enumerate(value)])

    # ---------------------------------------------------------------- main
    def run(self) -> CreatureSpec:
        allowed = {"name", "description", "density", "parts", "root", "physics"}
        for key in self.data:
            if key not in allowed:
                raise self.err(key, f"unknown key (allowed: {', '.join(sorted(allowed))})")
        name = str(self.data.get("name", self.path.stem))
        density = self._top_level_number("density", DEFAULT_DENSITY)
        if density <= 0:
            raise self.err("density", "must be positive")
        parts_data = self.data.get("parts")
        if not isinstance(parts_data, dict) or not parts_data:
            raise self.err("parts", "expected a mapping of body parts to templates")
        parts = [self._load_part(p, spec) for p, spec in parts_data.items()]
        unused = [k for k in self.overrides if k not in self._used_overrides]
        if unused:
            raise self.err(unused[0], "unknown --set key")

        root_name = str(self.data.get("root", "root"))
        self.root = root_name
        self.bodies[root_name] = BodySpec(root_name, "root", None, [])
        for part in parts:
            for i, shape in enumerate(part.data.get("root_shapes", []) or []):
                self.bodies[root_name].shapes.append(self._shape(part, shape, f"root_shapes[{i}]", None))
        for part in parts:
            self._bodies(part)
            self._chains(part)
        if not self.bodies[root_name].shapes:
            raise self.err("parts", "no template gives the root body a shape (root_shapes)")
        for body in self.bodies.values():
            self._mass_properties(body, density)
        total_mass = sum(b.mass for b in self.bodies.values())
        root_height = self._root_height(parts)
        force_scale = (total_mass / REFERENCE_MASS) ** (2.0 / 3.0)
        for part in parts:
            part.vars.update(mass=total_mass, force_scale=force_scale)
        self.transforms = self._base_pose(root_height)
        for part in parts:
            self._muscles(part)
        for pending in self._pending_chains:
            self._chain_muscles(*pending)
        for part in parts:
            self._contacts(part)
            self._passives(part)
            self._features(part)
            self._expect(part)
        self._check_names()
        physics = self._physics()
        ratio = physics["rigid_tendon_below_slack_ratio"]
        for m in self.muscles:
            m.rigid_tendon = tendon_is_rigid(m.tendon_slack_length, m.optimal_fiber_length, ratio)
        parameters = {f"{p.part}.{k}": p.vars[k] for p in parts for k in p.data.get("parameters", {})}
        return CreatureSpec(
            name=name,
            source=str(self.path),
            bodies=list(self.bodies.values()),
            joints=self.joints,
            muscles=self.muscles,
            contacts=self.contacts,
            springs=self.springs,
            limits=self.limits,
            features=self.features,
            expected=self.expected,
            parameters=parameters,
            templates={p.part: p.template_name for p in parts},
            root_height=root_height,
            physics=physics,
        )

    def _physics(self) -> dict:
        """models/physics.yaml with the creature's `physics:` overrides, checked key by key."""
        path = models_dir() / "physics.yaml"
        defaults = _load_yaml(path)
        own = self.data.get("physics") or {}
        if not isinstance(own, dict):
            raise self.err("physics", "expected a mapping (keys of models/physics.yaml)")
        merged = {}
        for key, value in defaults.items():
            if key not in PHYSICS_SCHEMA:
                raise CreatureError(path, key, "unknown key")
            merged[key] = dict(value) if isinstance(value, dict) else value
        for key, value in own.items():
            if key not in PHYSICS_SCHEMA:
                raise self.err(f"physics.{key}", f"unknown key (allowed: {', '.join(PHYSICS_SCHEMA)})")
            if isinstance(merged.get(key), dict):
                if not isinstance(value, dict):
                    raise self.err(f"physics.{key}", "expected a mapping")
                merged[key].update(value)
            else:
                merged[key] = value
        for key, schema in PHYSICS_SCHEMA.items():
            where = path if key not in own else self.path
            if key not in merged:
                raise CreatureError(path, key, "missing")
            if isinstance(schema, dict):
                for sub, check in schema.items():
                    value = merged[key].get(sub)
                    problem = check(value)
                    if problem:
                        raise CreatureError(where, f"physics.{key}.{sub}", f"{problem}, got {value!r}")
                unknown = set(merged[key]) - set(schema)
                if unknown:
                    raise CreatureError(where, f"physics.{key}.{sorted(unknown)[0]}", "unknown key")
            else:
                problem = schema(merged[key])
                if problem:
                    raise CreatureError(where, f"physics.{key}", f"{problem}, got {merged[key]!r}")
        contact = merged["contact"]
        if contact.get("exponential_shape") is not None and contact["model"] != "exponential":
            where = path if "contact" not in own else self.path
            raise CreatureError(
                where, "physics.contact.exponential_shape", "only with contact model exponential"
            )
        return merged

    def _top_level_number(self, key, default):
        raw = self.overrides.get(key, self.data.get(key, default))
        if key in self.overrides:
            self._used_overrides.add(key)
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise self.err(key, f"expected a number, got {raw!r}") from None

    def _load_part(self, part: str, spec) -> _Part:
        key = f"parts.{part}"
        if not isinstance(spec, dict) or "template" not in spec:
            raise self.err(key, "expected a mapping with a 'template' key")
        tname = str(spec["template"])
        tpath = self.path.parent.parent / "templates" / f"{tname}.yaml"
        if not tpath.is_file():
            tpath = models_dir() / "templates" / f"{tname}.yaml"
        if not tpath.is_file():
            raise self.err(f"{key}.template", f"unknown template '{tname}'")
        data = _load_yaml(tpath)
        check_template_keys(tpath, data)
        if "template" in data and str(data["template"]) != tpath.stem:
            raise CreatureError(tpath, "template", f"names {data['template']!r}, the file is {tpath.stem!r}")
        params = data.get("parameters", {}) or {}
        signed = set(data.get("signed", []) or [])
        integers = set(data.get("integers", []) or [])
        ranges = _parameter_ranges(tpath, data, params, signed, integers)
        values: dict[str, Any] = dict(params)
        for k, v in spec.items():
            if k == "template":
                continue
            if k not in params:
                raise self.err(
                    f"{key}.{k}", f"unknown parameter of template '{tname}' (known: {', '.join(params)})"
                )
            values[k] = v
        overridden = set()
        for k, v in self.overrides.items():
            if k.startswith(part + "."):
                pname = k[len(part) + 1 :]
                if pname not in params:
                    raise self.err(k, f"unknown --set key: template '{tname}' has no parameter '{pname}'")
                values[pname] = v
                overridden.add(pname)
                self._used_overrides.add(k)
        variables: dict[str, float] = {}
        for k, v in values.items():
            where = f"{key}.{k}" + (f" (--set {part}.{k}={v})" if k in overridden else "")
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise self.err(where, f"expected a number, got {v!r}") from None
            if not math.isfinite(x):
                raise self.err(where, "must be finite")
            if k in integers:
                if x < 0 or not float(x).is_integer():
                    raise self.err(where, f"must be a non-negative integer, got {v!r}")
            elif k not in signed and x <= 0:
                raise self.err(where, f"dimension must be positive, got {v!r}")
            lo, hi = ranges[k]
            if not lo <= x <= hi:
                raise self.err(
                    where, f"{x:g} is outside the plausible range [{lo:g}, {hi:g}] ({tpath}: ranges.{k})"
                )
            variables[k] = x
        p = _Part(part, tname, tpath, data, variables)
        for k, v in (data.get("derived", {}) or {}).items():
            variables[k] = self.num(p, v, f"derived.{k}")
        return p

    # ---------------------------------------------------------------- bodies and joints
    def _shape(self, part, data, key, length_hint) -> Shape:
        kind = data.get("kind")
        if kind == "capsule":
            radius = self.num(part, data["radius"], f"{key}.radius")
            length = self.num(part, data["length"], f"{key}.length")
            axis = self.vec(part, data.get("axis", [0, -1, 0]), f"{key}.axis")
            axis = axis / np.linalg.norm(axis)
            center = (
                self.vec(part, data["center"], f"{key}.center") if "center" in data else axis * length / 2
            )
            shape = Shape("capsule", center, radius=radius, length=length, axis=axis)
        elif kind in ("box", "ellipsoid"):
            size = self.vec(part, data["size"], f"{key}.size")
            center = self.vec(part, data.get("center", [0, 0, 0]), f"{key}.center")
            shape = Shape(kind, center, size=size)
        elif kind == "sphere":
            shape = Shape(
                "sphere",
                self.vec(part, data.get("center", [0, 0, 0]), f"{key}.center"),
                radius=self.num(part, data["radius"], f"{key}.radius"),
            )
        else:
            raise self.err(f"{key}.kind", f"unknown shape kind {kind!r}", part.path)
        dims = (
            [shape.radius, shape.length]
            if kind == "capsule"
            else ([shape.radius] if kind == "sphere" else list(shape.size))
        )
        if any(d <= 0 for d in dims):
            raise self.err(key, "shape dimensions must be positive", part.path)
        return shape

    def _resolve_body(self, name: str, side: str | None) -> str:
        if name == "root":
            return self.root
        if side and name in self.mirrored_bodies:
            return f"{name}_{side}"
        return name

    def _add_body(self, part, entry, key, side, name, parent, extra=None):
        mirror = side == "l"
        shapes = []
        for i, s in enumerate(entry.get("shapes", []) or []):
            shape = self._shape(part, s, f"{key}.shapes[{i}]", None)
            if mirror:
                shape.center = _mirror_point(shape.center)
                shape.axis = _mirror_point(shape.axis)
            shapes.append(shape)
        if not shapes:
            raise self.err(f"{key}.shapes", "a body needs at least one shape", part.path)
        if parent not in self.bodies:
            raise self.err(f"{key}.parent", f"unknown parent body '{parent}'", part.path)
        tilt = math.radians(self.num(part, entry.get("tilt", 0), f"{key}.tilt", extra))
        body = BodySpec(name, str(entry.get("role", "other")), parent, shapes, side=side, tilt=tilt)
        body.min_inertia = self.num(part, entry.get("min_inertia", 0), f"{key}.min_inertia", extra)
        jdata = entry.get("joint")
        if not isinstance(jdata, dict):
            raise self.err(f"{key}.joint", "missing joint", part.path)
        location = self.vec(part, jdata.get("at", [0, 0, 0]), f"{key}.joint.at", extra)
        # the joint frame turned about the parent's vertical (Y) axis, right-hand rule (e.g. a tibial
        # torsion that points a foot outward); the mirrored side turns the other way
        # (+ 0.0: no -0 written into the model for an untwisted joint)
        twist = math.radians(self.num(part, jdata.get("twist", 0), f"{key}.joint.twist", extra)) + 0.0
        if mirror:
            location = _mirror_point(location)
            twist = -twist + 0.0
        coords = []
        declared = jdata.get("coordinates", []) or []
        for i, c in enumerate(declared):
            ck = f"{key}.joint.coordinates[{i}]"
            include = c.get("include", True)
            if not (
                include if isinstance(include, bool) else self.num(part, include, f"{ck}.include", extra)
            ):
                continue
            axis = self.vec(part, c.get("axis"), f"{ck}.axis")
            if mirror:
                axis = _mirror_axis(axis)
            rng = c.get("range", [-180, 180])
            lo, hi = (self.num(part, rng[0], f"{ck}.range"), self.num(part, rng[1], f"{ck}.range"))
            if not lo < hi:
                raise self.err(f"{ck}.range", f"inverted or empty range [{lo}, {hi}]", part.path)
            self._check_base_pose_in(part, f"{ck}.range", lo, hi, ", the base pose")
            generic = format_name(str(c["name"]), {**part.vars, **(extra or {})})
            cname = f"{generic}_{side}" if side else generic
            coords.append(CoordinateSpec(cname, axis / np.linalg.norm(axis), (lo, hi), generic))
        if declared and not coords:
            raise self.err(
                f"{key}.joint.coordinates", "every coordinate is left out by its include", part.path
            )
        jname = format_name(str(jdata.get("name", name)), {**part.vars, **(extra or {})})
        jname = f"{jname}_{side}" if side else jname
        parent_tilt = self.bodies[parent].tilt
        joint = JointSpec(
            jname,
            str(jdata.get("kind", "other")),
            parent,
            name,
            location,
            np.array([0.0, twist, tilt - parent_tilt]),
            coords,
            side,
        )
        self.bodies[name] = body
        self.joints.append(joint)

    def _bodies(self, part: _Part):
        for i, entry in enumerate(part.data.get("bodies", []) or []):
            key = f"bodies[{i}]"
            base = str(entry.get("name", ""))
            if not base:
                raise self.err(f"{key}.name", "missing body name", part.path)
            if entry.get("mirror"):
                self.mirrored_bodies.add(base)
                for side in SIDES:
                    parent = self._resolve_body(str(entry.get("parent", "root")), side)
                    self._add_body(part, entry, f"{key}({base})", side, f"{base}_{side}", parent)
            else:
                parent = self._resolve_body(str(entry.get("parent", "root")), None)
                self._add_body(part, entry, f"{key}({base})", None, base, parent)

    def _chains(self, part: _Part):
        """Serial chains (neck, tail) of ``count`` identical segments, optional end body."""
        for ci, chain in enumerate(part.data.get("chains", []) or []):
            key = f"chains[{ci}]"
            cname = str(chain["name"])
            count = int(self.num(part, chain["count"], f"{key}.count"))
            parent = self._resolve_body(str(chain.get("parent", "root")), None)
            direction = self.vec(part, chain["direction"], f"{key}.direction")
            direction /= np.linalg.norm(direction)
            seg_len_expr = chain["segment"]["length"]
            seg_len = self.num(part, seg_len_expr, f"{key}.segment.length")
            radius = self.num(part, chain["segment"]["radius"], f"{key}.segment.radius")
            if seg_len <= 0 or radius <= 0:
                raise self.err(f"{key}.segment", "segment length and radius must be positive", part.path)
            joints = []  # (parent, child, location in parent)
            prev, prev_end = parent, self.vec(part, chain["first_at"], f"{key}.first_at")
            base_tilt = self.num(part, chain.get("tilt", 0), f"{key}.tilt")
            step = self.num(part, chain.get("tilt_step", 0), f"{key}.tilt_step")
            coords = chain.get("coordinates")
            for i in range(1, count + 1):
                name = f"{cname}_{i}"
                entry = {
                    "role": chain.get("role", cname),
                    "tilt": base_tilt + step * (i - 1),
                    "shapes": [
                        {"kind": "capsule", "radius": radius, "length": seg_len, "axis": list(direction)}
                    ],
                    "joint": {
                        "name": f"{cname}_joint_{i}",
                        "kind": chain.get("joint_kind", cname),
                        "at": list(prev_end),
                        "coordinates": [{**c, "name": f"{c['name']}_{i}"} for c in coords],
                    },
                }
                self._add_body(part, entry, f"{key}({name})", None, name, prev)
                joints.append((prev, name))
                prev, prev_end = name, direction * seg_len
            end = chain.get("end")
            if end:
                entry = dict(end)
                entry.setdefault("tilt", base_tilt + step * count)
                jd = dict(entry.get("joint", {}))
                jd.setdefault("name", f"{cname}_joint_{count + 1}")
                jd.setdefault("kind", chain.get("joint_kind", cname))
                jd["at"] = list(prev_end)
                jd.setdefault("coordinates", [{**c, "name": f"{c['name']}_{count + 1}"} for c in coords])
                entry["joint"] = jd
                self._add_body(part, entry, f"{key}.end", None, str(end["name"]), prev)
                joints.append((prev, str(end["name"])))
            self._pending_chains.append((part, chain, key, joints, direction))

    def _chain_muscles(self, part, chain, key, joints, direction):
        anterior = self.vec(part, chain.get("anterior", [1, 0, 0]), f"{key}.anterior")
        anterior /= np.linalg.norm(anterior)
        lateral = np.array([0.0, 0.0, 1.0])
        axes = {"along": direction, "anterior": anterior, "lateral": lateral}
        links = [(jt.parent, jt.child) for jt in self.joints]
        for j, (parent, child) in enumerate(joints, start=1):
            joint = next(jt for jt in self.joints if jt.child == child)
            jloc = joint.location
            chain_vars = {"chain_load": self._chain_load(child, links)}
            # both sides' offsets are in the child's base-pose frame, so that each joint's muscles
            # lie symmetric about it at coordinate 0 (the first segment's tilt is not a flexion)
            child_in_parent = self.transforms[parent][0].T @ self.transforms[child][0]
            side_axes = {
                "parent": {a: child_in_parent @ v for a, v in axes.items()},
                "child": axes,
            }
            # a tension T across the joint with points a from it along the chain bends a bent joint
            # further by T a / 2 per radian and muscle (a pair on either side: T a), whatever their
            # offset from the axis (docs/getting-creatures-to-walk.md, "Why the necks fold")
            buckling = 0.0
            for mi, m in enumerate(chain.get("muscles", []) or []):
                mkey = f"{key}.muscles[{mi}]"
                points = []
                along = []
                for pi, p in enumerate(m["points"]):
                    pkey = f"{mkey}.points[{pi}]"
                    body = parent if p["body"] == "parent" else child
                    origin = jloc if p["body"] == "parent" else np.zeros(3)
                    point_axes = side_axes["parent" if p["body"] == "parent" else "child"]
                    offset = {a: self.num(part, p.get(a, 0), f"{pkey}.{a}") for a in axes}
                    along.append(abs(offset["along"]))
                    loc = origin + sum(offset[a] * point_axes[a] for a in axes)
                    ranges = {}
                    for a, rng in (p.get("free", {}) or {}).items():
                        if a not in axes:
                            raise self.err(f"{pkey}.free.{a}", "expected along/anterior/lateral", part.path)
                        comp = int(np.argmax(np.abs(point_axes[a])))
                        sign = float(np.sign(point_axes[a][comp]))
                        lo = loc[comp] + sign * self.num(part, rng[0], f"{pkey}.free.{a}")
                        hi = loc[comp] + sign * self.num(part, rng[1], f"{pkey}.free.{a}")
                        ranges[AXES[comp]] = (min(lo, hi), max(lo, hi))
                    points.append({"body": body, "loc": loc, "ranges": ranges})
                entry = dict(m)
                entry["_points"] = points
                entry["_vars"] = chain_vars
                entry["name"] = f"{m['name']}_{j}"
                entry.setdefault("unique", m["name"])
                first = len(self.muscles)
                self._muscle_entry(part, entry, f"{mkey}(joint {j})")
                reach = float(np.mean(along))
                buckling += sum(muscle.max_isometric_force * reach / 2 for muscle in self.muscles[first:])
            for c in joint.coordinates:
                self._chain_buckling[c.name] = buckling

    def _chain_load(self, child: str, links: list[tuple[str, str]]) -> float:
        """Gravity's moment (N m) on the joint of ``child`` when the bodies beyond it, in their
        base-pose shape, are tipped level: their weight times the distance of their centre of mass
        from the joint in the base pose (template variable ``chain_load`` of chain muscles).
        ``links``: the model's (parent, child) joints."""
        joint = self.transforms[child][1]
        distal = bodies_beyond(links, child)
        masses = np.array([self.bodies[b].mass for b in distal])
        coms = np.array([world_point(self.transforms, b, self.bodies[b].com) for b in distal])
        com = masses @ coms / masses.sum()
        return float(masses.sum() * GRAVITY * np.linalg.norm(com - joint))

    def _mass_properties(self, body: BodySpec, density: float):
        masses = [density * s.volume() for s in body.shapes]
        mass = sum(masses)
        com = sum(m * s.center for m, s in zip(masses, body.shapes)) / mass
        inertia = np.zeros((3, 3))
        for m, s in zip(masses, body.shapes):
            d = s.center - com
            inertia += s.inertia_about_center(m) + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        floor = getattr(body, "min_inertia", 0.0)
        if floor > 0:
            # numerical floor on the principal moments of small distal segments (documented in
            # models/README.md): their tiny inertia against stiff contact friction would
            # otherwise limit the integrator's step size
            values, vectors = np.linalg.eigh(inertia)
            inertia = vectors @ np.diag(np.maximum(values, floor)) @ vectors.T
        body.mass, body.com, body.inertia = mass, com, inertia

    def _root_height(self, parts) -> float:
        for part in parts:
            if "root_height" in part.data:
                return self.num(part, part.data["root_height"], "root_height")
        raise self.err(
            "parts",
            "no template defines root_height (height of the root origin above the ground in the base pose)",
        )

    def _base_pose(self, root_height):
        return base_pose_transforms(
            self.root, root_height, [(j.parent, j.child, j.location, j.orientation) for j in self.joints]
        )

    # ---------------------------------------------------------------- muscles
    def _muscles(self, part: _Part):
        for i, entry in enumerate(part.data.get("muscles", []) or []):
            self._muscle_entry(part, entry, f"muscles[{i}]({entry.get('name', '?')})")

    def _muscle_entry(self, part, entry, key):
        base = str(entry.get("name", ""))
        if not base:
            raise self.err(f"{key}.name", "missing muscle name", part.path)
        sides = SIDES if entry.get("mirror") else (None,)
        right_name = None
        for side in sides:
            name = f"{base}_{side}" if side else base
            raw_points = entry.get("_points")
            if raw_points is None:
                raw_points = self._muscle_point_entries(part, entry, key, side)
            points = self._muscle_path(part, raw_points, key, name, side)
            fmax, lopt, lts, pen, rule = self._muscle_properties(part, entry, key, points, entry.get("_vars"))
            function = self._muscle_function(part, entry, key)
            props = entry.get("properties", {}) or {}
            unique = str(entry.get("unique", base))
            self.muscles.append(
                MuscleSpec(
                    name=name,
                    unique=unique,
                    side=side,
                    points=points,
                    max_isometric_force=fmax,
                    optimal_fiber_length=lopt,
                    tendon_slack_length=lts,
                    pennation=pen,
                    property_rule=rule,
                    property_group=str(props.get("group", unique)),
                    function=function,
                    extra_roles=list(entry.get("roles", []) or []),
                    source=str(props.get("source", "")),
                    mirror_of=right_name if side == "l" else None,
                )
            )
            if side == "r":
                right_name = name

    def _muscle_point_entries(self, part, entry, key, side) -> list[dict]:
        """The entry's ``points`` in template (right-side) coordinates, bodies resolved for
        ``side``: dicts of body, loc, ranges and the YAML key."""
        raw_points = []
        for pi, p in enumerate(entry.get("points", []) or []):
            pkey = f"{key}.points[{pi}]"
            bname = self._resolve_body(str(p.get("body", "")), side or "r")
            loc = self.vec(part, p.get("at"), f"{pkey}.at")
            ranges = self._point_region(part, p, pkey, loc)
            if "rotate" in p:
                loc, ranges = self._rotated_point(part, p["rotate"], f"{pkey}.rotate", loc, ranges)
            raw_points.append({"body": bname, "loc": loc, "ranges": ranges, "key": pkey})
        return raw_points

    def _rotated_point(self, part, spec, key, loc, ranges) -> tuple[np.ndarray, dict]:
        """A point written as it would sit for an unrotated segment, turned ``z`` degrees about the
        Z axis through ``about`` (positive tips +X toward +Y); its region moves with it, each
        [min, max] range by the point's displacement (an axis-aligned box translated, not turned)."""
        if not isinstance(spec, dict) or set(spec) != {"about", "z"}:
            raise self.err(key, "expected {about: [x, y, z], z: degrees}", part.path)
        about = self.vec(part, spec["about"], f"{key}.about")
        angle = np.radians(self.num(part, spec["z"], f"{key}.z"))
        c, s = np.cos(angle), np.sin(angle)
        d = loc - about
        turned = about + np.array([c * d[0] - s * d[1], s * d[0] + c * d[1], d[2]])
        shift = turned - loc
        moved = {a: (lo + shift[AXES.index(a)], hi + shift[AXES.index(a)]) for a, (lo, hi) in ranges.items()}
        return turned, moved

    def _point_region(self, part, p, pkey, loc) -> dict:
        """Allowed region of a path point: a [min, max] range per listed axis, containing the
        default location."""
        ranges = {}
        for a in AXES:
            if a in p:
                rng = p[a]
                if not isinstance(rng, (list, tuple)) or len(rng) != 2:
                    raise self.err(f"{pkey}.{a}", "expected [min, max]", part.path)
                lo = self.num(part, rng[0], f"{pkey}.{a}")
                hi = self.num(part, rng[1], f"{pkey}.{a}")
                if not lo < hi:
                    raise self.err(f"{pkey}.{a}", f"inverted or empty range [{lo}, {hi}]", part.path)
                comp = AXES.index(a)
                if not lo <= loc[comp] <= hi:
                    raise self.err(
                        f"{pkey}.{a}",
                        f"default {loc[comp]:.4g} lies outside its region [{lo:.4g}, {hi:.4g}]",
                        part.path,
                    )
                ranges[a] = (lo, hi)
        return ranges

    def _muscle_path(self, part, raw_points, key, name, side) -> list[PathPointSpec]:
        """Path points of muscle ``name`` (mirrored for the left side) on existing bodies,
        spanning at least one joint."""
        points = []
        for pi, p in enumerate(raw_points):
            bname, loc, ranges = p["body"], p["loc"].copy(), dict(p["ranges"])
            if side == "l":
                bname = bname[:-2] + "_l" if bname.endswith("_r") else bname
                loc = _mirror_point(loc)
                ranges = {a: _mirror_range(r, a) for a, r in ranges.items()}
            if bname not in self.bodies:
                raise self.err(
                    p.get("key", f"{key}.points[{pi}]") + ".body",
                    f"muscle '{name}' is attached to missing body '{bname}'",
                    part.path,
                )
            points.append(PathPointSpec(f"{name}-P{pi + 1}", bname, loc, ranges))
        if len(points) < 2:
            raise self.err(f"{key}.points", "a muscle needs at least two points", part.path)
        if len({p.body for p in points}) < 2:
            raise self.err(f"{key}.points", "a muscle must span at least one joint", part.path)
        return points

    def _muscle_properties(self, part, entry, key, points, extra=None) -> tuple:
        """(F_max, l_opt, l_slack, pennation, rule): the lengths follow the path length in the
        base pose by the entry's property rule; ``extra``: variables of chain muscles."""
        props = entry.get("properties", {}) or {}
        pk = f"{key}.properties"
        fmax = self.num(part, props.get("max_isometric_force"), f"{pk}.max_isometric_force", extra)
        lopt = self.num(part, props.get("optimal_fiber_length"), f"{pk}.optimal_fiber_length", extra)
        pen = self.num(part, props.get("pennation", 0), f"{pk}.pennation", extra)
        rule = str(props.get("rule", "full"))
        length = path_length(self.transforms, [(p.body, p.location) for p in points])
        if rule == "full":
            lopt, lts = self._full_rule_lengths(part, props, pk, lopt, pen, length, extra)
        elif rule == "lopt_only":
            lts = length - lopt * math.cos(pen)
            if lts <= 0:
                raise self.err(
                    f"{pk}.optimal_fiber_length",
                    f"longer than the muscle path ({length:.3f} m) in the base pose",
                    part.path,
                )
        else:
            raise self.err(f"{pk}.rule", f"unknown property rule {rule!r}", part.path)
        if fmax <= 0 or lopt <= 0:
            raise self.err(pk, "forces and lengths must be positive", part.path)
        return fmax, lopt, lts, pen, rule

    def _full_rule_lengths(self, part, props, pk, lopt, pen, length, extra=None) -> tuple:
        """Rule ``full``: (l_opt, l_slack), both scaled to the path ``length`` unless
        ``scale_to_path`` is false."""
        lts = self.num(part, props.get("tendon_slack_length"), f"{pk}.tendon_slack_length", extra)
        # normalized fibre length in the base pose (1: optimal there); the reference
        # model's standing value keeps e.g. the vasti from resisting knee flexion passively
        base_fl = self.num(part, props.get("base_fiber_length", 1.0), f"{pk}.base_fiber_length", extra)
        if not 0.3 <= base_fl <= 1.7:
            raise self.err(f"{pk}.base_fiber_length", f"expected 0.3 .. 1.7, got {base_fl:g}", part.path)
        if props.get("scale_to_path", True):
            # Millard: constant fibre height l sin(a) = l_opt sin(a_opt)
            pen_base = math.asin(min(1.0, math.sin(pen) / base_fl))
            scale = length / (lopt * base_fl * math.cos(pen_base) + lts)
            lopt, lts = lopt * scale, lts * scale
        return lopt, lts

    def _muscle_function(self, part, entry, key) -> dict[str, int]:
        """The entry's ``function``: coordinate name -> +1 / -1."""
        function = {}
        for cname, sign in (entry.get("function", {}) or {}).items():
            if sign not in (-1, 1):
                raise self.err(f"{key}.function.{cname}", "expected +1 or -1", part.path)
            function[str(cname)] = int(sign)
        return function

    # ---------------------------------------------------------------- contacts, passives
    def _contacts(self, part):
        for i, c in enumerate(part.data.get("contacts", []) or []):
            key = f"contacts[{i}]"
            sides = SIDES if c.get("mirror") else (None,)
            for side in sides:
                body = self._resolve_body(str(c["body"]), side)
                if body not in self.bodies:
                    raise self.err(f"{key}.body", f"unknown body '{body}'", part.path)
                loc = self.vec(part, c["at"], f"{key}.at")
                if side == "l":
                    loc = _mirror_point(loc)
                radius = self.num(part, c["radius"], f"{key}.radius")
                if radius <= 0:
                    raise self.err(f"{key}.radius", "must be positive", part.path)
                name = f"{c['name']}_{side}" if side else str(c["name"])
                self.contacts.append(ContactSpec(name, body, loc, radius, foot=side))

    def _passives(self, part):
        for i, s in enumerate(part.data.get("springs", []) or []):
            key = f"springs[{i}]"
            for coord, _side in self._expand_coordinates(part, s, key):
                joint_vars = {"buckling": self._chain_buckling.get(coord, 0.0)}
                stiffness = self.num(part, s["stiffness"], f"{key}.stiffness", joint_vars)
                damping = self.num(part, s.get("damping", 0), f"{key}.damping")
                if stiffness < 0 or damping < 0:
                    raise self.err(key, "stiffness and damping must be non-negative", part.path)
                param = s.get("parameter")
                self.springs.append(
                    SpringSpec(f"spring_{coord}", coord, stiffness, damping, str(param) if param else None)
                )
        for i, lim in enumerate(part.data.get("limits", []) or []):
            key = f"limits[{i}]"
            for coord, _side in self._expand_coordinates(part, lim, key):
                lo = self.num(part, lim["range"][0], f"{key}.range")
                hi = self.num(part, lim["range"][1], f"{key}.range")
                if not lo < hi:
                    raise self.err(f"{key}.range", f"inverted or empty range [{lo}, {hi}]", part.path)
                self._check_base_pose_in(
                    part, f"{key}.range", lo, hi, ": the base pose would start inside the limit"
                )
                self.limits.append(
                    LimitSpec(
                        f"limit_{coord}",
                        coord,
                        lo,
                        hi,
                        self.num(part, lim.get("stiffness", 10), f"{key}.stiffness"),
                        self.num(part, lim.get("damping", 0.1), f"{key}.damping"),
                    )
                )

    def _check_base_pose_in(self, part, key: str, lo: float, hi: float, what: str) -> None:
        """A coordinate's or limit's [lo, hi] must hold 0, the base pose's value."""
        if not lo <= 0.0 <= hi:
            raise self.err(
                key, f"[{lo:g}, {hi:g}] leaves out 0{what} (with this part's parameters)", part.path
            )

    def _expand_coordinates(self, part, entry, key):
        """Coordinates named by an entry: ``coordinate`` (with ``mirror``) or ``pattern``
        (a prefix matching all coordinates such as the chain's ``neck_flexion_*``)."""
        names = {c.name for j in self.joints for c in j.coordinates}
        if "pattern" in entry:
            prefix = str(entry["pattern"])
            found = sorted(n for n in names if n.startswith(prefix))
            return [(n, None) for n in found]
        generic = str(entry["coordinate"])
        out = []
        for side in SIDES if entry.get("mirror") else (None,):
            cname = f"{generic}_{side}" if side else generic
            if cname not in names:
                raise self.err(f"{key}.coordinate", f"unknown coordinate '{cname}'", part.path)
            out.append((cname, side))
        return out

    def _features(self, part):
        feats = part.data.get("features", {}) or {}
        if "trunk" in feats:
            self.features["trunk"] = self._resolve_body(str(feats["trunk"]), None)
        if "head" in feats:
            self.features["head"] = self._resolve_body(str(feats["head"]), None)
            self.features["head_offset"] = list(
                self.vec(part, feats.get("head_offset", [0, 0, 0]), "features.head_offset")
            )
            if "head_gain_mass" in feats:
                unit = feats["head_gain_mass"]
                if unit not in HEAD_GAIN_MASSES:
                    raise self.err(
                        "features.head_gain_mass",
                        f"expected one of {', '.join(HEAD_GAIN_MASSES)}, got {unit!r}",
                        part.path,
                    )
                if unit != "body":  # absent means the body's, as in every model built before
                    self.features["head_gain_mass"] = unit
        if "head_gain_mass" in feats and "head" not in feats:
            raise self.err("features.head_gain_mass", "needs features.head in the same part", part.path)
        legs = feats.get("legs")
        if legs:
            for side in SIDES:
                self.features["legs"][side] = {
                    role: self._resolve_body(str(b), side) for role, b in legs.items()
                }
        arms = feats.get("arms")
        if arms:
            self.features["arms"] = {side: [self._resolve_body(str(b), side) for b in arms] for side in SIDES}

    def _expect(self, part):
        for k, v in (part.data.get("expect", {}) or {}).items():
            self.expected[k] = self.expected.get(k, 0) + int(self.num(part, v, f"expect.{k}"))

    def _check_names(self):
        seen = set()
        for n in (
            [b.name for b in self.bodies.values()]
            + [m.name for m in self.muscles]
            + [c.name for c in self.contacts]
            + [j.name for j in self.joints]
        ):
            if n in seen and n not in self.bodies:
                raise self.err("", f"duplicate component name '{n}'")
            seen.add(n)
        if "trunk" not in self.features:
            self.features["trunk"] = self.root
        if "head" not in self.features:
            raise self.err("parts", "no template defines the head feature (features.head)")
