"""Files a user opens after a simulation: states.sto (OpenSim states, loads with the model in
the OpenSim GUI), kinematics.mot (coordinates, degrees), grf.mot + grf_loads.xml (ground reaction
forces as ExternalLoads the OpenSim tools accept: per foot the contact points' summed force at
their centre of pressure and their moment about it, the free moment), muscles.csv,
joint_limits.csv, controller.csv, summary.json.
Everything is written into a temporary folder first, which replaces the output folder as a whole
when complete: an earlier run's folder stays intact until then, and none of its files (nor files
written into it later, e.g. an analysis) remain next to the new ones.

muscles.csv columns per muscle: excitation, activation, force (tendon, N), norm_fiber_length,
fiber_velocity (m/s, negative = shortening), fiber_force and active_fiber_force (N). With ideal
muscles (F = u F_max, models/physics.yaml ``muscles``) activation is the excitation applied, force,
fiber_force and active_fiber_force are u F_max, and the fibre length and velocity are empty (NaN).
joint_limits.csv: the generalized force of each joint limit (CoordinateLimitForce, the model's
ligaments; N m, 0 inside the limits) by its name in the model.
feedback_sources.npz: the feedback excitation of every control step before its neural delay,
split by where it comes from (``feedback``, float32 (steps, sources, muscles), the rows of
`Controller.feedback_by_source`), with ``time``, ``sources`` and ``muscles``; `musclewalk analyze`
reads it for ``excitation_sources``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from lxml import etree

from ..control import FEEDBACK_SOURCES
from ..model.metadata import ModelMeta
from .termination import MAX_HEADING_ERROR

FILES = (
    "states.sto",
    "kinematics.mot",
    "grf.mot",
    "grf_loads.xml",
    "muscles.csv",
    "joint_limits.csv",
    "controller.csv",
    "feedback_sources.npz",
    "summary.json",
)


def write_storage(
    path: Path, name: str, labels: Sequence[str], time: np.ndarray, data: np.ndarray, in_degrees: bool
) -> None:
    """OpenSim Storage text format (readable by Storage, TimeSeriesTable and the GUI)."""
    rows, cols = data.shape
    with open(path, "w") as fh:
        fh.write(f"{name}\nversion=1\nnRows={rows}\nnColumns={cols + 1}\n")
        fh.write(f"inDegrees={'yes' if in_degrees else 'no'}\nendheader\n")
        fh.write("time\t" + "\t".join(labels) + "\n")
        block = np.column_stack([time, data])
        np.savetxt(fh, block, fmt="%.8g", delimiter="\t")


def read_storage(path) -> pd.DataFrame:
    """A .sto / .mot file in OpenSim's Storage text format (as `write_storage` writes it) as a
    table with a "time" column; ``attrs["degrees"]`` is the header's inDegrees flag."""
    path = Path(path)
    lines = path.read_text().splitlines()
    end = next((i for i, line in enumerate(lines) if line.strip() == "endheader"), None)
    if end is None:
        raise ValueError(f"{path}: no 'endheader' line, not an OpenSim storage file")
    degrees = any(line.strip() == "inDegrees=yes" for line in lines[:end])
    table = pd.read_csv(path, sep="\t", skiprows=end + 1)
    table.attrs["degrees"] = degrees
    return table


def write_outputs(out_dir, sim, result, scenario, extra_summary: Mapping | None = None) -> Path:
    """Every file of FILES for the recorded ``result`` of ``sim`` in ``scenario``, into a new
    folder that replaces ``out_dir`` as a whole once complete; summary.json holds the result's
    summary followed by ``extra_summary`` (e.g. `run_settings`). The folder written."""
    from ..io_checks import replace_folder

    rec = result.recording
    if rec is None or not rec.time:
        raise ValueError("the simulation was run without recording")
    return replace_folder(
        Path(out_dir), lambda tmp: _write_all(tmp, sim, result, scenario, extra_summary or {})
    )


def run_settings(
    scenario,
    parameters=None,
    *,
    heading_deg: float = 0.0,
    turn_rate_deg: float = 0.0,
    seed: int = 0,
    terrain_slope_deg: float | None = None,
    integrator_accuracy: float | None = None,
    integrator_fixed_step: float | None = None,
) -> dict:
    """The settings of a run that summary.json records beside its result (``extra_summary`` of
    `write_outputs`): the parameter file (None: "defaults"), the scenario's pushes (given and
    random), the initial heading (deg) and turning velocity (deg/s) as given, the seed and the
    terrain's maximum slope (deg; None: flat ground) and the integrator accuracy used; the fixed
    integrator step (s) and the heading rule's limit (deg) only when a run had them."""
    settings = {
        "parameters": str(Path(parameters).absolute()) if parameters else "defaults",
        "pushes": [p.__dict__ for p in scenario.pushes],
        "heading_deg": heading_deg,
        "turn_rate_deg_s": turn_rate_deg,
        "seed": seed,
        "terrain_max_slope_deg": terrain_slope_deg,
        "integrator_accuracy": integrator_accuracy,
        "assist": scenario.assist.as_dict() if scenario.assist else None,
    }
    if integrator_fixed_step is not None:
        settings["integrator_fixed_step"] = integrator_fixed_step
    if scenario.max_heading_error != MAX_HEADING_ERROR:
        settings["max_heading_error_deg"] = round(math.degrees(scenario.max_heading_error), 9)
    return settings


def summary_line(creature: str, summary: Mapping, out) -> str:
    """The one line `musclewalk simulate` prints for a run: how it ended, distance, mean forward
    speed and wall time (``summary``: SimulationResult.summary), and the folder written."""
    s = summary
    end = (
        f"terminated by {s['termination_reason']} at {s['simulated_time']:.2f} s"
        if s["terminated"]
        else f"ran the full {s['simulated_time']:.2f} s"
    )
    return (
        f"{creature}: {end}; distance {s['distance']:.2f} m, mean forward speed "
        f"{s['mean_forward_speed']:.2f} m/s; wall {s['wall_time']:.1f} s; wrote {out}"
    )


def _write_all(folder: Path, sim, result, scenario, extra_summary):
    rec = result.recording
    engine, meta = sim.engine, sim.meta
    time = np.array(rec.time)
    keep = np.array([s is not None for s in rec.states])
    states = np.array([s for s in rec.states if s is not None])
    state_names = engine.state_names()
    write_storage(folder / "states.sto", "states", state_names, time[keep], states, False)

    # coordinates in degrees (rotational) / metres (translational)
    column = {n: i for i, n in enumerate(state_names)}
    coord_labels, coord_cols, scale = [], [], []
    for c in engine.coordinates:
        path = c.getAbsolutePathString() + "/value"
        if path in column:
            coord_labels.append(c.getName())
            coord_cols.append(column[path])
            rotational = c.getMotionType() == 1
            scale.append(180.0 / math.pi if rotational else 1.0)
    kin = states[:, coord_cols] * np.array(scale)
    write_storage(folder / "kinematics.mot", "kinematics", coord_labels, time[keep], kin, True)

    forces, cops, torques = np.array(rec.foot_force), np.array(rec.foot_cop), np.array(rec.foot_torque)
    labels, blocks = [], []
    for foot, side in ((0, "r"), (1, "l")):
        labels += (
            [f"ground_force_{side}_v{a}" for a in "xyz"]
            + [f"ground_force_{side}_p{a}" for a in "xyz"]
            + [f"ground_torque_{side}_{a}" for a in "xyz"]
        )
        blocks += [forces[:, foot], cops[:, foot], torques[:, foot]]
    write_storage(folder / "grf.mot", "grf", labels, time, np.column_stack(blocks), False)
    _external_loads(folder / "grf_loads.xml", meta)

    names = [m.name for m in meta.muscles]
    muscles = {"time": time}
    exc, force = np.array(rec.excitation), np.array(rec.muscle_force)
    mstate = np.array(rec.muscle_state)  # (steps, 5, nm)
    for i, n in enumerate(names):
        muscles[f"{n}.excitation"] = exc[:, i]
        muscles[f"{n}.activation"] = mstate[:, 0, i]
        muscles[f"{n}.force"] = force[:, i]
        muscles[f"{n}.norm_fiber_length"] = mstate[:, 1, i]
        muscles[f"{n}.fiber_velocity"] = mstate[:, 2, i]
        muscles[f"{n}.fiber_force"] = mstate[:, 3, i]
        muscles[f"{n}.active_fiber_force"] = mstate[:, 4, i]
    pd.DataFrame(muscles).to_csv(folder / "muscles.csv", index=False, float_format="%.6g")
    limits = np.array(rec.limit_torque).reshape(len(time), len(engine.limit_names))
    pd.DataFrame({"time": time, **dict(zip(engine.limit_names, limits.T))}).to_csv(
        folder / "joint_limits.csv", index=False, float_format="%.6g"
    )
    pd.DataFrame(rec.controller).to_csv(folder / "controller.csv", index=False, float_format="%.6g")
    np.savez_compressed(
        folder / "feedback_sources.npz",
        time=time,
        sources=np.array(FEEDBACK_SOURCES),
        muscles=np.array(names),
        feedback=np.array(rec.feedback_sources, dtype=np.float32),
    )
    summary = {
        "model": str(Path(sim.engine.path).absolute()),  # found from any working directory
        "creature": meta.creature,
        **result.summary(scenario),
        **extra_summary,
    }
    (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


def _external_loads(path: Path, meta: ModelMeta) -> None:
    legs = meta.features.legs
    doc = etree.Element("OpenSimDocument", Version="40600")
    loads = etree.SubElement(doc, "ExternalLoads", name="grf")
    objects = etree.SubElement(loads, "objects")
    for side in "rl":
        ef = etree.SubElement(objects, "ExternalForce", name=f"ground_reaction_{side}")
        for tag, text in (
            ("applied_to_body", legs[side].foot),
            ("force_expressed_in_body", "ground"),
            ("point_expressed_in_body", "ground"),
            ("force_identifier", f"ground_force_{side}_v"),
            ("point_identifier", f"ground_force_{side}_p"),
            ("torque_identifier", f"ground_torque_{side}_"),
            ("data_source_name", "grf.mot"),
        ):
            etree.SubElement(ef, tag).text = text
    etree.SubElement(loads, "groups")
    etree.SubElement(loads, "datafile").text = "grf.mot"
    path.write_bytes(etree.tostring(doc, pretty_print=True, xml_declaration=True, encoding="UTF-8"))
