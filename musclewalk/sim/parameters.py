"""Simulation parameter files (``--params P.json``): controller parameters and initial-state
parameters by name. Accepted layouts: ``{"controller": {...}, "initial_state": {...}}``, a flat
``{name: value}``, or an optimizer's ``best.json`` (same keys under ``"parameters"``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

from ..constants import CONTROL_INTERVAL
from ..control.params import ParameterError, controller_parameter_specs
from ..io_checks import read_json, read_json_object
from ..model.metadata import ModelMeta
from .bridge import control_model_from_meta
from .scenario import INITIAL_STATE_SPECS


def split_parameters(values: Mapping[str, float], control_model, source: str = "parameters"):
    """(controller params, initial-state params); unknown, NaN or out-of-bounds values raise."""
    specs = {s.name: s for s in controller_parameter_specs(control_model)}
    init_specs = {s.name: s for s in INITIAL_STATE_SPECS}
    controller, initial = {}, {}
    for name, value in values.items():
        spec = specs.get(name) or init_specs.get(name)
        if spec is None:
            raise ParameterError(f"{source}: {name}: unknown parameter")
        (controller if name in specs else initial)[name] = spec.check(value, source)
    return controller, initial


def read_parameter_sections(path) -> tuple[str | None, dict]:
    """(creature or None, {"controller", "initial_state", "model"}) of a parameter file in any
    accepted layout; a flat file's names all land in "controller". Structural errors raise
    ParameterError naming the file and key."""
    path = Path(path)
    data = read_json_object(path, ParameterError, "parameter file")
    creature = data.get("creature") if isinstance(data.get("creature"), str) else None
    prefix = ""
    if "parameters" in data:
        if not isinstance(data["parameters"], dict):
            raise ParameterError(f"{path}: parameters: expected an object")
        data, prefix = data["parameters"], "parameters."
    sections = {"controller": {}, "initial_state": {}, "model": {}}
    for key, value in data.items():
        if key in sections:
            if not isinstance(value, dict):
                raise ParameterError(f"{path}: {prefix}{key}: expected an object")
            sections[key].update(value)
        elif isinstance(value, dict):
            raise ParameterError(f"{path}: {prefix}{key}: unexpected section")
        elif key != "creature":
            sections["controller"][key] = value
    for kind, vals in sections["model"].items():
        if not isinstance(vals, dict):
            raise ParameterError(f"{path}: {prefix}model.{kind}: expected an object")
    return creature, sections


def parameter_file_speed(path) -> float | None:
    """The target speed (m/s) a parameter file says it was made for: an optimizer's best.json
    has it at its top level (``speed``). None when the file gives none or no positive number;
    ParameterError naming the file when it cannot be read."""
    data = read_json(path, ParameterError, "parameter file")
    speed = data.get("speed") if isinstance(data, dict) else None
    if isinstance(speed, bool) or not isinstance(speed, (int, float)):
        return None
    return float(speed) if math.isfinite(speed) and speed > 0 else None


def load_parameter_file(path) -> dict[str, float]:
    """Controller and initial-state values by name (routing/properties/passive gains live in the
    .osim itself, so a file's model section is not used here)."""
    _, sections = read_parameter_sections(path)
    return {**sections["controller"], **sections["initial_state"]}


def check_parameter_file(
    path,
    meta: ModelMeta,
    model_tree,
    control_model,
    fill_defaults: bool = False,
    model_source: str = "the model",
) -> dict:
    """The controller and initial-state values of a parameter file, checked against the model it
    is to drive: the file's creature must be the model's; a file with a model section (an
    optimizer's best.json) must carry the routing, muscle properties and passive gains the model
    has (they live in the .osim: a best.json simulated on the template it started from silently
    dropped them); every controller and initial-state parameter must be given unless
    ``fill_defaults``, but for those of a controller feature beyond the paper (missing: off).
    ParameterError names the file and key."""
    from ..model.vectors import KINDS, ModelVectors

    creature, sections = read_parameter_sections(path)
    if creature is not None and creature != meta.creature:
        raise ParameterError(
            f"{path}: creature: the parameters are of '{creature}', the model is '{meta.creature}'"
        )
    values = {**sections["controller"], **sections["initial_state"]}
    split_parameters(values, control_model, str(path))
    if sections["model"]:
        vectors = ModelVectors(meta)
        for kind in KINDS:
            given = sections["model"].get(kind, {})
            have = vectors.read_values(model_tree, kind)
            for name, value in given.items():
                if name not in have:
                    raise ParameterError(f"{path}: model.{kind}.{name}: not a parameter of {model_source}")
                if not isinstance(value, (int, float)) or abs(float(value) - have[name]) > 1e-6:
                    raise ParameterError(
                        f"{path}: model.{kind}.{name}: {value!r} differs from {model_source} "
                        f"({have[name]:.6g}); these parameters belong to the model their "
                        "optimization wrote (its optimized.osim)"
                    )
    if not fill_defaults:
        names = [sp.name for sp in controller_parameter_specs(control_model) if not sp.extension] + [
            sp.name for sp in INITIAL_STATE_SPECS
        ]
        missing = [n for n in names if n not in values]
        if missing:
            raise ParameterError(
                f"{path}: {missing[0]}: missing ({len(missing)} of {len(names)} "
                "controller and initial-state parameters are); --fill-defaults "
                "uses the defaults for missing ones"
            )
    return values


def load_run_parameters(
    path: Path | str | None,
    meta: ModelMeta,
    model: Path | str,
    control_interval: float = CONTROL_INTERVAL,
    *,
    fill_defaults: bool = False,
) -> dict[str, float]:
    """The controller and initial-state values a run of ``model`` (an .osim whose metadata is
    ``meta``) takes from the parameter file ``path``, checked against that model and the
    controller at ``control_interval`` (`check_parameter_file`; ``fill_defaults``: missing
    parameters take their defaults). No file (None): {}, every parameter at its default.
    ParameterError names the file and key."""
    if not path:
        return {}
    from ..model.vectors import parse_osim

    return check_parameter_file(
        path,
        meta,
        parse_osim(model),
        control_model_from_meta(meta, control_interval),
        fill_defaults=fill_defaults,
        model_source=str(model),
    )
