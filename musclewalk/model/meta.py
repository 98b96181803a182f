"""The model's metadata sidecar (``MODEL.meta.json``): what the controller, simulator, optimizer
and renderer need to know about a generated model beyond the .osim itself — muscle roles and
neural delays, the joints each muscle spans, feature bodies, attachment regions and the
parameter entries of routing, muscle properties and passive gains."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .kinematics import base_pose_transforms, path_length
from .spec import CreatureSpec

META_VERSION = 1
HEAD_CHAIN_KINDS = {"spine", "neck", "head_chain"}
# paper §4.4: 20 ms for muscles attached to the foot, 10 ms lower leg, 5 ms upper leg and others
DELAY_BY_ROLE = {"foot": 0.020, "toe": 0.020, "lower": 0.010}
DEFAULT_DELAY = 0.005
PROPERTY_BOUNDS = (0.5, 2.0)      # multiples of the initial value
PASSIVE_BOUNDS = (0.0, 4.0)       # multiples of the initial gain


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
    up = [(parents[x], x) for x in ca[:ca.index(common)]]
    down = [(parents[x], x) for x in cb[:cb.index(common)]]
    return up + down[::-1]


def muscle_spans(spec: CreatureSpec, muscle) -> list[dict]:
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
            spans.append({"joint": joint.name, "segment": k,
                          "child_point": k if below_a else k + 1})
    return spans


def _ancestors(parents, x):
    out = {x}
    while parents.get(x) is not None:
        x = parents[x]
        out.add(x)
    return out


def muscle_roles(spec: CreatureSpec, muscle, spans) -> list[str]:
    kinds = {j.name: j.kind for j in spec.joints}
    spanned = {kinds[s["joint"]] for s in spans}
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


def build_meta(spec: CreatureSpec) -> dict:
    transforms = base_pose_transforms(
        spec.bodies[0].name, spec.root_height,
        [(j.parent, j.child, j.location, j.orientation) for j in spec.joints])
    legs = spec.features.get("legs", {})
    leg_length = (float(transforms[legs["r"]["upper"]][1][1]) if "r" in legs
                  else spec.root_height)
    muscles = []
    for m in spec.muscles:
        spans = muscle_spans(spec, m)
        muscles.append({
            "name": m.name, "unique": m.unique, "side": m.side,
            "roles": muscle_roles(spec, m, spans), "delay": muscle_delay(spec, m),
            "spans": spans, "function": m.function, "property_rule": m.property_rule,
            "property_group": m.property_group, "source": m.source,
            "max_isometric_force": m.max_isometric_force,
            "optimal_fiber_length": m.optimal_fiber_length,
            "tendon_slack_length": m.tendon_slack_length, "pennation": m.pennation,
            "rigid_tendon": m.rigid_tendon,
            "points": [{"name": p.name, "body": p.body, "location": list(map(float, p.location)),
                        "ranges": {a: list(r) for a, r in p.ranges.items()}} for p in m.points],
        })
    return {
        "musclewalk_meta": META_VERSION,
        "creature": spec.name, "source": spec.source, "templates": spec.templates,
        "parameters": spec.parameters, "total_mass": spec.total_mass,
        "root": spec.bodies[0].name, "root_height": spec.root_height, "leg_length": leg_length,
        "features": spec.features, "expected": spec.expected,
        "base_pose": {b: {"R": r.reshape(-1).tolist(), "p": p.tolist()}
                      for b, (r, p) in transforms.items()},
        "bodies": [{"name": b.name, "role": b.role, "side": b.side, "parent": b.parent,
                    "mass": b.mass, "tilt": b.tilt} for b in spec.bodies],
        "joints": [{"name": j.name, "kind": j.kind, "side": j.side, "parent": j.parent,
                    "child": j.child, "location": list(map(float, j.location)),
                    "coordinates": [c.name for c in j.coordinates]} for j in spec.joints],
        "contacts": [{"name": c.name, "body": c.body, "foot": c.foot, "radius": c.radius,
                      "location": list(map(float, c.location))} for c in spec.contacts],
        "physics": spec.physics,
        "muscles": muscles,
        "routing": routing_entries(spec),
        "properties": property_entries(spec, transforms),
        "passive": passive_entries(spec),
    }


def routing_entries(spec: CreatureSpec) -> list[dict]:
    """One entry per free attachment component of a unique muscle. Mirrored muscles (and the
    repeated muscles of a chain) share the entry; each target keeps its own range, and a
    mirrored z target maps the normalized value with the opposite sign."""
    entries: dict[str, dict] = {}
    for m in spec.muscles:
        for k, p in enumerate(m.points):
            for axis, (lo, hi) in sorted(p.ranges.items()):
                name = f"{m.unique}.P{k + 1}.{axis}"
                sign = -1.0 if (m.side == "l" and axis == "z") else 1.0
                lo_r, hi_r = (-hi, -lo) if sign < 0 else (lo, hi)
                entries.setdefault(name, {"name": name, "targets": []})["targets"].append(
                    {"muscle": m.name, "point": p.name, "axis": axis, "lo": lo_r, "hi": hi_r,
                     "sign": sign})
    return list(entries.values())


def property_entries(spec: CreatureSpec, transforms) -> list[dict]:
    """Free muscle properties per property group: Fmax, l_opt, l_slack ("full" rule) or l_opt
    only with l_slack derived from the base-pose path length ("lopt_only", paper §6.1)."""
    groups: dict[str, list] = {}
    for m in spec.muscles:
        groups.setdefault(m.property_group, []).append(m)
    out = []
    lo_f, hi_f = PROPERTY_BOUNDS
    for group, ms in groups.items():
        rule = ms[0].property_rule
        kinds = (["max_isometric_force", "optimal_fiber_length", "tendon_slack_length"]
                 if rule == "full" else ["optimal_fiber_length"])
        for kind in kinds:
            initial = float(getattr(ms[0], kind))
            entry = {"name": f"{group}.{kind}", "kind": kind, "rule": rule,
                     "targets": [m.name for m in ms], "initial": initial,
                     "lo": lo_f * initial, "hi": hi_f * initial}
            if rule == "lopt_only":
                lo_max = min(path_length(transforms, [(p.body, p.location) for p in m.points])
                             * 0.95 / np.cos(m.pennation) for m in ms)
                entry["hi"] = min(entry["hi"], lo_max)
            out.append(entry)
    return out


def passive_entries(spec: CreatureSpec) -> list[dict]:
    groups: dict[str, list] = {}
    for s in spec.springs:
        if s.parameter:
            groups.setdefault(s.parameter, []).append(s)
    out = []
    lo_f, hi_f = PASSIVE_BOUNDS
    for name, springs in groups.items():
        for kind, attr in (("stiffness", "stiffness"), ("damping", "damping")):
            initial = float(getattr(springs[0], attr))
            out.append({"name": f"{name}.{kind}", "kind": kind,
                        "targets": [s.name for s in springs], "initial": initial,
                        "lo": lo_f * initial, "hi": max(hi_f * initial, 1e-6)})
    return out


def scale_passive_bounds(meta: dict, factors: dict[str, float]) -> dict:
    """A copy of ``meta`` whose passive entries named in ``factors`` have initial value and bounds
    multiplied by the factor: one stage of a continuation (homotopy) chain of optimizations, e.g.
    a stiffer spine that is relaxed stage by stage. A name is an entry (``spine_flexion.stiffness``)
    or a gain group (``spine_flexion``: stiffness and damping). The factors are recorded under
    ``passive_scale``; an already scaled model is not scaled again."""
    if meta.get("passive_scale"):
        raise ValueError(f"passive gains are already scaled ({meta['passive_scale']})")
    out = json.loads(json.dumps(meta, default=_json_default))
    for name, factor in factors.items():
        if not (isinstance(factor, (int, float)) and factor > 0 and np.isfinite(factor)):
            raise ValueError(f"{name}: factor must be a positive number, got {factor!r}")
        hits = [e for e in out["passive"] if e["name"] == name or e["name"].rsplit(".", 1)[0] == name]
        if not hits:
            known = sorted({e["name"].rsplit(".", 1)[0] for e in out["passive"]})
            raise ValueError(f"{name}: no such passive gain (known: {', '.join(known) or 'none'})")
        for e in hits:
            e["initial"] *= factor
            e["lo"] *= factor
            e["hi"] *= factor
    out["passive_scale"] = dict(factors)
    return out


def meta_bytes(meta: dict) -> bytes:
    """The metadata file's contents."""
    return (json.dumps(meta, indent=1, default=_json_default) + "\n").encode()


def write_meta(path, meta: dict) -> None:
    from .osim import write_atomic
    write_atomic(Path(path), meta_bytes(meta))


def load_meta(path) -> dict:
    path = Path(path)
    if path.suffix == ".osim":
        path = meta_path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: model metadata not found (build the model with "
                                f"'musclewalk build')") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    if data.get("musclewalk_meta") != META_VERSION:
        raise ValueError(f"{path}: musclewalk_meta: unsupported version "
                         f"{data.get('musclewalk_meta')!r}")
    return data


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(type(o))
