"""The optimized parameter vector (Table 1): controller (state transition, target features,
feedback, constant excitations), initial state, and the model's muscle routing, muscle
properties and passive gains.

CMA-ES works in a normalized space where each coordinate is (value - initial) / scale with
scale = (upper - lower) / SCALE_DIVISOR, so the paper's step size sigma = 1 explores a tenth
of every parameter's range; bounds are handled by cma's bound transform. The initial mean is
the template's default set (x = 0), or a warm start.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

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


class ParameterSpace:
    def __init__(self, meta: ModelMeta, control_model):
        entries = controller_parameter_specs(control_model) + list(INITIAL_STATE_SPECS)
        vectors = ModelVectors(meta)
        for kind in KINDS:
            entries += [
                model_parameter_spec(kind, name, default)
                for name, default in zip(vectors.names(kind), vectors.defaults(kind))
            ]
        self.entries: list[ParamSpec] = entries
        self.names = [e.name for e in entries]
        self._index = {n: i for i, n in enumerate(self.names)}
        self.initial = np.array([e.default for e in entries])
        self.scale = np.array([(e.upper - e.lower) / SCALE_DIVISOR for e in entries])
        self.lower_x = (np.array([e.lower for e in entries]) - self.initial) / self.scale
        self.upper_x = (np.array([e.upper for e in entries]) - self.initial) / self.scale

    def __len__(self) -> int:
        return len(self.entries)

    def group_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            out[e.group] = out.get(e.group, 0) + 1
        return out

    def values(self, x: np.ndarray) -> dict[str, float]:
        v = self.initial + np.clip(x, self.lower_x, self.upper_x) * self.scale
        lo = np.array([e.lower for e in self.entries])
        hi = np.array([e.upper for e in self.entries])
        v = np.clip(v, lo, hi)
        return dict(zip(self.names, v.tolist()))

    def x_from_values(self, values: Mapping[str, float]) -> np.ndarray:
        x = np.zeros(len(self))
        for name, value in values.items():
            if name in self._index:
                i = self._index[name]
                x[i] = (value - self.initial[i]) / self.scale[i]
        return x

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
