"""Routing, muscle-property and passive-gain vectors of a generated model.

Each free quantity is one named entry of the model's metadata (``routing``, ``properties``,
``passive``). Vectors are *normalized*: 0 is the lower and 1 the upper end of the entry's
range, so an optimizer can work in a unit box. Reading takes the value of an entry's first
target; writing sets every target (mirrored muscles and the repeated muscles of a chain share
one entry). Only PathPoint ``location`` texts and muscle/spring property texts change; every
other byte of the XML is left as it was.

Tendon slack lengths of muscles with the ``lopt_only`` property rule are derived after every
write: l_slack = base-pose path length (current routing) - l_opt cos(pennation) (paper §6.1).
So are those of a model built with physics ``muscle_properties: working_range``, whose "full"
muscles have the fibre's normalized length standing (``standing_fiber_length``) in place of
l_slack: the tendon that puts the fibre there on the base-pose path.
A model with ideal muscles (PathActuators, F = u F_max) has F_max (``optimal_force``) as its only
muscle property and no tendon to derive.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Mapping

import numpy as np
from lxml import etree

from .meta import PROPERTY_BOUNDS, standing_fiber_length, tendon_slack_for
from .metadata import IDEAL_MUSCLES, MILLARD_MUSCLES, ModelMeta
from .osim import MUSCLE_CLASS, fmt, write_atomic, xml_bytes

KINDS = ("routing", "properties", "passive")
STANDING = "standing_fiber_length"  # a property kind with no element of its own (l_slack's)
# the XML element of each muscle property kind, per muscle model (models/physics.yaml ``muscles``)
PROPERTY_TAGS = {
    MILLARD_MUSCLES: {k: k for k in ("max_isometric_force", "optimal_fiber_length", "tendon_slack_length")},
    IDEAL_MUSCLES: {"max_isometric_force": "optimal_force"},
}


def parse_osim(path) -> etree._ElementTree:
    parser = etree.XMLParser(remove_blank_text=False, recover=True)
    try:
        return etree.parse(str(path), parser)
    except OSError:
        raise FileNotFoundError(f"{path}: cannot read model file") from None


class ModelVectors:
    """Named, normalized parameter vectors of one model (from its metadata)."""

    def __init__(self, meta: ModelMeta):
        self.meta = meta
        self.entries = {
            "routing": list(meta.routing),
            "properties": list(meta.properties),
            "passive": list(meta.passive),
        }
        self.base_pose = {b: (np.array(v.R).reshape(3, 3), np.array(v.p)) for b, v in meta.base_pose.items()}
        self._pennation = {m.name: m.pennation for m in meta.muscles}
        self._ideal = meta.muscle_model == IDEAL_MUSCLES
        self._muscle_xpath = f"//ForceSet/objects/{MUSCLE_CLASS[meta.muscle_model]}"
        self._tags = PROPERTY_TAGS[meta.muscle_model]
        for e in meta.properties:
            if e.kind not in self._tags and not (e.kind == STANDING and meta.muscle_model == MILLARD_MUSCLES):
                raise ValueError(
                    f"{meta.source}: properties.{e.name}: {meta.muscle_model} muscles have no {e.kind} "
                    f"(their properties: {', '.join(self._tags)})"
                )
        self._lopt_only = (
            [] if self._ideal else [m.name for m in meta.muscles if m.property_rule == "lopt_only"]
        )
        # muscle -> its property entry of kind standing_fiber_length (working_range models)
        self._standing = {t: e for e in meta.properties if e.kind == STANDING for t in e.targets}

    def names(self, kind: str) -> list[str]:
        return [e.name for e in self.entries[kind]]

    def counts(self) -> dict[str, int]:
        return {kind: len(self.entries[kind]) for kind in KINDS}

    # ------------------------------------------------------------------ element lookup
    def _index(self, tree):
        muscles = {m.get("name"): m for m in tree.xpath(self._muscle_xpath)}
        points = {}
        for name, m in muscles.items():
            for pp in m.iter("PathPoint"):
                points[(name, pp.get("name"))] = pp
        springs = {s.get("name"): s for s in tree.xpath("//ForceSet/objects/SpringGeneralizedForce")}
        return muscles, points, springs

    # ------------------------------------------------------------------ read
    def read(self, tree, kind: str) -> np.ndarray:
        muscles, points, springs = self._index(tree)
        out = []
        for e in self.entries[kind]:
            if kind == "routing":
                t = e.targets[0]
                loc = _vec(points[(t.muscle, t.point)].find("location").text)
                value = t.sign * loc["xyz".index(t.axis)]
                out.append((value - t.lo) / (t.hi - t.lo))
            elif kind == "properties" and e.kind == STANDING:
                value = self._standing_length(muscles[e.targets[0]], e.targets[0])
                out.append((value - e.lo) / (e.hi - e.lo))
            else:
                el = (muscles if kind == "properties" else springs)[e.targets[0]]
                tag = (
                    self._tags[e.kind]
                    if kind == "properties"
                    else {"stiffness": "stiffness", "damping": "viscosity"}[e.kind]
                )
                value = float(el.find(tag).text)
                out.append((value - e.lo) / (e.hi - e.lo))
        return np.array(out, dtype=float)

    def read_values(self, tree, kind: str) -> dict[str, float]:
        return dict(zip(self.names(kind), self.read(tree, kind).tolist()))

    # ------------------------------------------------------------------ write
    def write(self, tree, values: Mapping[str, np.ndarray | Mapping[str, float]]) -> None:
        """Write normalized vectors (array in entry order, or {name: value}) per kind, in
        place. Routing is written before properties so derived tendon slack lengths use the
        new routing."""
        muscles, points, springs = self._index(tree)
        # working_range muscles keep their standing fibre length through changes of routing and
        # l_opt unless a new one is written
        standing = {name: self._standing_length(muscles[name], name) for name in self._standing}
        for kind in KINDS:
            if kind not in values:
                continue
            vec = self._as_dict(kind, values[kind])
            for e in self.entries[kind]:
                if e.name not in vec:
                    continue
                u = float(vec[e.name])
                if not np.isfinite(u):
                    raise ValueError(f"{kind}.{e.name}: value is not finite")
                if kind == "routing":
                    for t in e.targets:
                        el = points[(t.muscle, t.point)].find("location")
                        loc = _vec(el.text)
                        loc["xyz".index(t.axis)] = t.sign * (t.lo + u * (t.hi - t.lo))
                        el.text = fmt(loc)
                else:
                    value = e.lo + u * (e.hi - e.lo)
                    for i, target in enumerate(e.targets):
                        if kind == "properties" and e.kind == STANDING:
                            standing[target] = value
                        elif kind == "properties":
                            muscles[target].find(self._tags[e.kind]).text = fmt(value)
                        else:
                            tag = "stiffness" if e.kind == "stiffness" else "viscosity"
                            factor = e.factor(i)
                            springs[target].find(tag).text = fmt(value if factor is None else value * factor)
        self.derive_tendon_slack(tree, standing)

    def _as_dict(self, kind, values) -> dict[str, float]:
        if isinstance(values, Mapping):
            unknown = set(values) - set(self.names(kind))
            if unknown:
                raise KeyError(f"{kind}: unknown parameter(s) {sorted(unknown)}")
            return dict(values)
        arr = np.asarray(values, dtype=float)
        if arr.shape != (len(self.entries[kind]),):
            raise ValueError(f"{kind}: expected {len(self.entries[kind])} values, got {arr.shape}")
        return dict(zip(self.names(kind), arr))

    def derive_tendon_slack(self, tree, standing: Mapping[str, float] | None = None) -> None:
        """Tendon slack lengths from the base-pose path of the routing in ``tree``: lopt_only
        muscles' with the fibre at its optimal length, working_range muscles' with the fibre at
        the standing length ``standing`` gives (muscle -> optimal lengths)."""
        if not self._lopt_only and not self._standing:
            return
        muscles, _, _ = self._index(tree)
        for name in self._lopt_only:
            m = muscles[name]
            lopt = float(m.find("optimal_fiber_length").text)
            m.find("tendon_slack_length").text = fmt(
                self._base_path(m) - lopt * np.cos(self._pennation[name])
            )
        for name in self._standing:
            if standing is None or name not in standing:
                continue
            m = muscles[name]
            lopt = float(m.find("optimal_fiber_length").text)
            slack = tendon_slack_for(self._base_path(m), lopt, standing[name], self._pennation[name])
            if slack <= 0.0:
                raise ValueError(
                    f"{name}: no tendon puts the fibre at {standing[name]:.3f} optimal lengths standing "
                    f"(path {self._base_path(m):.3f} m, l_opt {lopt:.3f} m)"
                )
            m.find("tendon_slack_length").text = fmt(slack)

    def standing_from_slack(self, tree, model: Mapping) -> dict[str, tuple[float, float]]:
        """The standing fibre lengths of a parameter file's model section (``routing``,
        ``properties``: normalized) written for the same creature with independent properties,
        whose ``<group>.tendon_slack_length`` spans 0.5-2x the template's slack length: entry name
        -> (normalized value, clipped into the entry's bounds; the standing length before
        clipping, optimal lengths). Groups without a slack length in ``model`` are left out."""
        given = {
            kind: {n: v for n, v in (model.get(kind) or {}).items() if n in self.names(kind)}
            for kind in ("routing", "properties")
        }
        tree = copy.deepcopy(tree)
        self.write(tree, given)
        muscles, _, _ = self._index(tree)
        lo_f, hi_f = PROPERTY_BOUNDS
        slack = model.get("properties") or {}
        out = {}
        for e in self.entries["properties"]:
            u = slack.get(e.name.rsplit(".", 1)[0] + ".tendon_slack_length")
            if e.kind != STANDING or u is None:
                continue
            name = e.targets[0]
            template = self.meta.muscle(name).tendon_slack_length
            muscles[name].find("tendon_slack_length").text = fmt(template * (lo_f + float(u) * (hi_f - lo_f)))
            length = self._standing_length(muscles[name], name)
            out[e.name] = ((min(max(length, e.lo), e.hi) - e.lo) / (e.hi - e.lo), length)
        return out

    def standing_lengths(self, tree) -> dict[str, float]:
        """Each Millard muscle's normalized fibre length standing (base pose, slack tendon; below 0
        a slack muscle), as ``tree`` has its routing and properties: the quantity a
        working_range model keeps within its bounds, for any model (physics.yaml)."""
        if self._ideal:
            return {}
        muscles, _, _ = self._index(tree)
        return {name: self._standing_length(m, name) for name, m in muscles.items()}

    def _base_path(self, muscle_el) -> float:
        """Length of a muscle's path (as the tree has it) in the base pose, m."""
        world = []
        for pp in muscle_el.iter("PathPoint"):
            body = pp.find("socket_parent_frame").text.rsplit("/", 1)[-1]
            r, p = self.base_pose[body]
            world.append(p + r @ np.array(_vec(pp.find("location").text)))
        return float(np.sum(np.linalg.norm(np.diff(np.array(world), axis=0), axis=1)))

    def _standing_length(self, muscle_el, name: str) -> float:
        return standing_fiber_length(
            self._base_path(muscle_el),
            float(muscle_el.find("optimal_fiber_length").text),
            float(muscle_el.find("tendon_slack_length").text),
            self._pennation[name],
        )

    def updated_meta(self, tree) -> ModelMeta:
        """The metadata describing the model in ``tree``: attachment locations and muscle
        properties as written (the controller's moment arms and F_max, and the effort model's
        muscle masses, must follow the candidate, not the template)."""
        muscles, points, _ = self._index(tree)

        def updated(m):
            el = muscles[m.name]
            # an ideal muscle keeps the template's fibre and tendon lengths (it has neither)
            lengths = (
                {}
                if self._ideal
                else {
                    "optimal_fiber_length": float(el.find("optimal_fiber_length").text),
                    "tendon_slack_length": float(el.find("tendon_slack_length").text),
                }
            )
            return replace(
                m,
                max_isometric_force=float(el.find(self._tags["max_isometric_force"]).text),
                **lengths,
                points=tuple(
                    replace(p, location=tuple(_vec(points[(m.name, p.name)].find("location").text)))
                    for p in m.points
                ),
            )

        return replace(self.meta, muscles=tuple(updated(m) for m in self.meta.muscles))

    def defaults(self, kind: str) -> np.ndarray:
        """Normalized values of the template's initial model."""
        if kind == "routing":
            out = []
            for e in self.entries[kind]:
                t = e.targets[0]
                p = next(p for p in self.meta.muscle(t.muscle).points if p.name == t.point)
                out.append((t.sign * p.location["xyz".index(t.axis)] - t.lo) / (t.hi - t.lo))
            return np.array(out)
        return np.array([(e.initial - e.lo) / (e.hi - e.lo) for e in self.entries[kind]])


def _vec(text: str) -> list[float]:
    return [float(v) for v in text.split()]


def write_model_with(osim_in, meta: ModelMeta, values, osim_out) -> None:
    """Copy a model with new routing/property/passive values (atomic write)."""
    tree = parse_osim(osim_in)
    ModelVectors(meta).write(tree, values)
    write_atomic(Path(osim_out), xml_bytes(tree))
