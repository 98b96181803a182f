"""The optimized parameter vector (Table 1): controller (state transition, target features,
feedback, constant excitations), initial state, and the model's muscle routing, muscle
properties and passive gains.

CMA-ES works in a normalized space where each coordinate is (value - initial) / scale with
scale = (upper - lower) / SCALE_DIVISOR, so the paper's step size sigma = 1 explores a tenth
of every parameter's range; bounds are handled by cma's bound transform. The initial mean is
the template's default set (x = 0), or a warm start.

Parameter overrides (an experiment file's ``parameters:``, ``Settings.parameters``) change the
search space, not the parameters: a name or fnmatch pattern over ``names`` maps to either

* ``{lower: a, upper: b}`` (either or both): narrowed bounds, absolute values within the
  parameter's own bounds. The space treats them as the parameter's bounds: the cma bounds, the
  clipping in ``values`` and the scale, which is (b - a) / SCALE_DIVISOR, so that sigma keeps its
  meaning (x spans SCALE_DIVISOR units between the bounds of every coordinate, narrowed or not:
  sigma = 1 explores a tenth of the narrowed range). A default outside the narrowed bounds
  starts at the nearest bound.
* ``{fixed: v}``: not optimized. The parameter is no coordinate of the CMA-ES vector (the
  dimension shrinks by the number of fixed parameters; CMA-ES never sees a zero-width
  coordinate) and ``values`` always gives it the value v (within its own bounds).
* ``{start: v}`` (alone or with the fields above but fixed): the CMA-ES mean starts at v for this
  parameter, in place of its default and of a warm start's value (within the bounds, narrowed or
  not). A feature beyond the paper whose gains start at 0, their lower bound, is barely explored
  from a warm start with a small sigma; a start value switches it on where the search begins.
  ``without_starts`` gives the same space without start values (a later stage of an experiment,
  which continues from the best of the stage before).
* ``{hold: true}``: not optimized, like fixed, at the value the run starts from: its warm start's
  (for a later stage of an experiment, the best of the stage before), or the default without one
  (``hold_values``, resolved once when the run starts and stored with its settings, so a resumed
  run holds the same values). A fine-tuning run holds, e.g., the muscle routing and properties
  (``"routing.*": {hold: true}``) and optimizes the controller in a smaller space.
* ``{free: true}``: optimized within its own bounds; only for the parameters of a controller
  feature beyond the paper (``ParamSpec.extension``, e.g. ``knee_overextension.*``). Those stay at
  their defaults, where the feature is off, unless an override names one of them (free, narrowed
  or fixed): then the feature is on and its parameters not named are optimized within their own
  bounds. A space without overrides is the paper's.

``layer_overrides`` puts one set of overrides over another (an extending experiment file's over
the extended one's, a stage's over its file's): there the upper key wins for the parameters it
matches. A parameter matched by two keys of one set, a key that matches nothing, an unknown
field, lower >= upper, and a bound or fixed value outside the parameter's own bounds are
OverrideErrors naming the key. Without overrides the space is the paper's full one.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Mapping

import numpy as np

from ..control.params import GROUPS as CONTROL_GROUPS
from ..control.params import ParamSpec, controller_parameter_specs
from ..model.metadata import ModelMeta
from ..model.vectors import KINDS, ModelVectors
from ..sim.scenario import INITIAL_STATE_SPECS

SCALE_DIVISOR = 10.0
GROUP_OF_MODEL_KIND = {
    "routing": "muscle_geometry",
    "properties": "muscle_physiology",
    "passive": "passive_control",
}
# every parameter group of a space (Table 1), in its order
PARAMETER_GROUPS = (*CONTROL_GROUPS, "initial_state", *GROUP_OF_MODEL_KIND.values())
OVERRIDE_FIELDS = ("lower", "upper", "fixed", "hold", "free", "start")


class OverrideError(ValueError):
    """A bad parameter override: ``key`` names it (``parameters[knee.theta].lower``), ``reason``
    says what is wrong; str() is "key: reason"."""

    def __init__(self, key: str, reason: str):
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


def model_parameter_spec(kind: str, name: str, default: float = 0.5) -> ParamSpec:
    """A routing, muscle-property or passive-gain parameter: already normalized to [0, 1] by its
    range in the model metadata."""
    return ParamSpec(
        f"{kind}.{name}",
        float(default),
        0.0,
        1.0,
        GROUP_OF_MODEL_KIND[kind],
        f"{kind} parameter, normalized to its range in the model metadata",
    )


def parameter_specs(meta: ModelMeta, control_model) -> list[ParamSpec]:
    """Every parameter of a model in the space's order: controller, initial state, routing,
    muscle properties, passive gains."""
    entries = controller_parameter_specs(control_model) + list(INITIAL_STATE_SPECS)
    vectors = ModelVectors(meta)
    for kind in KINDS:
        entries += [
            model_parameter_spec(kind, name, default)
            for name, default in zip(vectors.names(kind), vectors.defaults(kind))
        ]
    return entries


def _key(pattern: str, field: str | None = None) -> str:
    return f"parameters[{pattern}]" + (f".{field}" if field else "")


def parse_overrides(raw) -> dict[str, dict[str, float]]:
    """The overrides ``raw`` (pattern -> {lower, upper} or {fixed}) in their stored form: string
    keys, float values, only the fields given. None is no override. OverrideError for a bad
    structure (whether the patterns fit a model is ``resolve_overrides``' business)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise OverrideError("parameters", "expected a mapping of parameter names or patterns")
    out: dict[str, dict[str, float]] = {}
    for pattern, spec in raw.items():
        if not isinstance(pattern, str) or not pattern:
            raise OverrideError(_key(pattern), "expected a parameter name or fnmatch pattern")
        if not isinstance(spec, Mapping) or not spec:
            raise OverrideError(
                _key(pattern),
                "expected {lower: ..., upper: ...} (either or both), {fixed: ...}, {hold: true} "
                "or {free: true}",
            )
        values = {}
        for field, value in spec.items():
            if field not in OVERRIDE_FIELDS:
                raise OverrideError(
                    _key(pattern, str(field)), f"unknown key (known: {', '.join(OVERRIDE_FIELDS)})"
                )
            if field in ("free", "hold"):
                if value is not True:
                    raise OverrideError(_key(pattern, field), f"expected true, got {value!r}")
                values[field] = True
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise OverrideError(_key(pattern, field), f"expected a finite number, got {value!r}")
            values[field] = float(value)
        for alone in ("fixed", "hold"):
            if alone in values and len(values) > 1:
                raise OverrideError(
                    _key(pattern, alone),
                    f"a {'held' if alone == 'hold' else 'fixed'} parameter "
                    "takes no other field (lower, upper, fixed, hold, free or start)",
                )
        out[pattern] = values
    return out


@dataclasses.dataclass(frozen=True)
class ResolvedOverrides:
    """What stored overrides do to a model's parameters, each dict in parameter order."""

    fixed: dict[str, float]  # name -> fixed value (the held ones included)
    narrowed: dict[str, tuple[float, float]]  # name -> (lower, upper)
    starts: dict[str, float]  # name -> start value
    named: frozenset[str]  # every parameter some key matches
    held: frozenset[str] = frozenset()  # the fixed parameters held at their starting value


@lru_cache(maxsize=8192)
def _matching(names: tuple[str, ...], pattern: str) -> frozenset[str]:
    """The names ``pattern`` matches (fnmatch, case-sensitive); cached, because every experiment
    file of a chain resolves the same patterns over the same model's names."""
    return frozenset(n for n in names if fnmatchcase(n, pattern))


def resolve_overrides(
    overrides: Mapping[str, Mapping[str, float]],
    specs: list[ParamSpec],
    hold_values: Mapping[str, float] | None = None,
) -> ResolvedOverrides:
    """The stored overrides applied to the parameters ``specs``; a held parameter takes its value
    in ``hold_values``, else its default (clipped to its own bounds). OverrideError naming the
    key for a pattern that matches nothing, a parameter matched by two keys, a bound, fixed or
    start value outside a parameter's own bounds (a start also outside narrowed ones), lower >=
    upper, or nothing left to optimize."""
    names = [s.name for s in specs]
    all_names = tuple(names)
    hold_values = hold_values or {}
    matched_by: dict[str, str] = {}
    held: set[str] = set()
    fixed: dict[str, float] = {}
    narrowed: dict[str, tuple[float, float]] = {}
    starts: dict[str, float] = {}
    for pattern, spec in overrides.items():
        matched = _matching(all_names, pattern)
        matches = [s for s in specs if s.name in matched]
        if not matches:
            close = difflib.get_close_matches(pattern, names, n=3, cutoff=0.6)
            hint = f" (close: {', '.join(close)})" if close else ""
            raise OverrideError(_key(pattern), f"matches no parameter of the model{hint}")
        for s in matches:
            if s.name in matched_by:
                raise OverrideError(_key(pattern), f"{s.name} is also matched by {_key(matched_by[s.name])}")
            matched_by[s.name] = pattern
            own = f"[{s.lower:g}, {s.upper:g}]"
            if "free" in spec and not s.extension:
                raise OverrideError(
                    _key(pattern, "free"),
                    f"{s.name} is a parameter of the paper's controller, optimized anyway "
                    "(free is for the parameters of a feature beyond the paper)",
                )
            for field, value in spec.items():
                if field not in ("free", "hold") and not s.lower <= value <= s.upper:
                    raise OverrideError(
                        _key(pattern, field), f"{value:g} is outside the bounds {own} of {s.name}"
                    )
            if "fixed" in spec:
                fixed[s.name] = spec["fixed"]
            elif "hold" in spec:
                fixed[s.name] = min(max(float(hold_values.get(s.name, s.default)), s.lower), s.upper)
                held.add(s.name)
            else:
                lower, upper = spec.get("lower", s.lower), spec.get("upper", s.upper)
                if lower >= upper:
                    field = "lower" if "lower" in spec else "upper"
                    raise OverrideError(
                        _key(pattern, field),
                        f"lower {lower:g} >= upper {upper:g} for {s.name} (its bounds: {own}); "
                        "use fixed to hold a parameter at one value",
                    )
                if "lower" in spec or "upper" in spec:
                    narrowed[s.name] = (lower, upper)
                if "start" in spec:
                    if not lower <= spec["start"] <= upper:
                        raise OverrideError(
                            _key(pattern, "start"),
                            f"{spec['start']:g} is outside the narrowed bounds "
                            f"[{lower:g}, {upper:g}] of {s.name}",
                        )
                    starts[s.name] = spec["start"]
    order = {n: i for i, n in enumerate(names)}

    def in_order(values: dict) -> dict:
        return dict(sorted(values.items(), key=lambda kv: order[kv[0]]))

    return ResolvedOverrides(
        in_order(fixed), in_order(narrowed), in_order(starts), frozenset(matched_by), frozenset(held)
    )


def layer_overrides(
    base: Mapping[str, Mapping[str, float]],
    over: Mapping[str, Mapping[str, float]],
    names: list[str],
) -> dict[str, dict[str, float]]:
    """The stored overrides ``over`` over ``base`` (an extending experiment file's over the
    extended one's, a stage's over its file's), for a model with the parameters ``names``: a key
    of ``over`` takes the parameters it matches from every key of ``base``, so that a file can
    free one muscle's properties under a pattern that holds them all. A key of ``base`` that keeps
    all of its parameters stays as it is (with ``over``'s value where ``over`` has the same key),
    one that keeps some is replaced by them, each by name, one that keeps none is dropped; the
    keys of ``over`` follow. Without overlaps this is ``{**base, **over}``. Overlaps within
    ``over`` and keys that match nothing are left for ``resolve_overrides`` to refuse."""
    all_names = tuple(names)
    taken = set().union(*(_matching(all_names, pattern) for pattern in over))
    out: dict[str, dict[str, float]] = {}
    for pattern, spec in base.items():
        if pattern in over:
            out[pattern] = dict(over[pattern])
            continue
        matched = _matching(all_names, pattern)
        matches = [n for n in names if n in matched]
        kept = [n for n in matches if n not in taken]
        if len(kept) == len(matches):
            out[pattern] = dict(spec)
        else:
            out.update({n: dict(spec) for n in kept})
    for pattern, spec in over.items():
        out.setdefault(pattern, dict(spec))
    return out


def without_starts(overrides: Mapping[str, Mapping[str, float]], specs: list[ParamSpec]) -> dict:
    """The stored ``overrides`` without their start values, the same search space otherwise: a
    key left with no field keeps the parameters it named of a feature beyond the paper named, as
    ``{free: true}`` (naming one turns the feature on; the key itself when it names only those,
    else each of them by name), and is dropped for the paper's (optimized anyway)."""
    out: dict[str, dict[str, float]] = {}
    all_names = tuple(s.name for s in specs)
    for pattern, spec in overrides.items():
        rest = {k: v for k, v in spec.items() if k != "start"}
        if rest:
            out[pattern] = rest
            continue
        matched = _matching(all_names, pattern)
        named_features = [s.name for s in specs if s.extension and s.name in matched]
        if named_features and len(named_features) == len(matched):
            out[pattern] = {"free": True}
        else:  # a pattern over paper and feature parameters: each feature parameter by name
            out.update({name: {"free": True} for name in named_features})
    return out


class ParameterSpace:
    """The search space of a run. ``names`` and ``entries``: every parameter of the model
    (narrowed bounds applied; a fixed one's default is its fixed value); ``optimized``: the
    ParamSpecs of the CMA-ES coordinates, in the same order. ``len()``, ``initial``, ``scale``,
    ``lower_x`` and ``upper_x`` are of the CMA-ES vector x; ``values(x)`` gives every parameter.
    ``overrides``: the run's parameter overrides (module doc), None or {} for none;
    ``hold_values``: the values of its held parameters (default: their defaults)."""

    def __init__(
        self,
        meta: ModelMeta,
        control_model,
        overrides: Mapping | None = None,
        hold_values: Mapping[str, float] | None = None,
    ):
        self.meta, self.control_model = meta, control_model
        specs = parameter_specs(meta, control_model)
        self.overrides = parse_overrides(overrides)
        # starts: values of optimized parameters that replace a default and a warm start's value
        resolved = resolve_overrides(self.overrides, specs, hold_values)
        self.fixed, self.narrowed, self.starts = resolved.fixed, resolved.narrowed, resolved.starts
        self.hold_names: frozenset[str] = resolved.held
        features_on = {e.extension for e in specs if e.extension and e.name in resolved.named}
        # parameters of features beyond the paper that this run keeps off, at their defaults
        self.off: dict[str, str] = {
            e.name: e.extension for e in specs if e.extension and e.extension not in features_on
        }
        # every value that is no CMA-ES coordinate: the fixed ones and the features kept off
        self.held: dict[str, float] = {
            **self.fixed,
            **{e.name: e.default for e in specs if e.name in self.off},
        }
        held = self.held
        entries = []
        for e in specs:
            if e.name in self.fixed:
                e = dataclasses.replace(e, default=self.fixed[e.name])
            elif e.name in self.narrowed:
                lower, upper = self.narrowed[e.name]
                e = dataclasses.replace(
                    e, default=min(max(e.default, lower), upper), lower=lower, upper=upper
                )
            if e.name in self.starts:
                e = dataclasses.replace(e, default=self.starts[e.name])
            entries.append(e)
        self.entries: list[ParamSpec] = entries
        self.names = [e.name for e in entries]
        self.optimized: list[ParamSpec] = [e for e in entries if e.name not in held]
        if not self.optimized:
            raise OverrideError("parameters", "every parameter is fixed: nothing left to optimize")
        self._free = np.array([i for i, e in enumerate(entries) if e.name not in held], dtype=int)
        self._all = np.array([e.default for e in entries])  # fixed values in place
        self._index = {e.name: i for i, e in enumerate(self.optimized)}
        self.initial = np.array([e.default for e in self.optimized])
        self.scale = np.array([(e.upper - e.lower) / SCALE_DIVISOR for e in self.optimized])
        self._lower = np.array([e.lower for e in self.optimized])
        self._upper = np.array([e.upper for e in self.optimized])
        self.lower_x = (self._lower - self.initial) / self.scale
        self.upper_x = (self._upper - self.initial) / self.scale

    @classmethod
    def of_creature(cls, creature: str, overrides: Mapping | None = None) -> "ParameterSpace":
        """The space of a creature (preset name or creature YAML, from its template without
        building the model; or a built .osim, from its metadata). ValueError for an unknown
        creature or a bad model."""
        from ..constants import CONTROL_INTERVAL
        from ..model.meta import build_meta, load_meta
        from ..model.template import load_creature
        from ..sim.bridge import control_model_from_meta

        if Path(creature).suffix == ".osim":
            meta = load_meta(Path(creature))
        else:
            meta = build_meta(load_creature(creature))
        return cls(meta, control_model_from_meta(meta, CONTROL_INTERVAL), overrides)

    def __len__(self) -> int:
        """The dimension of the CMA-ES vector: the parameters not fixed."""
        return len(self.optimized)

    def group_counts(self) -> dict[str, int]:
        """Optimized parameters per group (Table 1)."""
        out: dict[str, int] = {}
        for e in self.optimized:
            out[e.group] = out.get(e.group, 0) + 1
        return out

    def values(self, x: np.ndarray) -> dict[str, float]:
        """Every parameter by name: the optimized ones from ``x``, the fixed ones at their value."""
        v = self.initial + np.clip(x, self.lower_x, self.upper_x) * self.scale
        v = np.clip(v, self._lower, self._upper)
        full = self._all.copy()
        full[self._free] = v
        return dict(zip(self.names, full.tolist()))

    def moved(self, x: np.ndarray, directions: np.ndarray, fraction: float) -> np.ndarray:
        """The CMA-ES vector ``x`` moved by ``fraction`` of each coordinate's range, along
        ``directions`` (one +-1 per coordinate): a range is SCALE_DIVISOR units of x. A value on
        a bound moved outward stays on it (``values`` clips)."""
        return np.asarray(x) + (fraction * SCALE_DIVISOR) * np.asarray(directions)

    def at_bounds(
        self, values: Mapping[str, float], fraction: float = 0.01
    ) -> list[tuple[str, float, str, float]]:
        """The optimized parameters whose value lies within ``fraction`` of their range from a
        bound: (name, value, "lower" or "upper", the bound), in the space's order. A search that
        pushes a value against its bound wants it further (e.g. the aid runs' initial forward
        speed on its 1.5 x target, docs/getting-creatures-to-walk.md, *The start the aid paid for*)."""
        out = []
        for e in self.optimized:
            value = values.get(e.name)
            if value is None:
                continue
            margin = fraction * (e.upper - e.lower)
            if value <= e.lower + margin:
                out.append((e.name, float(value), "lower", e.lower))
            elif value >= e.upper - margin:
                out.append((e.name, float(value), "upper", e.upper))
        return out

    def x_from_values(self, values: Mapping[str, float]) -> np.ndarray:
        """The CMA-ES vector of named values (unknown and fixed names are ignored, missing ones
        stay at the initial value)."""
        x = np.zeros(len(self))
        for name, value in values.items():
            if name in self._index:
                i = self._index[name]
                x[i] = (value - self.initial[i]) / self.scale[i]
        return x

    def describe_overrides(self, shown: int = 3) -> list[str]:
        """Lines for log.txt: the fixed, the narrowed and the started parameters (count, the first
        few)."""

        def listed(label: str, entries: list[str]) -> list[str]:
            if not entries:
                return []
            more = ", ..." if len(entries) > shown else ""
            return [f"{label}: {len(entries)}: " + ", ".join(entries[:shown]) + more]

        lines = listed(
            "fixed parameters (not optimized)",
            [f"{n} = {v:g}" for n, v in self.fixed.items() if n not in self.hold_names],
        )
        lines += listed(
            "held parameters (not optimized, at the value the run started from)",
            [f"{n} = {v:g}" for n, v in self.fixed.items() if n in self.hold_names],
        )
        on = sorted({e.extension for e in self.optimized if e.extension})
        if on:
            lines.append(f"controller features beyond the paper, optimized: {', '.join(on)}")
        lines += listed(
            "narrowed parameters", [f"{n} [{lo:g}, {hi:g}]" for n, (lo, hi) in self.narrowed.items()]
        )
        lines += listed(
            "start values (in place of the defaults and a warm start's)",
            [f"{n} = {v:g}" for n, v in self.starts.items()],
        )
        return lines

    @staticmethod
    def split(values: Mapping[str, float]) -> tuple[dict, dict]:
        """(simulation parameters by name, model vectors {kind: {name: value}})."""
        sim, model = {}, {kind: {} for kind in KINDS}
        for name, value in values.items():
            kind, _, rest = name.partition(".")
            if kind in KINDS:
                model[kind][rest] = value
            else:
                sim[name] = value
        return sim, model

    def structured(self, values: Mapping[str, float]) -> dict:
        """The layout of best.json: controller, initial_state, model."""
        sim, model = self.split(values)
        controller = {k: v for k, v in sim.items() if not k.startswith("init.")}
        initial = {k: v for k, v in sim.items() if k.startswith("init.")}
        return {"controller": controller, "initial_state": initial, "model": model}

    def flatten(self, structured: Mapping) -> dict[str, float]:
        flat = {}
        for section in ("controller", "initial_state"):
            flat.update(structured.get(section, {}))
        for kind, vals in structured.get("model", {}).items():
            for name, v in vals.items():
                flat[f"{kind}.{name}"] = v
        return flat
