"""Joint moments and powers of a trial, by inverse dynamics, in Plug-in Gait's convention.

OpenSim's InverseDynamicsTool takes the trial's coordinates file and its ground reaction forces
(the ExternalLoads file), with every force element of the model excluded: its generalized forces
are then the net moments that muscles, passive structures and joint limits provide at each
coordinate, as a gait lab's inverse dynamics measures them. For the comparison with normative
data (Wang et al. 2012 compare moments as well as angles) each leg joint's moment is read about
the clinical axis of its angle and given as Plug-in Gait gives it: the internal moment per kg of
body mass, extensor (hip, knee), abductor (hip) and plantarflexor (ankle) positive. Which of a
joint's coordinates carries a clinical angle, and with which sign, is found from the trial
itself (the coordinate that follows the angle, from the segments' orientations, most closely),
so that any creature's legs are read the same way. Joint power is the sum over the joint's
rotational coordinates of moment times angular velocity, per kg, generation positive.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..constants import GRAVITY
from .reference import KINETICS

MIN_ANGLE_CORRELATION = 0.8  # a coordinate that follows a clinical angle less closely reads nothing
LEG_JOINTS = ("hip", "knee", "ankle")  # the joints above the thigh, shank and foot of leg_segments


class KineticsError(RuntimeError):
    """Inverse dynamics could not run on a trial (the message names the file)."""


def inverse_dynamics(model, coordinates_path, loads_path, lowpass_hz: float | None = None):
    """A DataFrame (time, ``<coordinate>_moment`` / ``_force``) of the generalized forces that
    reproduce the coordinates of ``coordinates_path`` under the external loads of ``loads_path``,
    every force element of ``model`` excluded; ``lowpass_hz``: the tool's low-pass filter of the
    coordinates (None: none)."""
    from ..opensim_env import import_opensim
    from .gait import read_storage

    osim = import_opensim()
    for path, what in ((coordinates_path, "coordinates file"), (loads_path, "ExternalLoads file")):
        if not Path(path).is_file():
            raise KineticsError(f"{path}: {what} not found")
    with tempfile.TemporaryDirectory(prefix="musclewalk-id-") as tmp:
        tool = osim.InverseDynamicsTool()
        tool.setModel(model)
        tool.setCoordinatesFileName(str(Path(coordinates_path).resolve()))
        tool.setExternalLoadsFileName(str(Path(loads_path).resolve()))
        excluded = osim.ArrayStr()
        excluded.append("All")
        tool.setExcludedForces(excluded)
        tool.setLowpassCutoffFrequency(-1.0 if lowpass_hz is None else float(lowpass_hz))
        table = read_storage(coordinates_path)
        tool.setStartTime(float(table["time"].iloc[0]))
        tool.setEndTime(float(table["time"].iloc[-1]))
        tool.setResultsDir(tmp)
        tool.setOutputGenForceFileName("inverse_dynamics.sto")
        try:
            with _stdout_silenced():  # the tool prints the model's summary to stdout
                ok = tool.run()
        except RuntimeError as exc:
            raise KineticsError(f"{coordinates_path}: inverse dynamics failed: {exc}") from None
        out = Path(tmp) / "inverse_dynamics.sto"
        if not ok or not out.is_file():
            raise KineticsError(f"{coordinates_path}: inverse dynamics wrote no result")
        return read_storage(out)


@contextlib.contextmanager
def _stdout_silenced():
    """File descriptor 1 to /dev/null (OpenSim writes through C++'s std::cout)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def leg_joint_coordinates(model, segments: dict) -> dict:
    """{(side, joint): [rotational coordinate names]} of the joints whose child is a leg's thigh
    (hip), shank (knee) and foot (ankle) (segments: gait.leg_segments)."""
    child_of = {}
    joints = model.getJointSet()
    for i in range(joints.getSize()):
        j = joints.get(i)
        names = [
            j.get_coordinates(k).getName()
            for k in range(j.numCoordinates())
            if j.get_coordinates(k).getMotionType() == 1  # rotational
        ]
        child_of[j.getChildFrame().findBaseFrame().getName()] = names
    return {
        (side, joint): child_of.get(body, [])
        for side in ("r", "l")
        for joint, body in zip(LEG_JOINTS, segments[side])
    }


def clinical_kinetics(trial, generalized, coordinates, joint_coordinates: dict) -> tuple[dict, dict]:
    """({(side, variable): (n,) on trial.time}, {(side, variable): how it was read}) of
    reference.KINETICS from the generalized forces (inverse_dynamics) and the coordinates (a
    DataFrame in model units, rad) they came from."""
    time = generalized["time"].to_numpy(float)
    q_time = coordinates["time"].to_numpy(float)
    mass = trial.body_mass
    values, how = {}, {}
    for side in ("r", "l"):
        for variable, spec in KINETICS.items():
            names = joint_coordinates.get((side, spec.joint), [])
            names = [n for n in names if f"{n}_moment" in generalized and n in coordinates]
            if not names:
                how[(side, variable)] = f"no rotational coordinate at the {spec.joint}"
                continue
            if spec.angle is None:  # joint power: sum of moment x angular velocity
                power = np.zeros_like(time)
                for n in names:
                    q = np.interp(time, q_time, coordinates[n].to_numpy(float))
                    power += generalized[f"{n}_moment"].to_numpy(float) * np.gradient(q, time)
                values[(side, variable)] = np.interp(trial.time, time, power / mass)
                how[(side, variable)] = "+".join(names)
                continue
            angle = trial.angles.get((side, spec.angle))
            if angle is None:
                continue
            best, best_r = None, 0.0
            for n in names:
                q = np.interp(trial.time, q_time, coordinates[n].to_numpy(float))
                if np.std(q) < 1e-9 or np.std(angle) < 1e-9:
                    continue
                r = float(np.corrcoef(q, angle)[0, 1])
                if abs(r) > abs(best_r):
                    best, best_r = n, r
            if best is None or abs(best_r) < MIN_ANGLE_CORRELATION:
                how[(side, variable)] = (
                    f"no coordinate of the {spec.joint} follows {spec.angle} (best r {best_r:.2f})"
                )
                continue
            # the moment about the clinical angle's positive direction, then the convention's sign
            moment = np.sign(best_r) * generalized[f"{best}_moment"].to_numpy(float)
            values[(side, variable)] = np.interp(trial.time, time, spec.sign * moment / mass)
            how[(side, variable)] = f"{'' if best_r > 0 else '-'}{best} (r {best_r:.3f} with {spec.angle})"
    return values, how


def add_kinetics(trial, model, coordinates_path, loads_path, segments: dict, lowpass_hz=None) -> None:
    """Sets ``trial.kinetics`` and records in ``trial.source['kinetics']`` how each variable was
    read and the inverse dynamics' residual forces at the root (a check of the data's consistency:
    the mean |residual force| in body weights); on failure the reason instead, leaving the trial's
    kinematics usable."""
    from .gait import coordinate_rows, read_storage

    try:
        generalized = inverse_dynamics(model, coordinates_path, loads_path, lowpass_hz)
        table = read_storage(coordinates_path)
        rows = coordinate_rows(model, table, bool(table.attrs.get("degrees")), coordinates_path)
    except (KineticsError, ValueError, OSError) as exc:
        trial.source["kinetics"] = {"error": str(exc)}
        return
    import pandas as pd

    coordinates = {"time": table["time"].to_numpy(float)}
    coordinates.update({c.getName(): rows.values[:, i] for i, c in enumerate(rows.coordinates)})

    values, how = clinical_kinetics(
        trial, generalized, pd.DataFrame(coordinates), leg_joint_coordinates(model, segments)
    )
    trial.kinetics = values
    forces = [c for c in generalized.columns if c.endswith("_force")]
    weight = trial.body_mass * GRAVITY
    residual = (
        float(np.mean(np.linalg.norm(generalized[forces].to_numpy(float), axis=1)) / weight)
        if forces
        else None
    )
    trial.source["kinetics"] = {
        "method": "OpenSim InverseDynamicsTool, every model force excluded, ground reaction forces applied",
        "lowpass_hz": lowpass_hz,
        "read_as": {f"{s}.{v}": text for (s, v), text in how.items()},
        "mean_root_residual_force_bw": residual,
    }
