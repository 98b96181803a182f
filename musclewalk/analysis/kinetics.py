"""Joint moments and powers of a trial, by inverse dynamics, in Plug-in Gait's convention.

OpenSim's InverseDynamicsTool takes the trial's coordinates file and its ground reaction forces
(the ExternalLoads file), with every force element of the model excluded: its generalized forces
are then the net moments that muscles, passive structures and joint limits provide at each
coordinate, as a gait lab's inverse dynamics measures them. For the comparison with normative
data (Wang et al. 2012 compare moments as well as angles) each clinical moment is the
generalized force of the joint's coordinate whose motion follows the clinical angle (from the
segments' orientations, gait.py) most closely, with that coordinate's sign, so that any
creature's legs are read the same way; it is given as Plug-in Gait gives it: the internal moment
per kg of body mass, extensor (hip, knee), abductor (hip) and plantarflexor (ankle) positive.
Joint power is the sum over the joint's rotational coordinates of generalized force times
coordinate speed, per kg, generation positive; the speeds are the derivatives of the same
smoothing splines (and low-pass filter) the tool differentiates for its accelerations.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..constants import GRAVITY
from .compare import _pearson
from .reference import KINETICS

MIN_ANGLE_CORRELATION = 0.8  # a coordinate that follows a clinical angle less closely reads nothing
LEG_JOINTS = ("hip", "knee", "ankle")  # the joints above the thigh, shank and foot of leg_segments
SPLINE_DEGREE = 5  # InverseDynamicsTool's GCV splines of the coordinates


class KineticsError(RuntimeError):
    """Inverse dynamics could not run on a trial (the message names the files)."""


def inverse_dynamics(model, coordinates_path, loads_path, start: float, end: float, lowpass_hz=None):
    """A DataFrame (time, ``<coordinate>_moment`` / ``_force``) of the generalized forces that
    reproduce the coordinates of ``coordinates_path`` from ``start`` to ``end`` (s) under the
    external loads of ``loads_path``, every force element of ``model`` excluded; ``lowpass_hz``:
    the tool's low-pass filter of the coordinates (None: none). The tool runs on a copy of
    ``model`` (a failed run leaves its external loads in the model it was given)."""
    from ..opensim_env import import_opensim
    from .gait import read_storage

    osim = import_opensim()
    where = f"{coordinates_path} with {loads_path}"
    for path, what in ((coordinates_path, "coordinates file"), (loads_path, "ExternalLoads file")):
        if not Path(path).is_file():
            raise KineticsError(f"{path}: {what} not found")
    with tempfile.TemporaryDirectory(prefix="musclewalk-id-") as tmp:
        copy = osim.Model(model)  # held here: the tool keeps a bare pointer to it
        tool = osim.InverseDynamicsTool()
        tool.setModel(copy)
        tool.setCoordinatesFileName(str(Path(coordinates_path).resolve()))
        tool.setExternalLoadsFileName(str(Path(loads_path).resolve()))
        excluded = osim.ArrayStr()
        excluded.append("All")
        tool.setExcludedForces(excluded)
        tool.setLowpassCutoffFrequency(-1.0 if lowpass_hz is None else float(lowpass_hz))
        tool.setStartTime(float(start))
        tool.setEndTime(float(end))
        tool.setResultsDir(tmp)
        tool.setOutputGenForceFileName("inverse_dynamics.sto")
        printed = Path(tmp) / "opensim.out"
        try:
            # the tool prints the model's summary, and its errors, to C++'s std::cout
            with _stdout_to(printed):
                ok = tool.run()
        except RuntimeError as exc:
            raise KineticsError(f"{where}: inverse dynamics failed: {_errors(printed) or exc}") from None
        out = Path(tmp) / "inverse_dynamics.sto"
        if not ok or not out.is_file():
            raise KineticsError(f"{where}: inverse dynamics wrote no result {_errors(printed)}".rstrip())
        return read_storage(out)


@contextlib.contextmanager
def _stdout_to(path: Path):
    """File descriptor 1 into ``path`` (OpenSim writes through C++'s std::cout and its log)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(path, "wb") as sink:
            os.dup2(sink.fileno(), 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _errors(printed: Path) -> str:
    """OpenSim's error lines among what it printed ('' for none)."""
    try:
        lines = printed.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "; ".join(line.strip() for line in lines if "[error]" in line)


def coordinate_splines(model, coordinates_path, names, times, lowpass_hz=None) -> tuple[dict, dict]:
    """({name: (n,) values}, {name: (n,) speeds}) at ``times`` of the named coordinates as
    InverseDynamicsTool fits them: padded and low-pass filtered when ``lowpass_hz`` is given, in
    radians (m for translations), GCV splines of degree SPLINE_DEGREE (the names the file lacks are
    left out; ``names`` None: every column)."""
    from ..opensim_env import import_opensim

    osim = import_opensim()
    storage = osim.Storage(str(coordinates_path))
    if lowpass_hz is not None:
        storage.pad(storage.getSize() // 2)
        storage.lowpassIIR(float(lowpass_hz))
    if storage.isInDegrees():
        model.getSimbodyEngine().convertDegreesToRadians(storage)
    splines = osim.GCVSplineSet(SPLINE_DEGREE, storage)
    first = osim.StdVectorInt()
    first.append(0)
    at = [osim.Vector(1, float(t)) for t in times]
    values, speeds = {}, {}
    for i in range(splines.getSize()):
        spline = splines.get(i)
        if names is None or spline.getName() in names:
            values[spline.getName()] = np.array([spline.calcValue(x) for x in at])
            speeds[spline.getName()] = np.array([spline.calcDerivative(first, x) for x in at])
    return values, speeds


def coordinate_speeds(model, coordinates_path, names, times, lowpass_hz=None) -> dict:
    """{name: (n,) rad/s at ``times``} of the named coordinates as InverseDynamicsTool
    differentiates them (`coordinate_splines`)."""
    return coordinate_splines(model, coordinates_path, names, times, lowpass_hz)[1]


def joint_coordinates(model, segments: dict) -> dict:
    """{(side, joint): [rotational coordinate names]} of the joints whose child is a leg's thigh
    (hip), shank (knee) and foot (ankle), and {("root", "root"): [every coordinate]} of the joint
    of the root body (segments: gait.leg_segments)."""
    from .gait import model_joints

    of_child = {
        child.getName(): [j.get_coordinates(k) for k in range(j.numCoordinates())]
        for j, _, child in model_joints(model)
    }
    out = {
        (side, joint): [c.getName() for c in of_child.get(body, []) if c.getMotionType() == 1]
        for side in ("r", "l")
        for joint, body in zip(LEG_JOINTS, segments[side])
    }
    out[("root", "root")] = [c.getName() for c in of_child.get(segments["root"], [])]
    return out


def clinical_kinetics(trial, generalized, coordinates, speeds, joints: dict) -> tuple[dict, dict]:
    """({(side, variable): (n,) on trial.time}, {(side, variable): how it was read}) of
    reference.KINETICS from the generalized forces (inverse_dynamics), the coordinates they came
    from (a mapping with "time" and each coordinate in rad) and the coordinates' speeds (name ->
    (m,) rad/s on the generalized forces' times)."""
    time = generalized["time"].to_numpy(float)
    q_time = np.asarray(coordinates["time"], float)
    mass = trial.body_mass
    values, how = {}, {}
    for side in ("r", "l"):
        taken = {}  # joint -> coordinates already read for another of its angles
        for variable, spec in KINETICS.items():
            names = [n for n in joints.get((side, spec.joint), []) if f"{n}_moment" in generalized]
            if not names:
                how[(side, variable)] = f"no rotational coordinate at the {spec.joint}"
                continue
            if spec.angle is None:  # joint power
                if not all(n in speeds for n in names):
                    missing = ", ".join(n for n in names if n not in speeds)
                    how[(side, variable)] = f"no speed of {missing}"
                    continue
                power = sum(generalized[f"{n}_moment"].to_numpy(float) * speeds[n] for n in names)
                values[(side, variable)] = np.interp(trial.time, time, power / mass)
                how[(side, variable)] = "+".join(names)
                continue
            angle = trial.angles.get((side, spec.angle))
            if angle is None:
                how[(side, variable)] = f"the trial has no {spec.angle}"
                continue
            if np.std(angle) < 1e-9:
                how[(side, variable)] = f"{spec.angle} does not vary: nothing to read its moment about"
                continue
            best, best_r = None, 0.0
            for n in names:
                if n in taken.get(spec.joint, ()) or n not in coordinates:
                    continue
                r = _pearson(np.interp(trial.time, q_time, np.asarray(coordinates[n], float)), angle)
                if r is not None and abs(r) > abs(best_r):
                    best, best_r = n, r
            if best is None or abs(best_r) < MIN_ANGLE_CORRELATION:
                how[(side, variable)] = (
                    f"no coordinate of the {spec.joint} follows {spec.angle} (best r {best_r:.2f})"
                )
                continue
            taken.setdefault(spec.joint, set()).add(best)
            # the moment toward the clinical angle's positive direction, then the convention's sign
            moment = np.sign(best_r) * generalized[f"{best}_moment"].to_numpy(float)
            values[(side, variable)] = np.interp(trial.time, time, spec.sign * moment / mass)
            how[(side, variable)] = f"{'' if best_r > 0 else '-'}{best} (r {best_r:.3f} with {spec.angle})"
    return values, how


def root_residuals(generalized, root_coordinates: list, mass: float) -> dict:
    """The mean magnitude of the generalized forces left at the root's coordinates: what the
    external loads and the motion do not account for (0 for consistent data)."""
    forces = [f"{n}_force" for n in root_coordinates if f"{n}_force" in generalized]
    moments = [f"{n}_moment" for n in root_coordinates if f"{n}_moment" in generalized]

    def mean_norm(columns, scale):
        if not columns:
            return None
        return float(np.mean(np.linalg.norm(generalized[columns].to_numpy(float), axis=1)) / scale)

    return {
        "mean_root_residual_force_bw": mean_norm(forces, mass * GRAVITY),
        "mean_root_residual_moment_Nm_per_kg": mean_norm(moments, mass),
    }


def add_kinetics(trial, model, coordinates_path, loads_path, segments: dict, lowpass_hz=None) -> None:
    """Sets ``trial.kinetics`` and records in ``trial.source['kinetics']`` how each variable was
    read and the inverse dynamics' residuals at the root (root_residuals); on failure the reason
    instead, leaving the trial's kinematics usable."""
    from .gait import GaitError, coordinate_rows, read_storage

    try:
        table = read_storage(coordinates_path)
        rows = coordinate_rows(model, table, bool(table.attrs.get("degrees")), coordinates_path)
        time = table["time"].to_numpy(float)
        generalized = inverse_dynamics(model, coordinates_path, loads_path, time[0], time[-1], lowpass_hz)
        joints = joint_coordinates(model, segments)
        legs = {n for key, names in joints.items() if key[0] != "root" for n in names}
        id_time = generalized["time"].to_numpy(float)
        speeds = coordinate_speeds(model, coordinates_path, legs, id_time, lowpass_hz)
    except (KineticsError, GaitError, ValueError, OSError, RuntimeError) as exc:
        trial.source["kinetics"] = {"error": str(exc)}
        return
    coordinates = {"time": time} | {c.getName(): rows.values[:, i] for i, c in enumerate(rows.coordinates)}
    values, how = clinical_kinetics(trial, generalized, coordinates, speeds, joints)
    trial.kinetics = values
    trial.source["kinetics"] = {
        "method": "OpenSim InverseDynamicsTool, every model force excluded, ground reaction forces applied",
        "lowpass_hz": lowpass_hz,
        "read_as": {f"{s}.{v}": text for (s, v), text in how.items()},
        **root_residuals(generalized, joints[("root", "root")], trial.body_mass),
    }
