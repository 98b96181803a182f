"""The model's metadata sidecar (``MODEL.meta.json``): what the controller, simulator, optimizer
and renderer need to know about a generated model beyond the .osim itself — muscle roles and
neural delays, the joints each muscle spans, feature bodies, attachment regions and the
parameter entries of routing, muscle properties and passive gains. Built from a creature spec,
written and read here; its typed form (``ModelMeta`` and the records it holds) is
``musclewalk.model.metadata``."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from .kinematics import base_pose_transforms, path_length
from .metadata import (
    IDEAL_MUSCLES,
    INDEPENDENT_PROPERTIES,
    MILLARD_MUSCLES,
    WORKING_RANGE_PROPERTIES,
    Body,
    BodyPose,
    Contact,
    Features,
    Joint,
    ModelMeta,
    Muscle,
    PassiveEntry,
    PathPoint,
    Physics,
    PropertyEntry,
    RoutingEntry,
    RoutingTarget,
    Span,
)
from .spec import CreatureSpec

HEAD_CHAIN_KINDS = {"spine", "neck", "head_chain"}
# paper §4.4: 20 ms for muscles attached to the foot, 10 ms lower leg, 5 ms upper leg and others
DELAY_BY_ROLE = {"foot": 0.020, "toe": 0.020, "lower": 0.010}
DEFAULT_DELAY = 0.005
PROPERTY_BOUNDS = (0.5, 2.0)  # multiples of the initial value
# the muscle properties each muscle model has (an ideal muscle F = u F_max has no fibre or tendon)
MODEL_PROPERTY_KINDS = {
    MILLARD_MUSCLES: ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length"),
    IDEAL_MUSCLES: ("max_isometric_force",),
}
PASSIVE_BOUNDS = (0.0, 4.0)  # multiples of the initial gain
# physics.muscle_properties working_range: default bounds of a "full" muscle's normalized fibre
# length in the base pose (standing; physics.standing_fiber_length). Human muscles work at about
# 0.5-1.3 optimal lengths (the templates' standing values, from gait10dof18musc, are 0.53-1.0);
# above it the passive force rises steeply.
STANDING_FIBER_LENGTH_BOUNDS = (0.5, 1.2)


def one_side(names, first_segment_only: bool = False) -> list[str]:
    """The muscles of ``names`` that stand for their mirrored pair: every name but a left one whose
    right twin is listed; with ``first_segment_only``, of a chain's numbered segments (neck, tail,
    spine: ``name_2_r``, ``name_3``) only the first."""
    listed = set(names)
    kept = [n for n in names if not (n.endswith("_l") and f"{n[:-2]}_r" in listed)]
    if first_segment_only:
        kept = [n for n in kept if not (re.search(r"_\d+(_[rl])?$", n) and not re.search(r"_1(_r)?$", n))]
    return kept


def meta_path(osim_path) -> Path:
    p = Path(osim_path)
    return p.with_name(p.stem + ".meta.json")


def _tree_path(parents: dict, a: str, b: str) -> list[tuple[str, str]]:
    """Joints (as (parent, child) pairs) on the kinematic path between bodies a and b."""

    def chain(x):
        out = [x]
        while parents.get(x) is not None:
            x = parents[x]
            out.append(x)
        return out

    ca, cb = chain(a), chain(b)
    common = next(x for x in ca if x in cb)
    up = [(parents[x], x) for x in ca[: ca.index(common)]]
    down = [(parents[x], x) for x in cb[: cb.index(common)]]
    return up + down[::-1]


def muscle_spans(spec: CreatureSpec, muscle) -> list[Span]:
    """For each joint the muscle spans: the path segment crossing it and which end of that
    segment lies on the joint's child side."""
    parents = {b.name: b.parent for b in spec.bodies}
    joint_by_child = {j.child: j for j in spec.joints}
    spans = []
    for k in range(len(muscle.points) - 1):
        a, b = muscle.points[k].body, muscle.points[k + 1].body
        if a == b:
            continue
        for _parent, child in _tree_path(parents, a, b):
            joint = joint_by_child[child]
            # the point whose body lies below `child` in the tree is on the child side
            below_a = child in _ancestors(parents, a)
            spans.append(Span(joint=joint.name, segment=k, child_point=k if below_a else k + 1))
    return spans


def _ancestors(parents, x):
    out = {x}
    while parents.get(x) is not None:
        x = parents[x]
        out.add(x)
    return out


def muscle_roles(spec: CreatureSpec, muscle, spans) -> list[str]:
    kinds = {j.name: j.kind for j in spec.joints}
    spanned = {kinds[s.joint] for s in spans}
    roles = set(muscle.extra_roles)
    f = muscle.function
    if "hip" in spanned:
        roles.add("hip")
        if f.get("hip_flexion") == 1:
            roles.add("hip_flexor")
        elif f.get("hip_flexion") == -1:
            roles.add("hip_extensor")
    if "knee" in spanned:
        roles.add("knee")
        if f.get("knee_angle") == -1:
            roles.add("knee_extensor")
    if "ankle" in spanned:
        roles.add("ankle")
        if f.get("ankle_angle") == -1:
            roles.add("ankle_extensor")
    if spanned & HEAD_CHAIN_KINDS:
        roles.add("head_chain")
    return sorted(roles)


def muscle_delay(spec: CreatureSpec, muscle) -> float:
    roles = {spec.body(p.body).role for p in muscle.points}
    return max([DELAY_BY_ROLE.get(r, DEFAULT_DELAY) for r in roles])


def build_meta(spec: CreatureSpec) -> ModelMeta:
    transforms = base_pose_transforms(
        spec.bodies[0].name,
        spec.root_height,
        [(j.parent, j.child, j.location, j.orientation) for j in spec.joints],
    )
    legs = spec.features.get("legs", {})
    leg_length = float(transforms[legs["r"]["upper"]][1][1]) if "r" in legs else spec.root_height
    ideal = spec.physics.get("muscles") == IDEAL_MUSCLES
    muscles = []
    for m in spec.muscles:
        spans = muscle_spans(spec, m)
        muscles.append(
            Muscle(
                name=m.name,
                unique=m.unique,
                side=m.side,
                roles=tuple(muscle_roles(spec, m, spans)),
                delay=0.0 if ideal else muscle_delay(spec, m),  # the ablation has no delays
                spans=tuple(spans),
                function=m.function,
                property_rule=m.property_rule,
                property_group=m.property_group,
                source=m.source,
                max_isometric_force=m.max_isometric_force,
                optimal_fiber_length=m.optimal_fiber_length,
                tendon_slack_length=m.tendon_slack_length,
                pennation=m.pennation,
                rigid_tendon=None if ideal else m.rigid_tendon,
                points=tuple(
                    PathPoint(
                        name=p.name,
                        body=p.body,
                        location=tuple(map(float, p.location)),
                        ranges={a: tuple(r) for a, r in p.ranges.items()},
                    )
                    for p in m.points
                ),
            )
        )
    where = f"{spec.source}: metadata"
    return ModelMeta(
        creature=spec.name,
        source=spec.source,
        templates=spec.templates,
        parameters=spec.parameters,
        total_mass=spec.total_mass,
        root=spec.bodies[0].name,
        root_height=spec.root_height,
        leg_length=leg_length,
        features=Features.from_dict(spec.features, f"{where} features"),
        expected=spec.expected,
        base_pose={
            b: BodyPose(R=tuple(r.reshape(-1).tolist()), p=tuple(p.tolist()))
            for b, (r, p) in transforms.items()
        },
        bodies=tuple(
            Body(name=b.name, role=b.role, side=b.side, parent=b.parent, mass=b.mass, tilt=b.tilt)
            for b in spec.bodies
        ),
        joints=tuple(
            Joint(
                name=j.name,
                kind=j.kind,
                side=j.side,
                parent=j.parent,
                child=j.child,
                location=tuple(map(float, j.location)),
                coordinates=tuple(c.name for c in j.coordinates),
            )
            for j in spec.joints
        ),
        contacts=tuple(
            Contact(
                name=c.name, body=c.body, foot=c.foot, radius=c.radius, location=tuple(map(float, c.location))
            )
            for c in spec.contacts
        ),
        physics=Physics.from_dict(_recorded_physics(spec.physics), f"{where} physics"),
        muscles=tuple(muscles),
        routing=routing_entries(spec),
        properties=property_entries(spec, transforms),
        passive=passive_entries(spec),
    )


def _recorded_physics(physics: dict) -> dict:
    """The physics a model's metadata records: the default muscle model and property mode go
    unsaid (files keep their bytes; a file without ``muscles`` is of Millard muscles, one without
    ``muscle_properties`` optimizes them independently and has no standing fibre lengths)."""
    defaults = {"muscles": MILLARD_MUSCLES, "muscle_properties": INDEPENDENT_PROPERTIES}
    independent = physics.get("muscle_properties", INDEPENDENT_PROPERTIES) == INDEPENDENT_PROPERTIES
    return {
        k: v
        for k, v in physics.items()
        if not (k in defaults and v == defaults[k]) and not (k == "standing_fiber_length" and independent)
    }


def routing_entries(spec: CreatureSpec) -> tuple[RoutingEntry, ...]:
    """One entry per free attachment component of a unique muscle. Mirrored muscles (and the
    repeated muscles of a chain) share the entry; each target keeps its own range, and a
    mirrored z target maps the normalized value with the opposite sign."""
    targets: dict[str, list[RoutingTarget]] = {}
    for m in spec.muscles:
        for k, p in enumerate(m.points):
            for axis, (lo, hi) in sorted(p.ranges.items()):
                name = f"{m.unique}.P{k + 1}.{axis}"
                sign = -1.0 if (m.side == "l" and axis == "z") else 1.0
                lo_r, hi_r = (-hi, -lo) if sign < 0 else (lo, hi)
                targets.setdefault(name, []).append(
                    RoutingTarget(muscle=m.name, point=p.name, axis=axis, lo=lo_r, hi=hi_r, sign=sign)
                )
    return tuple(RoutingEntry(name=name, targets=tuple(ts)) for name, ts in targets.items())


def property_entries(spec: CreatureSpec, transforms) -> tuple[PropertyEntry, ...]:
    """Free muscle properties per property group: Fmax, l_opt, l_slack ("full" rule) or l_opt
    only with l_slack derived from the base-pose path length ("lopt_only", paper §6.1). Of these,
    a model keeps the kinds its muscles have (MODEL_PROPERTY_KINDS): with ideal muscles F_max of
    the "full" groups only. With physics ``muscle_properties: working_range`` a "full" group's
    l_slack gives way to its fibre's normalized length standing (physics standing_fiber_length),
    from which l_slack is derived after every change of routing or l_opt
    (ModelVectors.derive_tendon_slack)."""
    has = MODEL_PROPERTY_KINDS[spec.physics.get("muscles", MILLARD_MUSCLES)]
    working_range = (
        spec.physics.get("muscle_properties") == WORKING_RANGE_PROPERTIES and "tendon_slack_length" in has
    )
    groups: dict[str, list] = {}
    for m in spec.muscles:
        groups.setdefault(m.property_group, []).append(m)
    out = []
    lo_f, hi_f = PROPERTY_BOUNDS
    for group, ms in groups.items():
        rule = ms[0].property_rule
        kinds = (
            ["max_isometric_force", "optimal_fiber_length", "tendon_slack_length"]
            if rule == "full"
            else ["optimal_fiber_length"]
        )
        if working_range and rule == "full":
            kinds[-1] = "standing_fiber_length"
        for kind in (k for k in kinds if k in has or k == "standing_fiber_length"):
            if kind == "standing_fiber_length":
                initial, lo, hi = _standing_entry_range(spec, transforms, ms[0])
            else:
                initial = float(getattr(ms[0], kind))
                lo, hi = lo_f * initial, hi_f * initial
            if rule == "lopt_only":
                lo_max = min(
                    path_length(transforms, [(p.body, p.location) for p in m.points])
                    * 0.95
                    / np.cos(m.pennation)
                    for m in ms
                )
                hi = min(hi, lo_max)
            out.append(
                PropertyEntry(
                    name=f"{group}.{kind}",
                    kind=kind,
                    rule=rule,
                    targets=tuple(m.name for m in ms),
                    initial=initial,
                    lo=lo,
                    hi=hi,
                )
            )
    return tuple(out)


def _standing_entry_range(spec: CreatureSpec, transforms, muscle) -> tuple[float, float, float]:
    """(template value, lower, upper) of a working_range muscle's standing fibre length."""
    initial = standing_fiber_length(
        path_length(transforms, [(p.body, p.location) for p in muscle.points]),
        muscle.optimal_fiber_length,
        muscle.tendon_slack_length,
        muscle.pennation,
    )
    lo, hi = map(float, spec.physics.get("standing_fiber_length", STANDING_FIBER_LENGTH_BOUNDS))
    if not lo <= initial <= hi:
        raise ValueError(
            f"{spec.source}: muscle {muscle.name}: standing fibre length {initial:.3f} optimal "
            f"lengths is outside [{lo:g}, {hi:g}] (physics.muscle_properties: working_range, "
            f"physics.standing_fiber_length); set its base_fiber_length or the bounds so that it "
            f"is inside"
        )
    return initial, lo, hi


def standing_fiber_length(path, optimal_fiber_length, tendon_slack_length, pennation) -> float:
    """A Millard muscle's normalized fibre length on a path of length ``path`` with a slack
    tendon: fibre along the path l cos(a) = path - l_slack, constant fibre height
    l sin(a) = l_opt sin(pennation). A tendon longer than the path leaves the muscle slack: then
    the (negative) path - l_slack over l_opt."""
    along = path - tendon_slack_length
    if along <= 0.0:
        return float(along / optimal_fiber_length)
    height = optimal_fiber_length * np.sin(pennation)
    return float(np.hypot(along, height) / optimal_fiber_length)


def tendon_slack_for(path, optimal_fiber_length, fiber_length, pennation) -> float:
    """The tendon slack length that puts the fibre at ``fiber_length`` optimal lengths on a path
    of length ``path`` (the inverse of standing_fiber_length; a negative length: a slack muscle,
    its tendon longer than the path by that many optimal lengths)."""
    if fiber_length <= 0.0:
        return float(path - fiber_length * optimal_fiber_length)
    fibre = optimal_fiber_length * fiber_length
    height = optimal_fiber_length * np.sin(pennation)
    return float(path - np.sqrt(max(fibre**2 - height**2, 0.0)))


def passive_entries(spec: CreatureSpec) -> tuple[PassiveEntry, ...]:
    groups: dict[str, list] = {}
    for s in spec.springs:
        if s.parameter:
            groups.setdefault(s.parameter, []).append(s)
    out = []
    lo_f, hi_f = PASSIVE_BOUNDS
    for name, springs in groups.items():
        for kind, attr in (("stiffness", "stiffness"), ("damping", "damping")):
            values = [float(getattr(s, attr)) for s in springs]
            initial = values[0]
            profile = None
            if any(v != initial for v in values):
                if initial <= 0:
                    raise ValueError(
                        f"passive gain {name}.{kind}: its first spring's {attr} is 0, not the others'"
                    )
                profile = tuple(v / initial for v in values)
            out.append(
                PassiveEntry(
                    name=f"{name}.{kind}",
                    kind=kind,
                    targets=tuple(s.name for s in springs),
                    initial=initial,
                    lo=lo_f * initial,
                    hi=max(hi_f * initial, 1e-6),
                    profile=profile,
                )
            )
    return tuple(out)


def scale_passive_bounds(meta: ModelMeta, factors: dict[str, float]) -> ModelMeta:
    """A copy of ``meta`` whose passive entries named in ``factors`` have initial value and bounds
    multiplied by the factor: one stage of a continuation (homotopy) chain of optimizations, e.g.
    a stiffer spine that is relaxed stage by stage. A name is an entry (``spine_flexion.stiffness``)
    or a gain group (``spine_flexion``: stiffness and damping). The factors are recorded under
    ``passive_scale``; an already scaled model is not scaled again."""
    if meta.passive_scale:
        raise ValueError(f"passive gains are already scaled ({meta.passive_scale})")
    passive = list(meta.passive)
    for name, factor in factors.items():
        if not (isinstance(factor, (int, float)) and factor > 0 and np.isfinite(factor)):
            raise ValueError(f"{name}: factor must be a positive number, got {factor!r}")
        hits = [i for i, e in enumerate(passive) if e.name == name or e.name.rsplit(".", 1)[0] == name]
        if not hits:
            known = sorted({e.name.rsplit(".", 1)[0] for e in passive})
            raise ValueError(f"{name}: no such passive gain (known: {', '.join(known) or 'none'})")
        for i in hits:
            e = passive[i]
            passive[i] = replace(e, initial=e.initial * factor, lo=e.lo * factor, hi=e.hi * factor)
    return replace(meta, passive=tuple(passive), passive_scale=dict(factors))


def meta_bytes(meta: ModelMeta) -> bytes:
    """The metadata file's contents."""
    return (json.dumps(meta.to_dict(), indent=1, default=_json_default) + "\n").encode()


def write_meta(path, meta: ModelMeta) -> None:
    from .osim import write_atomic

    write_atomic(Path(path), meta_bytes(meta))


def load_meta(path) -> ModelMeta:
    """The metadata of a model (``MODEL.osim`` or ``MODEL.meta.json``): FileNotFoundError or
    ValueError naming the file when it is missing, not JSON, of another version or not of the
    expected form."""
    path = Path(path)
    if path.suffix == ".osim":
        path = meta_path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: model metadata not found (build the model with 'musclewalk build')"
        ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    return ModelMeta.from_dict(data, path)


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(type(o))
